"""Events in audio besides onsets: digital-silence runs and clicks.

* **Silence runs**: stretches where every channel is exactly zero (digital silence: a muted bus, a
  gap in a recording) or, with `threshold_dbfs`, below that sample level. Dither at −90 dBFS is
  not digital silence; pass a threshold if it should count.
* **Clicks**: single-sample spikes, short bursts and waveform discontinuities (dropped or
  repeated samples). Music is predictable from its recent past, a click is not: each 85 ms block
  gets its own 20th-order linear predictor (autocorrelation method), and a click is where the
  prediction residual exceeds `threshold` × the residual's robust local scale (1.4826 × median
  absolute value over ±50 ms). Hits within 1 ms are one click.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_toeplitz
from scipy.ndimage import median_filter

from verifiers.measure.audio_io import check_signal


@dataclass(frozen=True)
class SilenceRun:
    start_s: float
    end_s: float
    start: int  # first silent sample
    end: int  # one past the last silent sample

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


def silence_runs(samples: np.ndarray, sample_rate_hz: int, *, min_s: float = 0.0,
                 threshold_dbfs: float | None = None) -> list[SilenceRun]:
    """Runs where all channels are silent: exact zeros, or |x| ≤ threshold if one is given."""
    x = check_signal(samples, "silence input")
    peak = np.abs(x) if x.ndim == 1 else np.abs(x).max(axis=1)
    limit = 0.0 if threshold_dbfs is None else 10.0 ** (threshold_dbfs / 20.0)
    quiet = peak <= limit
    edges = np.diff(np.concatenate([[0], quiet.astype(np.int8), [0]]))
    starts = np.nonzero(edges == 1)[0]
    ends = np.nonzero(edges == -1)[0]
    min_n = round(min_s * sample_rate_hz)
    return [SilenceRun(start_s=s / sample_rate_hz, end_s=e / sample_rate_hz, start=int(s), end=int(e))
            for s, e in zip(starts, ends, strict=True) if e - s >= max(1, min_n)]


@dataclass(frozen=True)
class Click:
    time_s: float
    sample: int
    strength: float  # peak residual in units of the local residual scale


_ORDER = 20
_BLOCK_S = 0.085


def _lpc(block: np.ndarray, order: int) -> np.ndarray:
    """[1, a1..ap] of the autocorrelation-method predictor for a Hann-windowed block."""
    w = block * np.hanning(len(block))
    r = np.correlate(w, w, mode="full")[len(w) - 1: len(w) + order]
    if r[0] <= 0:
        return np.concatenate([[1.0], np.zeros(order)])
    r = r.copy()
    r[0] *= 1.0 + 1e-9  # white-noise correction keeps the system well conditioned
    a = solve_toeplitz(r[:order], -r[1: order + 1])
    return np.concatenate([[1.0], a])


def prediction_residual(mono: np.ndarray, sample_rate_hz: int, *, order: int = _ORDER) -> np.ndarray:
    """Blockwise linear-prediction residual (same length as the input)."""
    x = check_signal(mono, "click input")
    block = max(order * 8, round(_BLOCK_S * sample_rate_hz))
    out = np.zeros_like(x)
    for start in range(0, len(x), block):
        end = min(len(x), start + block)
        lo = max(0, start - block // 2)
        a = _lpc(x[lo: min(len(x), end + block // 2)], order)
        seg = np.concatenate([np.zeros(max(0, order - start)), x[max(0, start - order): end]])
        out[start:end] = np.convolve(seg, a)[order: order + end - start]
    out[:order] = 0.0  # no history to predict from: the signal's own start is not a click
    return out


def detect_clicks(mono: np.ndarray, sample_rate_hz: int, *, threshold: float = 12.0,
                  floor_dbfs: float = -100.0) -> list[Click]:
    """Clicks in a mono signal, in time order (see module docstring)."""
    x = check_signal(mono, "click input")
    if x.ndim != 1:
        raise ValueError("detect_clicks wants a mono 1-D signal")
    e = np.abs(prediction_residual(x, sample_rate_hz))
    hop = max(1, sample_rate_hz // 1000)  # local scale on 1 ms steps, ±50 ms
    n_hops = len(e) // hop + 1
    padded = np.zeros(n_hops * hop)
    padded[: len(e)] = e
    med_hop = np.median(padded.reshape(n_hops, hop), axis=1)
    scale_hop = 1.4826 * median_filter(med_hop, size=101, mode="nearest")
    scale = np.maximum(np.repeat(scale_hop, hop)[: len(e)], 10.0 ** (floor_dbfs / 20.0))
    z = e / scale
    hits = np.nonzero(z > threshold)[0]
    clicks: list[Click] = []
    gap = max(1, sample_rate_hz // 1000)
    i = 0
    while i < len(hits):
        j = i
        while j + 1 < len(hits) and hits[j + 1] - hits[j] <= gap:
            j += 1
        group = hits[i: j + 1]
        first = int(group[0])
        clicks.append(Click(time_s=first / sample_rate_hz, sample=first, strength=float(z[group].max())))
        i = j + 1
    return clicks
