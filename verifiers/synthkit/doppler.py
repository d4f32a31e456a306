"""A source moving on a straight line past a listener: emission times, distance, Doppler by resampling.

The source passes at `closest_s` with perpendicular distance `distance_m`, at `speed_m_s`. A sample
heard at time t left the source at τ with t = τ + r(τ)/c (solved by fixed-point iteration; it
converges since v < c). Reading a static loop at τ gives the exact Doppler shift
f_obs = f·c / (c - v·cos θ): +7.9 % approaching and -6.8 % receding at 25 m/s.
"""

from __future__ import annotations

import numpy as np
from scipy.signal import butter, sosfilt, sosfilt_zi

C_M_S = 343.0


def distance_m(t_s: np.ndarray, closest_s: float, speed_m_s: float, d_m: float) -> np.ndarray:
    return np.hypot(speed_m_s * (np.asarray(t_s) - closest_s), d_m)


def emission_times(t_s: np.ndarray, closest_s: float, speed_m_s: float, d_m: float, c: float = C_M_S) -> np.ndarray:
    tau = np.asarray(t_s, dtype=float).copy()
    for _ in range(30):
        tau = t_s - distance_m(tau, closest_s, speed_m_s, d_m) / c
    return tau


def read_loop(loop: np.ndarray, times_s: np.ndarray, sr: int) -> np.ndarray:
    """The loop (tiled endlessly) read at fractional times (linear interpolation)."""
    pos = np.mod(times_s * sr, len(loop))
    i = np.floor(pos).astype(int)
    frac = pos - i
    return loop[i] * (1 - frac) + loop[(i + 1) % len(loop)] * frac


def varying_lowpass(x: np.ndarray, cutoff_hz: np.ndarray, sr: int, block: int = 480) -> np.ndarray:
    """2nd-order Butterworth low-pass whose cutoff follows `cutoff_hz` (one value per sample, per block)."""
    out = np.zeros_like(x)
    zi = None
    for a in range(0, len(x), block):
        fc = float(np.clip(np.mean(cutoff_hz[a: a + block]), 20, sr / 2.2))
        sos = butter(2, fc, fs=sr, output="sos")
        if zi is None:
            zi = sosfilt_zi(sos) * x[0]
        out[a: a + block], zi = sosfilt(sos, x[a: a + block], zi=zi)
    return out
