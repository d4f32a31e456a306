"""Live video analysis for one picture stream: stats, black, freeze, cut, flash, SSIM regions.

Feed `VideoFrame`s in order (`push`). Flash detection runs on every frame pushed (a clapper flash
lasts one frame); everything else runs at `rate_hz` analysed frames per second of stream time, on
a `thumb_width_px` wide thumbnail. Events go out through `emit(source, kind, payload)` with source
"probe.video": `frame` (per analysed frame: luma stats, difference to the previous analysed frame,
SSIM per region; with `image_every_s`, every that many seconds of stream time also `imageData`, the
frame as a PNG data: URI `image_width_px` wide, for scorers that judge the picture itself: streaming
T09's alert box), and `black_start/black_end`, `freeze_start/freeze_end`, `cut`, `flash`,
`match_start/match_end` (SSIM region above/below its threshold) as they are found.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from probes.detectors.video import (
    FlashDetector,
    StateRun,
    VideoChange,
    is_black,
    luma_stats,
    quick_mean,
    ssim_region,
    thumbnail,
    to_full_range,
)
from probes.types import Emit, VideoFrame
from verifiers.evidence.probe import VideoFrame as FrameEvidence
from verifiers.measure.detect import Picture, Reading
from verifiers.measure.scenes import LumaCutDetector, frame_difference

SOURCE = "probe.video"
#: frames attached to `frame` events are at most this wide (a 1080p program at 320 px is ~50-150 kB)
MAX_IMAGE_WIDTH_PX = 1280


@dataclass
class SsimRegion:
    """Compare `region` (x, y, w, h px of the full frame; None = whole frame) with `reference`."""

    name: str
    reference: np.ndarray  # gray or RGB uint8
    region: tuple[int, int, int, int] | None = None
    threshold: float = 0.8


class VideoProbe:
    def __init__(self, emit: Emit, *, rate_hz: float = 5.0, thumb_width_px: int = 240,
                 regions: list[SsimRegion] | None = None, black_min_s: float = 0.1, freeze_min_s: float = 1.0,
                 freeze_noise: float = 0.5, cut_threshold: float = 30.0, flash_rise: float = 60.0,
                 name: str = "", source: str = SOURCE, image_every_s: float | None = None,
                 image_width_px: int = 320) -> None:
        if rate_hz <= 0:
            raise ValueError("rate_hz must be > 0")
        if image_every_s is not None and image_every_s < 0.5:
            raise ValueError("image_every_s below 0.5 s: a PNG per analysed frame would flood the bus")
        if not 8 <= image_width_px <= MAX_IMAGE_WIDTH_PX:
            raise ValueError(f"image_width_px must be 8..{MAX_IMAGE_WIDTH_PX}")
        self.image_every_s, self.image_width_px = image_every_s, image_width_px
        self._next_image_t: float | None = None
        self.emit = emit
        self.source = source
        self.name = name
        self.period_s = 1.0 / rate_hz
        self.thumb_width_px = thumb_width_px
        self.regions = regions or []
        self.flash = FlashDetector(rise=flash_rise)
        self.black = StateRun("black", black_min_s)
        self.freeze = StateRun("freeze", freeze_min_s)
        self.freeze_noise = freeze_noise
        self.cuts = LumaCutDetector(threshold=cut_threshold)
        self.match = {r.name: StateRun("match", 0.0) for r in self.regions}
        self._next_t: float | None = None
        self._prev_thumb: np.ndarray | None = None
        self.frames_seen = 0
        self.frames_analysed = 0

    def push(self, frame: VideoFrame) -> None:
        self.frames_seen += 1
        t = frame.t_s
        mean = quick_mean(frame.luma)
        if not frame.full_range:
            mean = (mean - 16.0) * 255.0 / 219.0
        for change in self.flash.push(Reading(t, mean)):
            self._change(change)
        if self._next_t is not None and t < self._next_t - 1e-6:
            return
        self._next_t = (t if self._next_t is None else self._next_t) + self.period_s
        if self._next_t <= t:  # a gap in the stream: resync instead of bursting
            self._next_t = t + self.period_s
        self._analyse(frame)

    def _analyse(self, frame: VideoFrame) -> None:
        self.frames_analysed += 1
        t = frame.t_s
        y = to_full_range(thumbnail(frame.luma, self.thumb_width_px), frame.full_range)
        payload: dict[str, Any] = {"t_s": round(t, 4), "luma": luma_stats(y)}
        black = is_black(y)
        payload["black"] = black
        if self._prev_thumb is not None and self._prev_thumb.shape == y.shape:
            diff = frame_difference(self._prev_thumb, y)
            payload["diff"] = round(diff, 3)
            for change in self.freeze.push(Reading(t, diff < self.freeze_noise)):
                self._change(change)
        self._prev_thumb = y
        for change in (*self.black.push(Reading(t, black)), *self.cuts.push(Picture(t, y))):
            self._change(change)
        if self.regions:
            sims = {}
            for reg in self.regions:
                if frame.rgb is not None and reg.reference.ndim == 3:
                    score = ssim_region(frame.rgb, reg.reference, reg.region)
                else:
                    crop = _crop(frame.luma, reg.region)
                    score = ssim_region(to_full_range(crop, frame.full_range), reg.reference)
                sims[reg.name] = round(score, 4)
                for change in self.match[reg.name].push(Reading(t, score >= reg.threshold)):
                    self._change(VideoChange(change.kind, change.t_s, {"region": reg.name, "ssim": round(score, 4)}))
            payload["ssim"] = sims
        if self.image_every_s is not None and (self._next_image_t is None or t >= self._next_image_t - 1e-6):
            self._next_image_t = t + self.image_every_s
            payload["imageData"] = png_data_uri(frame.rgb if frame.rgb is not None
                                                else to_full_range(frame.luma, frame.full_range), self.image_width_px)
        self._send("frame", payload)

    def _change(self, change: VideoChange) -> None:
        self._send(change.kind, {"t_s": round(change.t_s, 4), **change.detail})

    def _send(self, kind: str, payload: dict[str, Any]) -> None:
        if self.name:
            payload = {"name": self.name, **payload}
        if kind == FrameEvidence.KIND:  # typed evidence (verifiers.evidence.probe)
            payload = FrameEvidence.from_payload(payload, f"{self.source}/{kind}").to_payload()
        self.emit(self.source, kind, payload)


def _crop(img: np.ndarray, region: tuple[int, int, int, int] | None) -> np.ndarray:
    if region is None:
        return img
    x, y, w, h = region
    if w <= 0 or h <= 0 or x < 0 or y < 0 or x + w > img.shape[1] or y + h > img.shape[0]:
        raise ValueError(f"region {region} outside the {img.shape[1]}x{img.shape[0]} frame")
    return img[y:y + h, x:x + w]


def png_data_uri(img: np.ndarray, width_px: int) -> str:
    """An RGB (or gray) uint8 frame scaled to `width_px` wide (never up) as a PNG data: URI, the
    encoding obs-websocket's GetSourceScreenshot answers with (so one decoder reads both)."""
    import base64

    import cv2

    h, w = img.shape[:2]
    if w > width_px:
        img = cv2.resize(img, (width_px, max(1, round(h * width_px / w))), interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode(".png", img[:, :, ::-1] if img.ndim == 3 else img)
    if not ok:
        raise ValueError("frame could not be encoded as PNG")
    return "data:image/png;base64," + base64.b64encode(buf.tobytes()).decode()
