"""A real headless OBS (Xvfb) streams to the run's ingest while its observer watches (task T05).

The test plays the agent through its own obsws-python client (StartStream/StopStream), connected
to the run's obs-websocket proxy (`--obs-proxy-port`) as a T17 script would be; the run's
observer is read-only. The bundle holds OBS's stream-state events and the ingest's publish of the
same key; the report's server_config check reads the profile in the work dir and its encoder check
the stream the ingest measured.
"""

from __future__ import annotations

import asyncio
import json
import shutil

import obsws_python as obsws
import pytest

from monitor.broker import free_port
from monitor.bundle import read_events
from monitor.run.session import RunConfig, RunSession

pytestmark = [
    pytest.mark.obs, pytest.mark.slow,
    pytest.mark.skipif(shutil.which("obs") is None or shutil.which("Xvfb") is None,
                       reason="obs-studio and xvfb not installed"),
]
TASK = "R06.12.01.01-T05"


async def test_obs_streams_to_the_run_ingest(tmp_path, monkeypatch):
    from monitor.obs import ObsInstance

    monkeypatch.setenv("TALLY_OBS_PASSWORD", "")
    ingest_port, proxy_port = free_port(), free_port()
    home = tmp_path / "home"
    home.mkdir()
    service = {"type": "rtmp_custom",
               "settings": {"server": f"rtmp://127.0.0.1:{ingest_port}/live", "key": "test_key",
                            "use_auth": False, "bwtest": False}}
    profile = {"service.json": json.dumps(service),
               "basic.ini": {"Video": {"BaseCX": 320, "BaseCY": 240, "OutputCX": 320, "OutputCY": 240,
                                       "FPSType": 0, "FPSCommon": "30"},
                             "SimpleOutput": {"VBitrate": 500, "ABitrate": 128, "Preset": "ultrafast"}}}
    obs = ObsInstance(None, profile=profile, home=home, ws_password="")
    async with obs:  # close() also ends its Xvfb
        work = obs.config_dir.parent  # the work dir holds obs-studio/basic/profiles/
        gt = tmp_path / "gt"
        gt.mkdir()
        session = RunSession(RunConfig(task_id=TASK, workdir=work, gt=gt, bundle_dir=tmp_path / "b",
                                       obs_url=obs.ws_url, ingest_port=ingest_port, timeout_s=120,
                                       obs_proxy_port=proxy_port, install_signals=False))
        running = asyncio.get_running_loop().create_task(session.execute())
        await asyncio.wait_for(session.started.wait(), 30)
        agent = await asyncio.to_thread(obsws.ReqClient, host="127.0.0.1", port=proxy_port, password="",
                                        timeout=10)
        try:
            await asyncio.to_thread(agent.start_stream)
            await asyncio.sleep(4.0)
            await asyncio.to_thread(agent.stop_stream)
            await asyncio.sleep(1.5)
        finally:
            await asyncio.to_thread(agent.disconnect)
        session.done.finish("test")
        result = await asyncio.wait_for(running, 60)

    events = read_events(tmp_path / "b" / "events.jsonl").events
    publishes = [e.payload for e in events if (e.source, e.kind) == ("rtmp", "publish")]
    assert [p["key"] for p in publishes] == ["test_key"], [e.kind for e in events if e.source == "rtmp"]
    obs_types = [e.payload.get("type") for e in events if (e.source, e.kind) == ("obs", "event")]
    assert "StreamStateChanged" in obs_types, sorted(set(obs_types))
    stream_start = next(e for e in events if (e.source, e.kind) == ("obs", "event")
                        and e.payload.get("type") == "StreamStateChanged")
    publish = next(e for e in events if (e.source, e.kind) == ("rtmp", "publish"))
    # OBS announced the stream and the ingest saw it within a few seconds of each other.
    assert abs(publish.mono_ns - stream_start.mono_ns) / 1e9 < 5
    checks = {c["name"]: c for c in result.report["checks"]}
    # Custom server and key read from the profile OBS saved; the server URL is on a test port, so partial.
    assert checks["server_config"]["status"] == "partial", checks["server_config"]
    enc = checks["encoder_at_ingest"]["evidence"]
    assert (enc["width"], enc["height"]) == (320, 240)
    assert result.report["run"]["components"]["started"] == ["audit", "ingest", "obs"]
    # the agent's requests, as the proxy recorded them into the bundle, with OBS's answers
    proxied = [(e.payload["request_type"], e.payload["ok"]) for e in events
               if (e.source, e.kind) == ("obs-proxy", "ws/request")]
    assert proxied == [("StartStream", True), ("StopStream", True)], proxied
    listening = [e.payload for e in events if (e.source, e.kind) == ("obs-proxy", "listening")]
    assert listening == [{"host": "127.0.0.1", "port": proxy_port, "upstream": f"ws://127.0.0.1:{obs.ws_port}"}]
