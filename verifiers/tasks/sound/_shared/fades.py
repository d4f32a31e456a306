"""Fade and crossfade lengths at an edit, from the render and the two signals that meet there.

Around an edit the render is r ≈ g(t)·a + h(t)·b, with a the outgoing material and b the incoming
one, both known (b located by NCC in its source). Per 10 ms window a 2x2 least-squares solve gives
g and h; the normalised gain curve is fitted with a ramp of each common shape (linear, equal-power
sine, raised cosine) by grid search, and the best fit gives the fade's start and length. Fitting a
shape, rather than thresholding the noisy per-window gains, keeps a ±0.05 gain jitter from adding
frames to the length.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WINDOW_S = 0.01
SHAPES = {
    "linear": lambda u: u,
    "equal_power": lambda u: np.sin(np.pi / 2 * u),
    "raised_cosine": lambda u: 0.5 - 0.5 * np.cos(np.pi * u),
    "equal_power_mirror": lambda u: 1 - np.cos(np.pi / 2 * u),  # an equal-power fade-out, seen as 1 - g
}


@dataclass(frozen=True)
class Fade:
    start_s: float
    length_s: float
    shape: str
    rms_error: float


def window_gains(r: np.ndarray, a: np.ndarray, b: np.ndarray, rate_hz: int,
                 window_s: float = WINDOW_S) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(window centre times, g, h): per-window least squares r ≈ g·a + h·b (mono, same length)."""
    n = max(8, round(window_s * rate_hz))
    k = len(r) // n
    R, A, B = (x[: k * n].reshape(k, n) for x in (r, a, b))
    aa, bb, ab = (A * A).sum(1), (B * B).sum(1), (A * B).sum(1)
    ra, rb = (R * A).sum(1), (R * B).sum(1)
    det = aa * bb - ab * ab
    eps = 1e-12 * np.maximum(aa * bb, 1e-30)
    g = np.where(det > eps, (ra * bb - rb * ab) / np.where(det > eps, det, 1), np.where(aa > 1e-20, ra / np.maximum(aa, 1e-30), 0.0))
    h = np.where(det > eps, (rb * aa - ra * ab) / np.where(det > eps, det, 1), np.where(bb > 1e-20, rb / np.maximum(bb, 1e-30), 0.0))
    times = (np.arange(k) + 0.5) * n / rate_hz
    return times, g, h


def _grid(times: np.ndarray, y: np.ndarray, t0s: np.ndarray, lens: np.ndarray) -> Fade:
    best = Fade(float(times[0]), 0.0, "linear", float("inf"))
    d = times[None, None, :] - t0s[:, None, None]
    u = np.clip(d / np.maximum(lens[None, :, None], 1e-9), 0, 1)
    u = np.where(lens[None, :, None] == 0, (d >= 0).astype(float), u)
    for name, f in SHAPES.items():
        err = np.sqrt(np.mean((f(u) - y[None, None, :]) ** 2, axis=2))
        i, j = np.unravel_index(int(np.argmin(err)), err.shape)
        if err[i, j] < best.rms_error - 1e-12:
            best = Fade(float(t0s[i]), float(lens[j]), name, float(err[i, j]))
    return best


def fit_ramp(times: np.ndarray, gain: np.ndarray, *, rising: bool = True, max_len_s: float = 1.5) -> Fade:
    """Best (shape, start, length) for a 0→1 ramp (or 1→0 when not rising) through normalised gains.

    Coarse grid (20 ms) then a fine one (2.5 ms) around the coarse optimum.
    """
    y = np.clip(gain, -0.5, 1.5)
    if not rising:
        y = 1 - y
    coarse = _grid(times, y, np.arange(times[0] - max_len_s, times[-1] + 0.02, 0.02), np.arange(0.0, max_len_s + 0.02, 0.02))
    t0s = np.arange(coarse.start_s - 0.04, coarse.start_s + 0.04, 0.0025)
    lens = np.arange(max(0.0, coarse.length_s - 0.04), coarse.length_s + 0.04, 0.0025)
    fine = _grid(times, y, t0s, lens)
    return fine if fine.rms_error <= coarse.rms_error else coarse


def aligned_source(mix: np.ndarray, source: np.ndarray, t_mid_s: float, rate_hz: int, *, probe_s: float = 0.3,
                   min_ncc: float = 0.6) -> tuple[np.ndarray | None, float]:
    """`source` placed where the mix plays it around t_mid_s: (signal on the mix's time line, NCC).

    A 0.3 s probe of the mix at t_mid_s is located in the source by NCC; the source is then laid
    on the mix's time line at that offset (zeros outside it). None when the probe is not found.
    """
    from verifiers.measure.identify import match_at

    a = round((t_mid_s - probe_s / 2) * rate_hz)
    probe = mix[max(0, a): a + round(probe_s * rate_hz)]
    if len(probe) < 1000 or not np.any(probe):
        return None, 0.0
    half = len(source) / rate_hz / 2
    m = match_at(source, rate_hz, {"probe": probe}, half, search_s=half + 0.5, length_s=probe_s)[0]
    if m.ncc < min_ncc:
        return None, m.ncc
    shift = max(0, a) - round(m.offset_s * rate_hz)  # mix index = source index + shift
    out = np.zeros(len(mix))
    lo, hi = max(0, shift), min(len(mix), len(source) + shift)
    if hi > lo:
        out[lo:hi] = source[lo - shift: hi - shift]
    return out, m.ncc
