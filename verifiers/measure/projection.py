"""Audio routing by projection: how much of each known reference signal a recorded track holds.

The harness feeds known test signals (mic voice, desktop/music stems). A track is aligned to the
references by cross-correlation (one lag for all: they were fed together), then each 50 ms window
is solved by least squares, track ≈ Σ a_i·ref_i. The coefficients give per-window gains (T07's
ducking) and the energy share of each reference (T02's and T19's track routing). Pure numpy/scipy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.signal import fftconvolve


@dataclass
class Projection:
    lag_samples: int
    window_s: float
    coeffs: np.ndarray     # (windows, refs) least-squares gains
    shares: np.ndarray     # (windows, refs) energy share of each reference in the fit
    fit_ratio: np.ndarray  # (windows,) fitted energy / track energy (1 = fully explained)
    active: np.ndarray     # (windows,) window has energy in the track and references
    energy: np.ndarray     # (windows, refs) fitted energy of each reference
    track_energy: np.ndarray  # (windows,) energy of the track itself

    def explained(self) -> float:
        """Share of the track's energy (over active windows) that the references explain: near 1 for a
        recording of the fed signals, near 0 for noise or any other sound, whatever the shares say
        (shares are fractions of the *fitted* energy and split noise between references too)."""
        a = self.active
        return float(self.energy[a].sum() / (self.track_energy[a].sum() + 1e-20)) if a.any() else 0.0
    def total_share(self, i: int) -> float:
        """Share of reference i in the fitted energy over all active windows."""
        a = self.energy[self.active]
        return float(a[:, i].sum() / (a.sum() + 1e-20)) if a.size else 0.0

    def median_share(self, i: int) -> float:
        a = self.shares[self.active, i]
        return float(np.median(a)) if a.size else 0.0


def best_lag(track: np.ndarray, refs: list[np.ndarray], rate_hz: int, max_lag_s: float = 0.5) -> int:
    """Lag (samples, track later than refs when positive) maximising |xcorr| with any reference."""
    n = min(len(track), int(20 * rate_hz))
    t = track[:n]
    best, lag = 0.0, 0
    m = int(max_lag_s * rate_hz)
    for r in refs:
        rr = r[: n + m]
        if not np.any(rr) or not np.any(t):
            continue
        c = fftconvolve(t, rr[::-1], mode="full")  # index k -> lag k-(len(rr)-1)
        zero = len(rr) - 1
        seg = c[zero - m: zero + m + 1]
        k = int(np.argmax(np.abs(seg)))
        norm = np.sqrt(np.sum(t ** 2) * np.sum(rr[: n] ** 2)) + 1e-12
        if abs(seg[k]) / norm > best:
            best, lag = abs(seg[k]) / norm, k - m
    return lag


def shifted(ref: np.ndarray, lag: int, n: int) -> np.ndarray:
    """`ref` delayed by `lag` samples (advanced when negative), zero-padded/cut to length n: a
    reference laid on the track's timeline."""
    out = np.zeros(n)
    if lag >= 0:
        seg = ref[: max(0, n - lag)]
        out[lag: lag + len(seg)] = seg
    else:
        seg = ref[-lag: -lag + n]
        out[: len(seg)] = seg
    return out


def project(track: np.ndarray, refs: list[np.ndarray], rate_hz: int, window_s: float = 0.05,
            lag: int | None = None, per_ref_lag: bool = False) -> Projection:
    """Per-window least squares of the track on the (aligned) references.

    per_ref_lag aligns each reference on its own: sources captured independently (real OBS's Mic and
    Desktop Audio) start a few samples apart, and wideband noise decorrelates within a millisecond,
    so one common lag hides the second source of a mix."""
    lag = best_lag(track, refs, rate_hz) if lag is None else lag
    lags = [best_lag(track, [r], rate_hz) for r in refs] if per_ref_lag else [lag] * len(refs)
    n = len(track)
    aligned = [shifted(r, d, n) for r, d in zip(refs, lags, strict=True)]
    w = max(1, int(window_s * rate_hz))
    k = n // w
    T = track[: k * w].reshape(k, w)
    R = np.stack([a[: k * w].reshape(k, w) for a in aligned], axis=2)  # (k, w, refs)
    coeffs = np.zeros((k, len(refs)))
    shares = np.zeros((k, len(refs)))
    fit = np.zeros(k)
    energy = np.zeros((k, len(refs)))
    e_track = (T ** 2).sum(axis=1)
    e_refs = (R ** 2).sum(axis=1)
    floor = 1e-7 * w
    active = (e_track > floor) & (e_refs.max(axis=1) > floor)
    for i in np.nonzero(active)[0]:
        sol, *_ = np.linalg.lstsq(R[i], T[i], rcond=None)
        coeffs[i] = sol
        parts = (R[i] * sol) ** 2
        en = parts.sum(axis=0)
        shares[i] = en / (en.sum() + 1e-20)
        energy[i] = en
        fit[i] = float(((R[i] @ sol) ** 2).sum() / (e_track[i] + 1e-20))
    return Projection(lag, window_s, coeffs, shares, fit, active, energy, e_track)
