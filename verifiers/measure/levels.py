"""Windowed signal levels: mean power / RMS per video frame and a sliding short-window RMS curve.

One implementation for the sound scorers (T05's RMS curve, T10/T13's per-frame RMS, T20's per-frame
dBFS) instead of one cumulative-sum loop per task; each function keeps the exact arithmetic its
callers used, so scores do not move by a float.
"""

from __future__ import annotations

import numpy as np


def frame_power(mono: np.ndarray, rate_hz: float, fps: float) -> np.ndarray:
    """Mean square of each whole video frame of `mono` (frames at `rate_hz / fps` samples, floored)."""
    step = rate_hz / fps
    n = int(len(mono) // step)
    idx = (np.arange(n + 1) * step).astype(int)
    c = np.concatenate([[0.0], np.cumsum(mono * mono)])
    return (c[idx[1:]] - c[idx[:-1]]) / np.maximum(np.diff(idx), 1)


def frame_rms(mono: np.ndarray, rate_hz: float, fps: float) -> np.ndarray:
    """RMS (linear) of each video frame."""
    return np.sqrt(frame_power(mono, rate_hz, fps))


def frame_rms_dbfs(mono: np.ndarray, rate_hz: float, fps: float, floor_power: float = 1e-20) -> np.ndarray:
    """Level (dBFS, power floored at `floor_power`) of each video frame."""
    return 10 * np.log10(np.maximum(frame_power(mono, rate_hz, fps), floor_power))


def sliding_rms(mono: np.ndarray, rate_hz: int, win_s: float) -> tuple[np.ndarray, np.ndarray]:
    """(window centres in s, RMS) over windows of `win_s` hopped by a quarter window."""
    n = max(1, round(win_s * rate_hz))
    hop = max(1, n // 4)
    starts = np.arange(0, max(1, len(mono) - n + 1), hop)
    c = np.concatenate([[0.0], np.cumsum(mono * mono)])
    p = (c[starts + n] - c[starts]) / n
    return (starts + n / 2) / rate_hz, np.sqrt(p)


def channel_frame_power(samples: np.ndarray, rate_hz: float, fps: float) -> np.ndarray:
    """(frames, channels) mean square per video frame of a (samples, channels) array."""
    step = rate_hz / fps
    n = int(samples.shape[0] // step)
    idx = (np.arange(n + 1) * step).astype(int)
    c = np.vstack([np.zeros((1, samples.shape[1])), np.cumsum(samples * samples, axis=0)])
    return (c[idx[1:]] - c[idx[:-1]]) / np.maximum(np.diff(idx), 1)[:, None]
