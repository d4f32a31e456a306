"""Video probe on synthetic frame sequences with known black, freeze, cut, flash and SSIM content."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from probes.detectors.video import is_black, ssim_region, to_full_range
from probes.types import VideoFrame
from probes.video_probe import SsimRegion, VideoProbe

FPS = 30


def scene(seed: int, h: int = 270, w: int = 480) -> np.ndarray:
    """A textured picture (blurred noise + gradient), distinct per seed."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(40, 220, size=(h // 30 + 1, w // 30 + 1)).astype(np.float32)
    img = np.kron(coarse, np.ones((30, 30), np.float32))[:h, :w]
    img = cv2.GaussianBlur(img, (0, 0), 6) + np.linspace(0, 30, w, dtype=np.float32)[None, :]
    return np.clip(img, 0, 255).astype(np.uint8)


def moving(base: np.ndarray, i: int) -> np.ndarray:
    """The scene panned by i px per frame (30 px/s): motion without a cut."""
    return np.roll(base, i, axis=1)


def programme() -> list[tuple[float, np.ndarray]]:
    """0–1 s scene A moving | 1–1.5 s black | 1.5–3 s scene B still (freeze) with a white flash frame at
    2.5 s | 3–4 s scene B moving | 4–5 s scene C moving."""
    a, b, c = scene(1), scene(2), scene(3)
    black = np.full_like(a, 5)
    frames = []
    for i in range(5 * FPS):
        t = i / FPS
        if t < 1.0:
            img = moving(a, i)
        elif t < 1.5:
            img = black
        elif t < 3.0:
            img = np.full_like(a, 250) if i == round(2.5 * FPS) else b
        elif t < 4.0:
            img = moving(b, i - 3 * FPS)  # starts where the still picture was: no jump
        else:
            img = moving(c, i)
        frames.append((t, img))
    return frames


def run(rate_hz: float, **kw: object) -> tuple[list[tuple[str, dict]], VideoProbe]:
    events: list[tuple[str, dict]] = []
    probe = VideoProbe(lambda s, k, p: events.append((k, p)), rate_hz=rate_hz, **kw)  # type: ignore[arg-type]
    for i, (t, img) in enumerate(programme()):
        probe.push(VideoFrame(img, t, full_range=True, index=i))
    return events, probe


def times(events: list[tuple[str, dict]], kind: str) -> list[float]:
    return [p["t_s"] for k, p in events if k == kind]


def test_every_frame_analysed() -> None:
    events, probe = run(FPS, freeze_min_s=0.4)
    period = 1 / FPS
    assert probe.frames_analysed == probe.frames_seen == 150
    assert times(events, "black_start") == pytest.approx([1.0], abs=1e-4)
    assert times(events, "black_end") == pytest.approx([1.5], abs=1e-4)
    assert times(events, "flash") == pytest.approx([2.5], abs=1e-4)
    # cuts: into black, out of black, B→C; the flash and the start/stop of motion are not cuts
    assert times(events, "cut") == pytest.approx([1.0, 1.5, 4.0], abs=1e-4)
    # freeze (≥ 0.4 s): black, still B until the flash, still B after it until the pan moves it;
    # a freeze starts at the first frame equal to its predecessor, ends at the first that differs
    starts, ends = times(events, "freeze_start"), times(events, "freeze_end")
    assert starts == pytest.approx([1.0 + period, 1.5 + period, 2.5 + 2 * period], abs=1e-4)
    assert ends == pytest.approx([1.5, 2.5, 3.0 + period], abs=1e-4)
    frame = [p for k, p in events if k == "frame"]
    assert frame[0]["luma"]["mean"] == pytest.approx(float(programme()[0][1].mean()), abs=0.5)


def test_analysis_rate_five_fps_keeps_flashes() -> None:
    events, probe = run(5.0)
    assert probe.frames_seen == 150
    assert probe.frames_analysed == 25
    assert times(events, "flash") == pytest.approx([2.5], abs=1e-4)  # not an analysed frame: still found
    assert times(events, "black_start") == pytest.approx([1.0], abs=0.2 + 1e-6)
    assert times(events, "black_end") == pytest.approx([1.5], abs=0.2 + 1e-6)
    cuts = times(events, "cut")
    assert len(cuts) == 3 and cuts[-1] == pytest.approx(4.0, abs=0.2 + 1e-6)


def test_ssim_region_match_start_and_end() -> None:
    ref_frame = scene(2)
    region = (100, 50, 200, 120)
    ref = ref_frame[50:170, 100:300]
    events, _ = run(FPS, regions=[SsimRegion("b", ref, region, threshold=0.9)])
    starts, ends = times(events, "match_start"), times(events, "match_end")
    assert starts and starts[0] == pytest.approx(1.5, abs=1e-4)
    assert ends and ends[0] == pytest.approx(2.5, abs=1e-4)  # the flash frame
    sims = [p["ssim"]["b"] for k, p in events if k == "frame" and 1.6 < p["t_s"] < 2.4]
    assert sims and min(sims) > 0.999


def test_limited_range_black_and_helpers() -> None:
    tv_black = np.full((90, 160), 16, np.uint8)
    assert is_black(tv_black) and not is_black(np.full((90, 160), 40, np.uint8))
    assert to_full_range(tv_black, False).max() == 0
    assert is_black(to_full_range(tv_black, False))
    assert to_full_range(np.full((2, 2), 235, np.uint8), False).min() == 255
    with pytest.raises(ValueError, match="outside"):
        ssim_region(tv_black, tv_black[:10, :10], (150, 80, 20, 20))
