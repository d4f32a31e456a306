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


def test_t09_gets_program_pictures_from_the_ingest_probe(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """T09 (live: ingest, probe_video, probe_video_images) gets an ingest whose video probe attaches
    pictures; T05 (ingest, no pictures) none: `tally run` drives the producer T09 reads."""
    from monitor.run.wiring import PROBE_IMAGE_INTERVAL_S, IngestComponent, LiveOptions, build_components
    from verifiers.catalog import load_catalog

    monkeypatch.delenv("DISPLAY", raising=False)
    opts = LiveOptions(workdir=tmp_path, bundle_dir=tmp_path / "b")
    got = {}
    for task in ("R06.12.01.01-T09", "R06.12.01.01-T05"):
        comps, missing = build_components(load_catalog().get(task), opts)
        assert not [m for m in missing if m.need.startswith("probe")], missing
        got[task] = [(c.probe_video, c.video_image_every_s) for c in comps if isinstance(c, IngestComponent)]
    assert got == {"R06.12.01.01-T09": [(True, PROBE_IMAGE_INTERVAL_S)], "R06.12.01.01-T05": [(False, None)]}


def test_ingest_probes_attach_pictures_to_frames_of_a_published_stream(tmp_path) -> None:
    """The ingest's probe worker (IngestProbes, as `tally run` builds it for T09) puts a picture on
    one frame event per interval of a real FLV recording, as ffmpeg publishes it."""
    import subprocess
    import threading

    from probes.live import IngestProbes

    flv = tmp_path / "rec.flv"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=10:duration=3",
                    "-c:v", "libx264", "-g", "10", "-f", "flv", str(flv)], check=True, timeout=60)
    frames: list[dict[str, Any]] = []
    lock = threading.Lock()

    def emit(source: str, kind: str, payload: dict[str, Any]) -> None:
        if kind == "frame":
            with lock:
                frames.append(payload)

    probes = IngestProbes(emit, video_rate_hz=5, avsync=False, idle_timeout_s=2.0, video_image_every_s=1.0)
    probes.on_ingest_event("publish", {"app": "live", "key": "k", "recording": str(flv)})
    probes.on_ingest_event("unpublish", {"app": "live", "key": "k"})  # the worker reads to the end, then ends
    probes.workers[("live", "k")].thread.join(60)
    probes.stop()
    with lock:
        pics = [f["t_s"] for f in frames if "imageData" in f]
    # the first analysed frame carries one (H.264 in FLV starts at its composition delay, not at 0),
    # then one per second of stream time: 3 in a 3 s stream
    assert frames and pics[0] == frames[0]["t_s"], (len(frames), pics)
    assert np.diff(pics) == pytest.approx([1.0, 1.0], abs=0.11), pics
    assert decode_data_uri(next(f["imageData"] for f in frames if "imageData" in f)).shape[:2] == (240, 320)
