"""The one detector protocol: frames in, changes out, the same object live and offline.

A detector is fed frames in presentation order (`push(frame) -> changes`), gives what it still
holds when the stream ends (`flush()`), and says what it has seen (`metrics()`). A live probe
pushes frames as the ingest decodes them and emits each change as it is returned; a scorer pushes
the decoded frames of a file (`run`). Both therefore find the same changes on the same frames: a
detector that needs frames after a change to confirm it (a cut's neighbours, a flash's way back)
returns the change late, never differently.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

import numpy as np

FrameT = TypeVar("FrameT", contravariant=True)
ChangeT = TypeVar("ChangeT", covariant=True)


@dataclass(frozen=True)
class Picture:
    """One video frame as picture detectors see it: (H, W) luma or (H, W, 3) RGB, uint8 0-255 (full
    range: a live source's limited-range luma is expanded before it is pushed)."""

    t_s: float  # presentation time
    image: np.ndarray


@dataclass(frozen=True)
class Reading:
    """One number measured on one frame (mean luma, a condition as 0/1) for detectors that follow
    a frame's measure rather than its pixels (a flash, a black or frozen run)."""

    t_s: float
    value: float


@dataclass(frozen=True)
class Change:
    """A change found in a stream: what (`kind`, e.g. "cut", "flash", "black_start"), when it happened
    (`t_s`, the first frame of the new state), and the detector's measurements (`detail`)."""

    kind: str
    t_s: float
    detail: dict[str, float] = field(default_factory=dict)


class Detector(Protocol[FrameT, ChangeT]):
    """Frames in order in, changes out (see the module docstring)."""

    def push(self, frame: FrameT) -> list[ChangeT]:
        """Take the next frame; the changes it confirms (often about an earlier frame)."""
        ...

    def flush(self) -> list[ChangeT]:
        """The stream ended: the changes still waiting for frames that will not come."""
        ...

    def metrics(self) -> dict[str, float]:
        """Counts for reports (frames pushed, changes found, ...)."""
        ...


F = TypeVar("F")
C = TypeVar("C")


def run(detector: Detector[F, C], frames: Iterable[F]) -> list[C]:
    """The offline path: every frame pushed, then flushed; the changes in the order found."""
    out: list[C] = []
    for frame in frames:
        out += detector.push(frame)
    return out + detector.flush()
