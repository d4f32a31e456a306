"""Video frames from polled screenshots (OBS `GetSourceScreenshot` through the observer, or any
callable returning an image).

`get_screenshot()` may return an (H, W, 3) RGB / (H, W) gray uint8 array, encoded image bytes
(PNG/JPEG), or a `data:image/...;base64,` URI (what obs-websocket sends). `t_s` is monotonic time
since the first poll: screenshots have no media timestamps.
"""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import cv2
import numpy as np

from probes.sources.audio import SourceError
from probes.types import VideoFrame


def decode_image(obj: Any) -> np.ndarray:
    """RGB (H, W, 3) or gray (H, W) uint8 from an array, image bytes, or a base64 data URI."""
    if isinstance(obj, np.ndarray):
        img = obj
    else:
        if isinstance(obj, str):
            data = obj.split(",", 1)[1] if obj.startswith("data:") else obj
            try:
                raw = base64.b64decode(data, validate=True)
            except ValueError as exc:
                raise SourceError(f"screenshot is not base64 image data: {exc}") from exc
        elif isinstance(obj, (bytes, bytearray, memoryview)):
            raw = bytes(obj)
        else:
            raise SourceError(f"screenshot of unsupported type {type(obj).__name__}")
        bgr = cv2.imdecode(np.frombuffer(raw, np.uint8), cv2.IMREAD_COLOR)
        if bgr is None:
            raise SourceError("screenshot bytes are not a decodable image")
        img = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
    if img.dtype != np.uint8 or img.ndim not in (2, 3) or (img.ndim == 3 and img.shape[2] not in (3, 4)):
        raise SourceError(f"screenshot array must be uint8 (H, W[, 3]), got {img.dtype} {img.shape}")
    return img[..., :3] if img.ndim == 3 else img


def to_frame(img: np.ndarray, t_s: float, index: int = 0) -> VideoFrame:
    if img.ndim == 2:
        return VideoFrame(img, t_s, full_range=True, index=index)
    luma = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)  # BT.601 weights; full range
    return VideoFrame(luma, t_s, full_range=True, rgb=img, index=index)


class ScreenshotSource:
    """Poll `get_screenshot` every `interval_s`; failed polls are counted and skipped, not fatal."""

    def __init__(self, get_screenshot: Callable[[], Any], *, interval_s: float = 0.2, max_frames: int | None = None) -> None:
        self.get_screenshot = get_screenshot
        self.interval_s = interval_s
        self.max_frames = max_frames
        self.errors = 0
        self.last_error: str | None = None
        self._stop = threading.Event()

    def stop(self) -> None:
        self._stop.set()

    def __iter__(self) -> Iterator[VideoFrame]:
        t0 = time.monotonic()
        n = 0
        while not self._stop.is_set() and (self.max_frames is None or n < self.max_frames):
            due = t0 + n * self.interval_s
            if self._stop.wait(max(0.0, due - time.monotonic())):
                return
            t = time.monotonic() - t0
            try:
                img = decode_image(self.get_screenshot())
            except Exception as exc:
                self.errors += 1
                self.last_error = str(exc)[:200]
                n += 1
                continue
            yield to_frame(img, t, n)
            n += 1


def obs_screenshot_getter(observer: Any, loop: Any, source_name: str, *, width_px: int = 640,
                          timeout_s: float = 5.0) -> Callable[[], str]:
    """A blocking `get_screenshot` for ScreenshotSource from the async OBS observer.

    Runs `observer.request("GetSourceScreenshot", ...)` on the observer's event loop (the source
    iterates in a worker thread) and returns the data URI.
    """
    import asyncio

    def get() -> str:
        fut = asyncio.run_coroutine_threadsafe(
            observer.request("GetSourceScreenshot", {"sourceName": source_name, "imageFormat": "png",
                                                     "imageWidth": width_px}), loop)
        reply = fut.result(timeout_s)
        data = reply.get("imageData") or reply.get("image_data")
        if not data:
            raise SourceError("GetSourceScreenshot reply without imageData")
        return data

    return get
