"""Program screenshots through obs-websocket's read-only GetSourceScreenshot, bounded in size.

OBS has no "program frame" event, so a task that judges what the program showed (streaming T12:
the ticker band over the scene) needs the observer to ask. The request is on the read-only
allow-list (monitor/observers/obs_client.ALLOWED_REQUESTS); this module only shapes it: which
source (the current program scene), how wide (OBS scales "to inner", keeping the aspect), and a
cap on the answer so one screenshot can never flood the bus or the bundle.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol

from verifiers.evidence.obs import ObsScreenshot

#: obs-websocket's own bounds for imageWidth (protocol.md: >= 8, <= 4096); ours is tighter: a
#: scorer judges bands and boxes of a 1080p canvas, 1280 px is more than any check needs
MIN_WIDTH_PX, MAX_WIDTH_PX = 8, 1280
#: answers above this are dropped (a 320 px PNG of a busy frame is ~100-200 kB; base64 adds 1/3)
DEFAULT_MAX_CHARS = 1_000_000
#: the run's whole screenshot budget: past it the observer stops taking them (one `error` says so),
#: so a long run cannot grow the bundle without bound (20 MB: 100+ busy frames, hours of a plain one)
DEFAULT_MAX_TOTAL_CHARS = 20_000_000


class Requester(Protocol):
    def request(self, name: str, data: dict[str, Any] | None = None) -> dict[str, Any]: ...


class ScreenshotTooLarge(ValueError):
    """OBS answered with more image data than the observer keeps."""


@dataclass(frozen=True)
class ScreenshotConfig:
    """When the observer takes program screenshots: never unless `interval_s` is set."""

    interval_s: float | None = None
    width_px: int = 320
    image_format: str = "png"
    max_chars: int = DEFAULT_MAX_CHARS
    max_total_chars: int = DEFAULT_MAX_TOTAL_CHARS

    def __post_init__(self) -> None:
        if self.interval_s is not None and self.interval_s < 0.5:
            raise ValueError("screenshot interval below 0.5 s: each one holds OBS's request queue for a frame")
        if not MIN_WIDTH_PX <= self.width_px <= MAX_WIDTH_PX:
            raise ValueError(f"screenshot width must be {MIN_WIDTH_PX}..{MAX_WIDTH_PX} px")


def program_scene(req: Requester) -> str:
    """The current program scene's name (obs-websocket 5.0-5.2 name it currentProgramSceneName)."""
    r = req.request("GetCurrentProgramScene")
    name = r.get("sceneName") or r.get("currentProgramSceneName")
    if not isinstance(name, str) or not name:
        raise ValueError(f"GetCurrentProgramScene answered no scene name: {sorted(r)}")
    return name


def take_screenshot(req: Requester, cfg: ScreenshotConfig) -> ObsScreenshot:
    """One screenshot of the program scene, as the typed event the observer emits.

    Blocking (two requests): call it in the observer's request thread."""
    t0 = time.monotonic()
    scene = program_scene(req)
    r = req.request("GetSourceScreenshot", {"sourceName": scene, "imageFormat": cfg.image_format,
                                            "imageWidth": cfg.width_px})
    data = r.get("imageData")
    if not isinstance(data, str) or not data.startswith("data:image/"):
        raise ValueError("GetSourceScreenshot answered no data: URI image")
    if len(data) > cfg.max_chars:
        raise ScreenshotTooLarge(f"screenshot of {scene!r} is {len(data)} chars (> {cfg.max_chars}): dropped")
    return ObsScreenshot(scene=scene, image_format=cfg.image_format, width_px=cfg.width_px, image_data=data,
                         took_ms=round((time.monotonic() - t0) * 1000, 1))
