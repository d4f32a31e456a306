"""One real 60 s OBS 29 stream, two proofs (it used to be two streams: this one and
tests/rtmp/test_obs_stream.py; OBS streaming 1080p is the suite's most expensive minute).

- R06.12.01.01-T05 with a real oracle: headless OBS configured as the task asks (Advanced output,
  x264 CBR 6000 kbit/s, keyframe 2 s, 1080p30, AAC 160 kbit/s) streams 60 s into tally's ingest
  during a real run (`tally demo --obs`'s path); the verifier scores OBS's saved profile and the
  ingest's measurements at >= 99.
- The ingest with a real encoder: while OBS streams, `GET /api/streams` (rtmp.api.ApiServer on the
  run's own ingest server) shows what OBS was configured with: size, fps, CBR bitrate, keyframe
  interval, AAC 48 kHz stereo; OBS's onMetaData claims match; the ingest's recording decodes cleanly.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from rich.console import Console

from monitor.bundle import Bundle
from monitor.demo import obs_profile, run_demo
from rtmp.api import ApiServer
from tests.app_health import AppHealth, obs_health
from tests.rtmp.helpers import decode_errors

pytestmark = [pytest.mark.obs, pytest.mark.slow, pytest.mark.timeout(300),
              pytest.mark.skipif(shutil.which("obs") is None or shutil.which("Xvfb") is None,
                                 reason="needs obs-studio and Xvfb (the Makefile installs them)")]

STREAM_S = 61.0
API_AT_S = STREAM_S - 4  # read the API while OBS is still live, after ~57 s of stream


async def _api_while_live(servers: list[Any], started: asyncio.Event) -> list[dict[str, Any]]:
    """Serve the API on the run's ingest once it exists; return /api/streams once the stream has been
    live API_AT_S (empty if the stream ended first)."""
    await started.wait()
    api = ApiServer(servers[0], "127.0.0.1", 0)
    await api.start()
    seen_live = False
    try:
        async with aiohttp.ClientSession() as http:
            while True:
                async with http.get(f"http://127.0.0.1:{api.port}/api/streams") as resp:
                    streams = (await resp.json())["streams"]
                live = [s for s in streams if s["state"] == "live"]
                if live and live[0]["duration_s"] >= API_AT_S:
                    return streams
                if seen_live and not live:
                    return []
                seen_live = seen_live or bool(live)
                await asyncio.sleep(0.5)
    finally:
        await api.stop()


async def _stream_once(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], list[dict[str, Any]],
                                                                          list[Any], AppHealth]:
    """One 61 s OBS stream through a real run: (demo result, API view while live, servers, OBS health)."""
    from monitor.run.wiring import IngestComponent

    servers: list[Any] = []
    started = asyncio.Event()
    start = IngestComponent.start

    async def start_and_keep(self: IngestComponent, bus: Any) -> None:  # a handle on the run's ingest server
        await start(self, bus)
        servers.append(self.server)
        started.set()

    monkeypatch.setattr(IngestComponent, "start", start_and_keep)
    api_task = asyncio.create_task(_api_while_live(servers, started))
    try:
        res = await run_demo(root, STREAM_S, tui=False, hold_s=0, console=Console(quiet=True), use_obs=True)
        streams = await asyncio.wait_for(api_task, 5)
    finally:
        api_task.cancel()
        monkeypatch.setattr(IngestComponent, "start", start)
    # the demo copies OBS's config dir, logs included, into the work dir after OBS closed
    return res, streams, servers, obs_health(root / "workdir" / "obs-studio" / "logs")


async def test_real_obs_stream_t05_oracle_and_ingest_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a low score from an OBS that could not keep up is retried once, then skipped with OBS's numbers
    # (tests/app_health.py); from an OBS that kept up it fails below: then the scorer misjudged
    res, streams, servers, health = await _stream_once(tmp_path / "try1", monkeypatch)
    if res["report"]["score"] < 99 and not health.kept_up:
        print(f"try 1/2: {health.describe()} — streaming again", flush=True)
        res, streams, servers, health = await _stream_once(tmp_path / "try2", monkeypatch)
        if res["report"]["score"] < 99 and not health.kept_up:
            pytest.skip(f"OBS could not keep up on both tries, the scorer was not judged: {health.describe()}")

    # T05: OBS's saved profile + the ingest's measurements score as the oracle
    report = res["report"]
    checks = {c["name"]: c for c in report["checks"]}
    assert report["score"] >= 99, {n: (c["status"], c["message"], c["evidence"]) for n, c in checks.items()}
    ev = checks["encoder_at_ingest"]["evidence"]
    assert ev["width"] == 1920 and ev["height"] == 1080

    # the ingest API shows what OBS was configured with
    port = servers[0].port
    prof = obs_profile(port)
    video_cfg, enc = prof["basic.ini"]["Video"], prof["streamEncoder.json"]
    width, height, fps = int(video_cfg["OutputCX"]), int(video_cfg["OutputCY"]), int(video_cfg["FPSInt"])
    kbps, keyint_s = enc["bitrate"], enc["keyint_sec"]
    assert len(streams) == 1, f"API never showed the stream live for {API_AT_S} s: {streams}"
    [s] = streams
    assert s["state"] == "live" and s["duration_s"] > STREAM_S - 6
    v, a = s["video"], s["audio"]
    assert (v["codec"], v["width"], v["height"]) == ("h264", width, height)
    assert v["fps"] == pytest.approx(fps, abs=0.3)
    assert v["bitrate_bps"] == pytest.approx(kbps * 1000, rel=0.05)
    assert v["keyframe_interval_s"]["mean"] == pytest.approx(keyint_s, abs=0.05)
    assert a["codec"] == "aac" and a["sample_rate_hz"] == 48000 and a["channels"] == 2

    # what OBS said on the wire (the run's recorded rtmp events)
    rtmp = [e for e in Bundle.open(Path(res["bundle"])).events if e.source == "rtmp"]
    of = {k: [e.payload for e in rtmp if e.kind == k] for k in ("connect", "publish", "unpublish")}
    [pub], [unp] = of["publish"], of["unpublish"]
    assert pub["key"] == prof["service.json"]["settings"]["key"] and "FMLE" in of["connect"][0]["flash_ver"]
    claimed = unp["stats"]["claimed"]  # OBS's onMetaData, next to what was measured
    assert claimed["width"] == width and claimed["videodatarate"] == pytest.approx(kbps, rel=0.01)
    assert unp["reason"] in ("FCUnpublish", "deleteStream", "closed")
    assert decode_errors(Path(unp["recording"]["path"])) == ""
