"""One cut detector, two paths: the live video probe (frames pushed as they arrive, `cut` events
emitted) and the offline path the scorers use (a file's decoded frames run through the same
detector) must find the same cuts on the same frames."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest

from probes.types import VideoFrame
from probes.video_probe import VideoProbe
from tests.probes.test_video_detectors import FPS, programme
from verifiers.measure.detect import Picture, run
from verifiers.measure.frames import iter_frames
from verifiers.measure.scenes import ContentCutDetector, LumaCutDetector

#: the programme's cuts: into black, out of black, scene B -> C (its flash and pans are not cuts)
WANT_S = [1.0, 1.5, 4.0]


def live_cuts(frames: list[tuple[float, np.ndarray]]) -> list[float]:
    """Cut times the probe emits, analysing every frame at full size (no thumbnail: same pixels)."""
    events: list[tuple[str, dict]] = []
    probe = VideoProbe(lambda s, k, p: events.append((k, p)), rate_hz=FPS, thumb_width_px=10_000)
    for i, (t, img) in enumerate(frames):
        probe.push(VideoFrame(img, t, full_range=True, index=i))
    return [p["t_s"] for k, p in events if k == "cut"]


def test_live_probe_and_offline_run_find_the_same_cuts() -> None:
    frames = programme()
    offline = run(LumaCutDetector(), [Picture(t, img) for t, img in frames])
    assert live_cuts(frames) == [round(c.t_s, 4) for c in offline]
    assert [c.t_s for c in offline] == pytest.approx(WANT_S, abs=1e-6)


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")
def test_decoded_file_gives_the_live_cuts(tmp_path: Path) -> None:
    """The scorer's path: the programme written losslessly to a file, decoded (RGB -> grey as T18
    reads it), finds the cuts the probe found on the original frames."""
    frames = programme()
    h, w = frames[0][1].shape
    path = tmp_path / "programme.mkv"
    subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-f", "rawvideo",
                    "-pix_fmt", "gray", "-s", f"{w}x{h}", "-r", str(FPS), "-i", "-", "-c:v", "ffv1", str(path)],
                   input=b"".join(img.tobytes() for _, img in frames), check=True)
    decoded = [Picture(f.t_s, cv2.cvtColor(f.rgb, cv2.COLOR_RGB2GRAY)) for f in iter_frames(path)]
    assert len(decoded) == len(frames)
    assert [c.t_s for c in run(LumaCutDetector(), decoded)] == pytest.approx(live_cuts(frames), abs=1e-3)


def test_content_detector_streams_what_it_finds_offline() -> None:
    """Pushed one frame at a time, the adaptive detector returns each cut at most `window` frames
    late, and the cuts (frame, time, content, ratio) equal an offline run on the same frames."""
    rng = np.random.default_rng(7)
    shots = [rng.integers(0, 256, (18, 32, 3), dtype=np.uint8) for _ in range(4)]
    frames = []
    for i in range(60):
        base = shots[min(3, i // 15)]  # cuts at frames 15, 30, 45; noise inside a shot
        frames.append(Picture(i / 25, np.clip(base + rng.integers(-6, 7, base.shape), 0, 255).astype(np.uint8)))
    live, late = ContentCutDetector(), []
    found = []
    for i, f in enumerate(frames):
        for cut in live.push(f):
            found.append(cut)
            late.append(i - cut.frame)
    found += live.flush()
    assert [c.frame for c in found] == [15, 30, 45]
    assert max(late) <= 2
    assert found == run(ContentCutDetector(), frames)
    assert live.metrics() == {"frames": 60, "cuts": 3}
