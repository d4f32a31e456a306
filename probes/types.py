"""What flows from sources to probes: audio blocks, video frames, and the `emit` callable.

Sources and detectors meet only here, so a detector never knows whether its frames came from a
sound card, a live RTMP ingest, an OBS screenshot or a file (PySceneDetect's split of
"video stream" from "detector").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

#: `emit(source, kind, payload)`: the signature of monitor.bus.EventBus.emit, or any callback.
Emit = Callable[[str, str, dict[str, Any]], Any]


@dataclass
class AudioBlock:
    """Consecutive samples of one audio track.

    `samples` is float32 (frames, channels) in ±1. `t_s` is the stream time of the first sample on
    the source's own timeline (container pts for decoded streams, sample count for devices), so
    two tracks of one container can be compared directly.
    """

    samples: np.ndarray
    sample_rate_hz: int
    t_s: float
    track: int = 0

    @property
    def frames(self) -> int:
        return int(self.samples.shape[0])

    @property
    def duration_s(self) -> float:
        return self.frames / self.sample_rate_hz


@dataclass
class VideoFrame:
    """One picture: `luma` (H, W) uint8 always; `rgb` (H, W, 3) uint8 only when a source has it.

    Detectors work on luma, so stream sources hand over the decoder's Y plane without any colour
    conversion (the expensive part at 1080p); `rgb` is there for screenshots and for SSIM.
    `full_range` tells whether luma spans 0–255 (JPEG/PC) or 16–235 (TV/limited).
    """

    luma: np.ndarray
    t_s: float
    full_range: bool = False
    rgb: np.ndarray | None = None
    index: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


class Source(Protocol):
    """Anything iterable that can be stopped from another thread. Iteration ends at end of input."""

    def __iter__(self): ...

    def stop(self) -> None: ...


def db_or_none(value: float, ndigits: int = 2) -> float | None:
    """JSON-ready dB value: −inf (silence) and NaN become None."""
    return round(float(value), ndigits) if math.isfinite(value) else None


def lin_to_db(value: float) -> float:
    return 20.0 * math.log10(value) if value > 0 else -math.inf
