"""One real 60 s OBS 29 stream, two proofs (it used to be two streams: this one and
tests/rtmp/test_obs_stream.py; OBS streaming 1080p is the suite's most expensive minute).

- R06.12.01.01-T05 with a real oracle: headless OBS configured as the task asks (Advanced output,
  x264 CBR 6000 kbit/s, keyframe 2 s, 1080p30, AAC 160 kbit/s) streams 60 s into tally's ingest
  during a real run (`tally demo --obs`'s path); the verifier scores OBS's saved profile and the
  ingest's measurements at >= 99.
- The ingest with a real encoder: while OBS streams, `GET /api/streams` (rtmp.api.ApiServer on the
  run's own ingest server) shows what OBS was configured with: size, fps, CBR bitrate, keyframe
  interval, AAC 48 kHz stereo; OBS's onMetaData claims match; the ingest's recording decodes cleanly.
- T05's real-app near miss (issue 21), in the same OBS session once the stream has stopped: the
  stream key set again with a trailing space (pasted with it: the GUI shows the same key) over
  obs-websocket; OBS saves service.json at once, the test keeps that profile and puts the key back
  before OBS closes. Scored with the run's own events, it loses exactly server_config's key item;
  every other check scores as the oracle's. (An encoder near miss at the ingest, a bitrate or
  keyframe interval just outside its line, needs another 60 s stream: not done, for the budget.)
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from rich.console import Console

import monitor.demo
from monitor.bundle import Bundle
from monitor.demo import obs_profile, run_demo
from monitor.obs.launcher import ObsInstance
from rtmp.api import ApiServer
from tests.app_health import AppHealth, obs_health
from tests.rtmp.helpers import decode_errors
from verifiers.scoring import score_task

pytestmark = [pytest.mark.obs, pytest.mark.slow, pytest.mark.timeout(300),
              pytest.mark.skipif(shutil.which("obs") is None or shutil.which("Xvfb") is None,
                                 reason="needs obs-studio and Xvfb (the Makefile installs them)")]

STREAM_S = 61.0
API_AT_S = STREAM_S - 4  # read the API while OBS is still live, after ~57 s of stream
T05 = "R06.12.01.01-T05"
NEAR_KEY_SUFFIX = " "  # the near miss: the stream key pasted with a trailing space


def _service_json(profile_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((profile_dir / "service.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _near_miss_key(obs_run: ObsInstance, near_profile: Path) -> None:
    """In the demo's OBS session after its stream: the key with a trailing space, OBS saves it (kept in
    `near_profile`), then the key as it was, so OBS saves the oracle's profile on exit."""
    import obsws_python as obsws

    c = obsws.ReqClient(host="127.0.0.1", port=obs_run.ws_port, password="", timeout=10)
    try:
        svc = c.get_stream_service_settings()
        kind, settings = svc.stream_service_type, dict(svc.stream_service_settings)
        for key in (settings["key"] + NEAR_KEY_SUFFIX, settings["key"]):
            c.set_stream_service_settings(kind, {**settings, "key": key})
            deadline = time.monotonic() + 10
            while _service_json(obs_run.profile_dir).get("settings", {}).get("key") != key:
                assert time.monotonic() < deadline, f"OBS did not save service.json with key {key!r}"
                time.sleep(0.1)
            if key != settings["key"]:
                shutil.copytree(obs_run.profile_dir, near_profile)
    finally:
        c.disconnect()


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
    """One 61 s OBS stream through a real run: (demo result, API view while live, servers, OBS health).
    The demo's OBS also saves the near-miss profile into root/near_profile after the stream."""
    from monitor.run.wiring import IngestComponent

    servers: list[Any] = []
    started = asyncio.Event()
    start = IngestComponent.start
    obs_runs: list[ObsInstance] = []
    astart, drive = ObsInstance.astart, monitor.demo.drive_obs

    async def astart_and_keep(self: ObsInstance) -> None:  # a handle on the demo's OBS
        await astart(self)
        obs_runs.append(self)

    def drive_then_near_miss(ws_url: str, tone: Path, seconds: float) -> None:
        drive(ws_url, tone, seconds)
        _near_miss_key(obs_runs[0], root / "near_profile")

    monkeypatch.setattr(ObsInstance, "astart", astart_and_keep)
    monkeypatch.setattr(monitor.demo, "drive_obs", drive_then_near_miss)

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
        monkeypatch.setattr(ObsInstance, "astart", astart)
        monkeypatch.setattr(monitor.demo, "drive_obs", drive)
    # the demo copies OBS's config dir, logs included, into the work dir after OBS closed
    return res, streams, servers, obs_health(root / "workdir" / "obs-studio" / "logs")


async def test_real_obs_stream_t05_oracle_and_ingest_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a low score from an OBS that could not keep up is retried once, then skipped with OBS's numbers
    # (tests/app_health.py); from an OBS that kept up it fails below: then the scorer misjudged
    root = tmp_path / "try1"
    res, streams, servers, health = await _stream_once(root, monkeypatch)
    if res["report"]["score"] < 99 and not health.kept_up:
        print(f"try 1/2: {health.describe()} — streaming again", flush=True)
        root = tmp_path / "try2"
        res, streams, servers, health = await _stream_once(root, monkeypatch)
        if res["report"]["score"] < 99 and not health.kept_up:
            pytest.skip(f"OBS could not keep up on both tries, the scorer was not judged: {health.describe()}")

    # T05: OBS's saved profile + the ingest's measurements score as the oracle
    report = res["report"]
    checks = {c["name"]: c for c in report["checks"]}
    assert report["score"] >= 99, {n: (c["status"], c["message"], c["evidence"]) for n, c in checks.items()}
    ev = checks["encoder_at_ingest"]["evidence"]
    assert ev["width"] == 1920 and ev["height"] == 1080

    # the near miss: the run's work dir with the profile OBS saved with the key's trailing space,
    # scored with the run's own events beside the run's work dir scored the same way: only
    # server_config's key item (1 of 2) is lost
    bundle = Bundle.open(Path(res["bundle"]))
    near_work = root / "near_workdir"
    shutil.copytree(root / "workdir", near_work)
    [prof_dir] = [p for p in (near_work / "obs-studio" / "basic" / "profiles").iterdir() if (p / "service.json").exists()]
    shutil.copy2(root / "near_profile" / "service.json", prof_dir / "service.json")
    oracle, near = ({c["name"]: c for c in score_task(T05, work, root / "gt", events=[e.to_dict() for e in bundle.events],
                                                      manifest=bundle.manifest).to_dict()["checks"]}
                    for work in (root / "workdir", near_work))
    assert near["server_config"]["score"] == 0.5 and near["server_config"]["message"] == "wrong key", near["server_config"]
    assert {n: c["score"] for n, c in near.items() if n != "server_config"} == {
        n: c["score"] for n, c in oracle.items() if n != "server_config"}, (near, oracle)
    print(f"T05 real OBS near miss (key with a trailing space): server_config {near['server_config']['score']}, "
          f"oracle re-scored {sum(c['score'] * c['weight'] for c in oracle.values()):.2f} / "
          f"{sum(c['weight'] for c in oracle.values())}", flush=True)

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
