"""Where a source's audio sits in an export: normalised cross-correlation at a known offset."""

from __future__ import annotations

import numpy as np


def best_corr(out: np.ndarray, src: np.ndarray, offset_s: float, sr: int, lag_search_s: float = 0.1) -> float:
    """Peak normalised cross-correlation of `src` placed at output time (src_t - offset_s), searched
    ±lag_search_s (AAC priming and frame rounding shift audio by a few ms)."""
    from scipy import signal

    shift = round(-offset_s * sr)
    placed = np.zeros_like(out)
    a0, b0 = max(0, shift), max(0, -shift)
    n = min(len(out) - a0, len(src) - b0)
    if n <= sr // 4:
        return 0.0
    placed[a0:a0 + n] = src[b0:b0 + n]
    lag = int(lag_search_s * sr)
    seg_o, seg_p = out[a0:a0 + n], placed[a0:a0 + n]
    c = signal.correlate(seg_o, seg_p, mode="full", method="fft")
    mid = len(seg_p) - 1
    c = c[max(0, mid - lag): mid + lag + 1]
    denom = np.linalg.norm(seg_o) * np.linalg.norm(seg_p)
    return float(np.max(np.abs(c)) / denom) if denom > 0 else 0.0
