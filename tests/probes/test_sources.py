"""Sources: screenshots (data URI, bytes, arrays, garbage), growing files, and bad media."""

from __future__ import annotations

import base64
import threading
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from probes.sources.audio import FileAudioSource, SourceError
from probes.sources.av import AvSource
from probes.sources.growing import GrowingFile
from probes.sources.screens import ScreenshotSource, decode_image
from probes.types import AudioBlock, VideoFrame
from probes.video_probe import VideoProbe
from tests.probes.media import make_sync_flv


def png_uri(rgb: np.ndarray) -> str:
    ok, buf = cv2.imencode(".png", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
    assert ok
    return "data:image/png;base64," + base64.b64encode(buf.tobytes()).decode()


def test_screenshot_source_feeds_video_probe_and_survives_bad_polls() -> None:
    """Polls return: black, black, garbage, an exception, then a white-ish picture (a cut from black)."""
    black = np.zeros((72, 128, 3), np.uint8)
    bright = np.full((72, 128, 3), (200, 180, 160), np.uint8)
    replies: list[object] = [png_uri(black), black, "data:image/png;base64,Zm9v", RuntimeError("OBS gone"),
                             png_uri(bright), bright.tobytes()[:10], png_uri(bright), png_uri(bright)]

    def get() -> object:
        r = replies.pop(0)
        if isinstance(r, Exception):
            raise r
        return r

    src = ScreenshotSource(get, interval_s=0.01, max_frames=8)
    events: list[tuple[str, dict]] = []
    probe = VideoProbe(lambda s, k, p: events.append((k, p)), rate_hz=1000, black_min_s=0.0)
    frames = list(src)
    for f in frames:
        probe.push(f)
    assert len(frames) == 5 and src.errors == 3
    assert frames[-1].rgb is not None and tuple(frames[-1].rgb[0, 0]) == (200, 180, 160)
    assert [k for k, _ in events if k in ("black_start", "black_end")] == ["black_start", "black_end"]
    lumas = [p["luma"]["mean"] for k, p in events if k == "frame"]
    assert lumas[0] == 0 and lumas[-1] == pytest.approx(0.299 * 200 + 0.587 * 180 + 0.114 * 160, abs=1)


def test_decode_image_errors_are_clear() -> None:
    with pytest.raises(SourceError, match="not base64"):
        decode_image("data:image/png;base64,@@@")
    with pytest.raises(SourceError, match="not a decodable image"):
        decode_image(b"\x89PNG garbage")
    with pytest.raises(SourceError, match="uint8"):
        decode_image(np.zeros((4, 4), np.float32))


def test_growing_file_reads_what_the_writer_appends(tmp_path: Path) -> None:
    path = tmp_path / "growing.bin"
    path.write_bytes(b"")
    data = bytes(range(256)) * 400
    done = threading.Event()

    def writer() -> None:
        with open(path, "ab", buffering=0) as f:
            for i in range(0, len(data), 7000):
                f.write(data[i:i + 7000])
                time.sleep(0.01)
        done.set()

    threading.Thread(target=writer).start()
    reader = GrowingFile(path, done=done.is_set, poll_s=0.005)
    got = b""
    while chunk := reader.read(4096):
        got += chunk
    reader.close()
    assert got == data


def test_growing_file_ends_on_idle_and_on_stop(tmp_path: Path) -> None:
    path = tmp_path / "stalled.bin"
    path.write_bytes(b"abc")
    reader = GrowingFile(path, idle_timeout_s=0.2, poll_s=0.01)
    t0 = time.monotonic()
    assert reader.read(10) == b"abc"
    assert reader.read(10) == b""
    assert 0.15 < time.monotonic() - t0 < 2.0
    reader = GrowingFile(path, idle_timeout_s=30, poll_s=0.01)
    reader.read(10)
    threading.Timer(0.1, reader.stop).start()
    assert reader.read(10) == b""
    with pytest.raises(FileNotFoundError, match="no such recording"):
        GrowingFile(tmp_path / "never.flv", wait_for_file_s=0.1)


def test_garbage_and_truncated_media(tmp_path: Path) -> None:
    junk = tmp_path / "junk.flv"
    junk.write_bytes(b"\x00garbage" * 500)
    with pytest.raises(SourceError, match=r"junk\.flv: cannot open media"):
        list(AvSource(junk))
    with pytest.raises(SourceError):
        FileAudioSource(junk)
    good = make_sync_flv(tmp_path / "good.flv", seconds=3.0)
    cut = tmp_path / "cut.flv"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    items = list(AvSource(cut))  # a recording cut mid-write decodes up to the cut, no traceback
    audio = [i for i in items if isinstance(i, AudioBlock)]
    video = [i for i in items if isinstance(i, VideoFrame)]
    assert audio and video
    assert 0.5 < max(v.t_s for v in video) < 3.0


def test_multitrack_audio_gets_one_probe_per_track(tmp_path: Path) -> None:
    """A Matroska file with two audio tracks (1 kHz −20 dBFS; 440 Hz −10 dBFS): meters per track."""
    import subprocess

    from probes.audio_probe import AudioProbe
    from probes.run import ProbeSet, run_source
    from tests.probes.media import FFMPEG

    path = tmp_path / "two_tracks.mkv"
    subprocess.run([FFMPEG, "-v", "error", "-y", "-f", "lavfi", "-i", "sine=f=1000:r=48000:d=2",
                    "-f", "lavfi", "-i", "sine=f=440:r=48000:d=2", "-filter_complex",
                    "[0]volume=-1.94dB[a];[1]volume=8.06dB[b]", "-map", "[a]", "-map", "[b]",
                    "-c:a", "flac", str(path)], check=True, capture_output=True)
    # lavfi's sine has amplitude 1/8 (−18.06 dBFS): −1.94 dB → −20 dBFS, +8.06 dB → −10 dBFS
    events: list[tuple[str, dict]] = []

    def emit(s: str, k: str, p: dict) -> None:
        events.append((k, p))

    ps = ProbeSet(emit, audio_factory=lambda b: AudioProbe(emit, b.sample_rate_hz, b.samples.shape[1],
                                                          tones_hz=[440, 1000], track=b.track))
    run_source(AvSource(path, video=False, audio_tracks=None), ps.push)
    ps.finish()
    assert sorted(ps.audio_tracks) == [0, 1]
    ons = {(p["track"], p["freq_hz"]): p["level_dbfs"] for k, p in events if k == "tone_on"}
    assert set(ons) == {(0, 1000.0), (1, 440.0)}
    assert ons[(0, 1000.0)] == pytest.approx(-20.0, abs=0.05)
    assert ons[(1, 440.0)] == pytest.approx(-10.0, abs=0.05)
    meters = {t: [p for k, p in events if k == "meter" and p["track"] == t] for t in (0, 1)}
    assert len(meters[0]) == len(meters[1]) == 20


async def test_obs_screenshot_getter_runs_the_request_on_the_observer_loop() -> None:
    """The getter is called from the source's worker thread; the observer's request is async."""
    import asyncio

    from probes.sources.screens import obs_screenshot_getter

    calls: list[tuple[str, dict]] = []
    grey = np.full((36, 64, 3), 128, np.uint8)

    class FakeObserver:
        async def request(self, name: str, data: dict) -> dict:
            calls.append((name, data))
            return {"imageData": png_uri(grey)}

    get = obs_screenshot_getter(FakeObserver(), asyncio.get_running_loop(), "Program", width_px=64)
    frames = await asyncio.to_thread(lambda: list(ScreenshotSource(get, interval_s=0.01, max_frames=2)))
    assert len(frames) == 2 and int(frames[0].luma.mean()) == 128
    assert calls[0] == ("GetSourceScreenshot", {"sourceName": "Program", "imageFormat": "png", "imageWidth": 64})
