"""Digital-silence runs (onsets are in :mod:`onsets`, clicks in :mod:`clicks`).

* **Silence runs**: stretches where every channel is exactly zero (digital silence: a muted bus, a
  gap in a recording) or, with `threshold_dbfs`, below that sample level. Dither at −90 dBFS is
  not digital silence; pass a threshold if it should count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
