"""Evidence the live probes (probes/) record: audio meter frames, analysed video frames.

Sources are "probe.audio" / "probe.video" (a probe may be given its own source name starting so).
Levels are dB with None for silence (−inf); per-channel values are lists in channel order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from verifiers.evidence.base import EvidenceEvent


class _ProbeEvent(EvidenceEvent):
    @classmethod
    def matches(cls, e: Any) -> bool:
        src = e.get("source")
        return isinstance(src, str) and src.startswith(cls.SOURCE) and e.get("kind") == cls.KIND


@dataclass(frozen=True)
class AudioMeter(_ProbeEvent, source="probe.audio", kind="meter"):
    """One meter frame (every 100 ms): EBU R128 loudness, true/sample peaks, RMS, floor, clips, silence."""

    _omit_none: ClassVar[tuple[str, ...]] = ("name", "tones", "app", "key", "target_lufs")
    track: int | str
    t_s: float
    momentary_lufs: float | None = None
    short_term_lufs: float | None = None
    integrated_lufs: float | None = None
    true_peak_dbtp: list[float | None] = field(default_factory=list)
    sample_peak_dbfs: list[float | None] = field(default_factory=list)
    max_sample_peak_dbfs: list[float | None] = field(default_factory=list)
    rms_dbfs: list[float | None] = field(default_factory=list)
    noise_floor_dbfs: list[float | None] = field(default_factory=list)
    clipped_samples: list[int] = field(default_factory=list)
    silent: list[bool] = field(default_factory=list)
    name: str | None = None
    tones: Any = None
    app: str | None = None  # set by the ingest's probes: which stream this meter listens to
    key: str | None = None
    target_lufs: float | None = None


@dataclass(frozen=True)
class VideoFrame(_ProbeEvent, source="probe.video", kind="frame"):
    """One analysed frame (at the probe's rate): luma statistics, black, difference to the last, SSIM."""

    _omit_none: ClassVar[tuple[str, ...]] = ("name", "diff", "ssim", "imageData")
    t_s: float
    luma: dict[str, float] = field(default_factory=dict)
    black: bool = False
    diff: float | None = None
    ssim: dict[str, float] | None = None
    name: str | None = None
    imageData: str | None = None  # the frame as a PNG data: URI, every image_every_s (VideoProbe; T09 reads it)
