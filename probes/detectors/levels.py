"""Silence, noise floor and clipping on short windows: pure per-channel state machines.

Window RMS is measured on 10 ms windows (dBFS, RMS of a full-scale sine = −3 dBFS). Silence is a
run of windows below `threshold_dbfs` lasting at least `min_s`; its start is reported as the start
of the run (so the reported time does not depend on `min_s`), its end as the first loud window.
The noise floor is a low percentile of recent window levels: the quiet between events, not the
programme level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LevelChange:
    kind: str  # "silence_start" | "silence_end" | "clip"
    channel: int
    t_s: float
    detail: dict[str, float]


class WindowRms:
    """Cuts a block stream into fixed windows; returns (start time, rms per channel) per window."""

    def __init__(self, sample_rate_hz: int, channels: int, window_s: float = 0.01) -> None:
        self.sr = sample_rate_hz
        self.win = max(1, round(window_s * sample_rate_hz))
        self._rest = np.zeros((0, channels))
        self._rest_t = 0.0
        self._started = False

    def push(self, x: np.ndarray, t_s: float) -> tuple[np.ndarray, np.ndarray]:
        if not self._started:
            self._rest_t, self._started = t_s, True
        joined = np.concatenate([self._rest, x], axis=0) if len(self._rest) else x
        n = joined.shape[0] // self.win
        if n == 0:
            self._rest = joined
            return np.zeros(0), np.zeros((0, x.shape[1]))
        sq = np.square(joined[: n * self.win], dtype=np.float64).reshape(n, self.win, -1).mean(axis=1)
        starts = self._rest_t + np.arange(n) * self.win / self.sr
        self._rest = joined[n * self.win:]
        self._rest_t += n * self.win / self.sr
        return starts, np.sqrt(sq)


class SilenceTracker:
    """Per-channel silence runs with a minimum duration."""

    def __init__(self, channels: int, *, threshold_dbfs: float = -60.0, min_s: float = 0.3) -> None:
        self.threshold = 10 ** (threshold_dbfs / 20)
        self.min_s = min_s
        self.silent = np.zeros(channels, dtype=bool)
        self._quiet_since: list[float | None] = [None] * channels

    def push(self, starts: np.ndarray, rms: np.ndarray, window_s: float) -> list[LevelChange]:
        if len(starts) == 0:
            return []
        quiet_all = rms < self.threshold
        # fast path: every window continues the state each channel is already in
        steady_loud = ~quiet_all.any(axis=0) & ~self.silent & np.array([q is None for q in self._quiet_since])
        steady_silent = quiet_all.all(axis=0) & self.silent
        if np.all(steady_loud | steady_silent):
            return []
        out: list[LevelChange] = []
        for i, t in enumerate(starts):
            for c in range(rms.shape[1]):
                quiet = rms[i, c] < self.threshold
                if quiet:
                    if self._quiet_since[c] is None:
                        self._quiet_since[c] = float(t)
                    if not self.silent[c] and t + window_s - self._quiet_since[c] >= self.min_s - 1e-9:
                        self.silent[c] = True
                        out.append(LevelChange("silence_start", c, self._quiet_since[c], {}))
                else:
                    if self.silent[c]:
                        self.silent[c] = False
                        out.append(LevelChange("silence_end", c, float(t),
                                               {"duration_s": round(float(t) - self._quiet_since[c], 4)}))
                    self._quiet_since[c] = None
        return out


class NoiseFloor:
    """Low percentile of the last `span_s` of window levels, per channel (dBFS)."""

    def __init__(self, channels: int, *, span_s: float = 3.0, window_s: float = 0.01,
                 percentile: float = 10.0) -> None:
        self._ring = np.zeros((max(1, round(span_s / window_s)), channels))
        self._n = 0  # windows written so far
        self.percentile = percentile
        self.channels = channels

    def push(self, rms: np.ndarray) -> None:
        size = len(self._ring)
        rms = rms[-size:]
        idx = (self._n + np.arange(len(rms))) % size
        self._ring[idx] = rms
        self._n += len(rms)

    def floor_dbfs(self) -> list[float]:
        if self._n == 0:
            return [-math.inf] * self.channels
        ring = self._ring[: min(self._n, len(self._ring))]
        k = min(len(ring) - 1, int(self.percentile / 100.0 * (len(ring) - 1)))
        p = np.partition(ring, k, axis=0)[k]  # lower order statistic: no interpolation needed
        return [20 * math.log10(v) if v > 0 else -math.inf for v in p]


def clipped_samples(x: np.ndarray, level: float = 0.999) -> tuple[np.ndarray, np.ndarray]:
    """Per channel: how many samples are at or beyond ±level, and the index of the first (−1: none)."""
    hit = np.abs(x) >= level
    count = hit.sum(axis=0)
    first = np.where(count > 0, hit.argmax(axis=0), -1)
    return count, first
