"""The video probe's pictures (imageData on `frame` events): off by default, bounded rate and width."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from probes.types import VideoFrame
from probes.video_probe import VideoProbe
from verifiers.tasks.streaming._shared.screenshots import decode_data_uri


def _frames(probe: VideoProbe, n: int, fps: float, rgb: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    probe.emit = lambda source, kind, payload: out.append(payload) if kind == "frame" else None
    img = np.zeros((720, 1280, 3), np.uint8)
    img[:, 640:] = (200, 30, 30)
    for i in range(n):
        probe.push(VideoFrame(img[..., 1].copy(), i / fps, full_range=True, rgb=img if rgb else None))
    return out


def test_no_pictures_unless_asked() -> None:
    assert not any("imageData" in f for f in _frames(VideoProbe(lambda *a: None, rate_hz=5), 10, 5, rgb=True))


@pytest.mark.parametrize("rgb", [True, False])
def test_one_picture_per_interval_scaled_down(rgb: bool) -> None:
    frames = _frames(VideoProbe(lambda *a: None, rate_hz=5, image_every_s=1.0, image_width_px=160), 25, 25, rgb)
    pics = [(f["t_s"], decode_data_uri(f["imageData"])) for f in frames if "imageData" in f]
    assert [t for t, _ in pics] == [0.0]   # 1 s of stream: one picture (frames at 0, 0.2 ... 0.8 s analysed)
    img = pics[0][1]
    assert img.shape == (90, 160, 3)
    right = img[:, 100:].reshape(-1, 3).mean(axis=0)
    # the red half stays red (PNG is lossless; INTER_AREA averages only inside the flat half); gray
    # sources come back gray with the green plane's level (30)
    assert np.allclose(right, (200, 30, 30) if rgb else (30, 30, 30), atol=1)


def test_bounds() -> None:
    with pytest.raises(ValueError, match=r"0\.5 s"):
        VideoProbe(lambda *a: None, image_every_s=0.2)
    with pytest.raises(ValueError, match="image_width_px"):
        VideoProbe(lambda *a: None, image_every_s=1.0, image_width_px=4000)
