"""Clicks: isolated discontinuities (an edit without a fade, a dropped or spiked sample).

A click is a sample where the second difference d2[n] = x[n+1] - 2x[n] + x[n-1] is much larger than
anywhere in its neighbourhood. Band-limited audio has a smooth d2 (noise included: among ~100
neighbours of white noise one is nearly always within 12 dB of the centre); a step or a one-sample
spike puts a d2 spike of the jump's size next to a quiet neighbourhood. The centre ±`guard` samples
are excluded from the neighbourhood, because one discontinuity spreads over three d2 samples.

A sharp attack from silence is not a click: the samples right after it are as large, so the
neighbourhood is. An abrupt file end is not seen here (no sample after it); check tails separately.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import maximum_filter1d

from verifiers.measure.audio_io import check_signal


@dataclass(frozen=True)
class Click:
    time_s: float
    sample: int
    size: float  # |d2| at the click (a step of J gives about J)
    ratio_db: float  # how far above the largest neighbouring |d2|


def detect_clicks(mono: np.ndarray, sample_rate_hz: int, *, ratio_db: float = 12.0, min_size: float = 0.01,
                  window_ms: float = 1.0, guard: int = 2) -> list[Click]:
    """Clicks in a mono signal, one per discontinuity, in time order.

    `ratio_db`: how far |d2| must stand above its neighbourhood; `min_size`: smallest |d2| reported
    (0.01 ≈ a -40 dBFS jump); `window_ms`: neighbourhood half-width.
    """
    x = check_signal(mono, "click input")
    if x.ndim != 1:
        raise ValueError(f"detect_clicks wants a mono 1-D signal, got shape {x.shape}")
    if len(x) < 3:
        return []
    d2 = np.zeros_like(x)
    d2[1:-1] = np.abs(x[2:] - 2 * x[1:-1] + x[:-2])
    w = max(guard + 2, round(window_ms * 1e-3 * sample_rate_hz))
    span = w - guard  # neighbourhood on each side, after the guard
    # left[n] = max d2[n-w .. n-guard-1]; right[n] = max d2[n+guard+1 .. n+w]
    mx = maximum_filter1d(d2, size=span, origin=0, mode="constant", cval=0.0)
    half = span // 2
    left = np.zeros_like(d2)
    right = np.zeros_like(d2)
    shift_l = guard + 1 + (span - 1 - half)  # centre of the window [n-w, n-guard-1]
    shift_r = guard + 1 + half
    left[shift_l:] = mx[:-shift_l] if shift_l < len(mx) else 0.0
    right[:-shift_r] = mx[shift_r:] if shift_r < len(mx) else 0.0
    neigh = np.maximum(left, right)
    ratio = 10 ** (ratio_db / 20.0)
    hits = np.nonzero((d2 >= min_size) & (d2 > ratio * np.maximum(neigh, 1e-12)))[0]
    out: list[Click] = []
    for n in hits:
        if out and n - out[-1].sample <= 2 * guard:
            if d2[n] > out[-1].size:
                out[-1] = Click(n / sample_rate_hz, int(n), float(d2[n]),
                                float(20 * np.log10(d2[n] / max(neigh[n], 1e-12))))
            continue
        out.append(Click(n / sample_rate_hz, int(n), float(d2[n]), float(20 * np.log10(d2[n] / max(neigh[n], 1e-12)))))
    return out
