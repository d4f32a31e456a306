"""ffmpeg → the RTMP ingest inside `tally run` (task T05: app live, key test_key) → bundle, MQTT, report."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest

from monitor.broker import free_port
from monitor.bundle import read_events
from monitor.mqtt.feed import MqttFeed
from monitor.run.session import RunConfig, RunSession
from tests.run.conftest import tapping

TASK = "R06.12.01.01-T05"


@pytest.mark.broker
@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")
async def test_ffmpeg_publish_recorded_in_bundle_mqtt_and_report(mosquitto, tmp_path):
    work, gt, bundle = tmp_path / "work", tmp_path / "gt", tmp_path / "bundle"
    work.mkdir()
    gt.mkdir()
    port = free_port()
    config = RunConfig(task_id=TASK, workdir=work, gt=gt, bundle_dir=bundle, node="ing", run_id="ing-1",
                       timeout_s=60, ingest_port=port, install_signals=False)
    session = RunSession(config)
    session.feed = MqttFeed(mosquitto.address, "ing", tmp_path / "outbox", on_command=session.on_command)
    session.own_feed = True
    async with tapping(mosquitto.address, ["tally/ing/run/#"]) as tap:
        running = asyncio.get_running_loop().create_task(session.execute())
        async with asyncio.timeout(20):
            await session.started.wait()
        for key, expect_ok in (("wrong_key", False), ("test_key", True)):
            ffmpeg = await asyncio.create_subprocess_exec(
                "ffmpeg", "-hide_banner", "-loglevel", "error", "-re",
                "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                "-t", "3", "-c:v", "libx264", "-preset", "ultrafast", "-g", "60", "-b:v", "500k",
                "-c:a", "aac", "-b:a", "128k", "-f", "flv", f"rtmp://127.0.0.1:{port}/live/{key}",
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
            async with asyncio.timeout(30):
                _, err = await ffmpeg.communicate()
            assert (ffmpeg.returncode == 0) == expect_ok, err.decode()[-500:]
        (bundle / "done").touch()
        async with asyncio.timeout(30):
            result = await running
        await asyncio.sleep(0.3)

    assert result.end_reason == "done-file"
    events = [e for e in read_events(bundle / "events.jsonl").events]
    rtmp = [e for e in events if e.source == "rtmp"]
    kinds = {e.kind for e in rtmp}
    assert {"listening", "connect", "publish", "publish_rejected", "unpublish", "stats"} <= kinds
    assert [e.payload["key"] for e in rtmp if e.kind == "publish"] == ["test_key"]
    stats = [e.payload for e in rtmp if e.kind == "stats"]
    assert stats, "the 1 Hz stats reached the bundle"
    unavailable = [e.payload for e in events if e.kind == "component_unavailable"]
    assert [u["need"] for u in unavailable] == ["obs"]  # no --obs URL in this test
    flv = list((bundle / "captures" / "rtmp").rglob("*.flv"))
    assert len(flv) == 1 and flv[0].stat().st_size > 10_000
    # The MQTT stream carried the same lines, including every rtmp event.
    mqtt = {}
    for _, payload in tap.on("tally/ing/run/ing-1/"):
        obj = json.loads(payload)
        if "seq" in obj:
            mqtt.setdefault(obj["seq"], payload)
    assert [mqtt[s] for s in sorted(mqtt)] == [e.to_json() for e in events]
    report = json.loads((bundle / "report.json").read_text())
    assert report["run"]["event_count"] == len(events)
    assert report["inputs"]["event_count"] == len(events)
    assert report["run"]["components"]["started"] == ["audit", "ingest"]
    # The scorer read the recorded stream: what ffmpeg was told to send is what the report measured.
    checks = {c["name"]: c for c in report["checks"]}
    enc = checks["encoder_at_ingest"]["evidence"]
    assert (enc["width"], enc["height"]) == (320, 240)
    assert enc["fps"] == pytest.approx(30, abs=0.5)
    assert enc["keyframe_interval_s"] == pytest.approx(2.0, abs=0.1)
    audio = checks["audio"]["evidence"]
    assert audio["codec"] == "aac" and audio["sample_rate_hz"] == 48000
    assert checks["duration"]["evidence"]["duration_s"] == pytest.approx(3.0, abs=0.5)
    assert checks["duration"]["evidence"]["stopped"] is True
