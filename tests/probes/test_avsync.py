"""A/V sync and tones from an FLV carrying a flash/beep pair with a planted 120 ms delay: from the
file written by ffmpeg, and live from the RTMP ingest's growing recording while ffmpeg publishes."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from pathlib import Path

import pytest

from probes.audio_probe import AudioProbe
from probes.live import IngestProbes
from probes.run import ProbeSet, run_source
from probes.sources.av import AvSource
from probes.video_probe import VideoProbe
from rtmp.server import IngestConfig, IngestServer
from tests.probes.media import DELAY_S, FFMPEG, FLASHES_S, TONES, make_sync_flv


@pytest.fixture(scope="module")
def sync_flv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_sync_flv(Path(tmp_path_factory.mktemp("sync")) / "sync.flv")


def probe_set(events: list[tuple[str, str, dict]]) -> ProbeSet:
    def emit(source: str, kind: str, payload: dict) -> None:
        events.append((source, kind, payload))

    return ProbeSet(emit, audio_factory=lambda b: AudioProbe(emit, b.sample_rate_hz, b.samples.shape[1],
                                                            tones_hz=[440, 1000, 2000]),
                    video=VideoProbe(emit, rate_hz=5), avsync=True)


def check(events: list[tuple[str, str, dict]], start_s: float) -> None:
    """Offsets per clap, flashes where planted, the tones on their channels and nowhere else."""
    syncs = [p for s, k, p in events if k == "sync"]
    assert [k for s, k, p in events if k == "sync_missing"] == []
    print("offsets_ms", [s["offset_ms"] for s in syncs])
    assert len(syncs) == len(FLASHES_S), syncs
    for want_t, got in zip(FLASHES_S, syncs, strict=True):
        assert got["flash_t_s"] - start_s == pytest.approx(want_t, abs=0.034)  # within a frame
        assert got["offset_ms"] == pytest.approx(DELAY_S * 1000, abs=5.0)
    ons = {(p["channel"], p["freq_hz"]): p for s, k, p in events if k == "tone_on"}
    assert set(ons) == {(c, f) for c, f in TONES.items()}, ons
    for p in ons.values():
        assert p["level_dbfs"] == pytest.approx(-20.0, abs=0.2)
        assert p["t_s"] == pytest.approx(start_s, abs=0.03)


def test_file_flash_beep_offset(sync_flv: Path) -> None:
    events: list[tuple[str, str, dict]] = []
    ps = probe_set(events)
    src = AvSource(sync_flv)
    run_source(src, ps.push)
    ps.finish()
    # ffmpeg writes the AAC priming into the FLV timeline: video starts 21 ms after audio (pts 0);
    # the real programme starts with the video, so that is the reference
    assert src.audio_start_s == pytest.approx(0.0, abs=0.001)
    assert src.video_start_s == pytest.approx(0.021, abs=0.002)
    check(events, src.video_start_s)


async def test_live_ingest_flash_beep_offset(sync_flv: Path, tmp_path: Path) -> None:
    """ffmpeg publishes the file in real time; IngestProbes, driven by the ingest's events, tails the
    recording as it grows and measures the claps while the stream is still live."""
    events: list[tuple[str, str, dict]] = []
    arrived: list[float] = []
    lock = threading.Lock()

    def emit(source: str, kind: str, payload: dict) -> None:  # called from the probe thread
        with lock:
            events.append((source, kind, payload))
            arrived.append(time.monotonic())

    probes = IngestProbes(emit, tones_hz=[440, 1000, 2000], video_rate_hz=5)
    ingest_events: list[str] = []

    def on_event(kind: str, payload: dict) -> None:
        ingest_events.append(kind)
        probes.on_ingest_event(kind, payload)

    server = IngestServer(IngestConfig(port=0, record_dir=tmp_path / "rec", allow_any=True), on_event)
    server.ctx.config.record_buffer_bytes = 0  # write-through, so the file grows tag by tag
    await server.start()
    proc = None
    try:
        url = f"rtmp://127.0.0.1:{server.port}/live/clapper"
        t0 = time.monotonic()
        proc = await asyncio.create_subprocess_exec(FFMPEG, "-v", "error", "-re", "-i", str(sync_flv), "-c", "copy",
                                                    "-f", "flv", url, stdout=asyncio.subprocess.DEVNULL,
                                                    stderr=asyncio.subprocess.PIPE)
        _, err = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 0, err.decode(errors="replace")
        t_end = time.monotonic()
        for _ in range(100):  # the ingest sees the TCP close, sends unpublish; the worker drains
            if any(k == "ended" for _, k, _ in events):
                break
            await asyncio.sleep(0.1)
        assert "unpublish" in ingest_events
        ended = [p for s, k, p in events if k == "ended"]
        assert ended and ended[0]["app"] == "live" and ended[0]["key"] == "clapper"
        assert not [p for s, k, p in events if k == "error"]
        # live: the first clap (2.0 s + 0.5 s search window) was measured while ffmpeg still published
        first_sync = next(t for (s, k, p), t in zip(events, arrived, strict=True) if k == "sync")
        assert first_sync - t0 < 5.0 < t_end - t0
        worker = probes.workers[("live", "clapper")]
        assert worker.source is not None
        check(events, worker.source.video_start_s)
    finally:
        probes.stop()
        if proc is not None and proc.returncode is None:
            proc.kill()
            with contextlib.suppress(Exception):
                await proc.wait()
        await server.stop()
