"""`tally run` end to end with mosquitto: a synthetic live component, cp and an "app" writing outputs,
done over MQTT. The bundle, the MQTT stream and the report agree; replay gives the same bytes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys

import aiomqtt
import pytest

from monitor.bundle import read_events
from monitor.bus import EventBus
from monitor.cli import main as cli_main
from monitor.mqtt import topics
from monitor.mqtt.feed import MqttFeed
from monitor.run.rescore import report_bytes, score_bundle
from monitor.run.session import RunConfig, RunSession
from tests.run.conftest import tapping

TASK = "R06.04.01.04-T01"  # shortform; live: audit; forbidden writers ffmpeg/ffprobe
APP = "import sys; open(sys.argv[1], 'w').write('rendered by the app')"


class Ticker:
    """A stand-in live component: emits n numbered ticks, then says it is finished."""

    name = "synthetic"

    def __init__(self, n: int) -> None:
        self.n = n
        self.finished = asyncio.Event()
        self._task: asyncio.Task | None = None

    async def start(self, bus: EventBus) -> None:
        async def tick() -> None:
            for i in range(self.n):
                bus.emit("synthetic", "tick", {"i": i})
                await asyncio.sleep(0.005)
            self.finished.set()
        self._task = asyncio.get_running_loop().create_task(tick())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


@pytest.mark.broker
async def test_run_bundle_mqtt_and_report_agree(mosquitto, tmp_path, capsysbinary):
    work, gt, bundle = tmp_path / "work", tmp_path / "gt", tmp_path / "bundle"
    (work / "output").mkdir(parents=True)
    gt.mkdir()
    ticker = Ticker(60)
    config = RunConfig(task_id=TASK, workdir=work, gt=gt, bundle_dir=bundle, node="e2e", run_id="run-1",
                       timeout_s=60, install_signals=False, extra_components=[ticker])
    session = RunSession(config)
    session.feed = MqttFeed(mosquitto.address, "e2e", tmp_path / "outbox", on_command=session.on_command)
    session.own_feed = True
    async with tapping(mosquitto.address, ["tally/e2e/#"]) as tap:
        running = asyncio.get_running_loop().create_task(session.execute())
        async with asyncio.timeout(20):
            await session.started.wait()
            await session.feed.connected.wait()
            await ticker.finished.wait()
        src = tmp_path / "src.txt"
        src.write_text("copied by cp")
        await asyncio.to_thread(subprocess.run, ["cp", str(src), str(work / "output" / "copied.txt")], check=True)
        await asyncio.to_thread(subprocess.run, [sys.executable, "-c", APP, str(work / "output" / "render.txt"),
                                                 "--e2e-app"], check=True)
        await asyncio.sleep(0.2)
        async with aiomqtt.Client(mosquitto.address.host, mosquitto.address.port) as client:
            await client.publish(topics.command("e2e"), b"{not json", qos=1)
            await client.publish(topics.command("e2e"), json.dumps({"cmd": "done", "run": "other"}), qos=1)
            await client.publish(topics.command("e2e"), json.dumps({"cmd": "done", "run": "run-1"}), qos=1)
        async with asyncio.timeout(30):
            result = await running
        await asyncio.sleep(0.3)

    assert result.end_reason == "mqtt:done"
    recorded = [e.to_json() for e in read_events(bundle / "events.jsonl").events]
    ticks = [json.loads(r) for r in recorded if '"source":"synthetic"' in r]
    assert [t["payload"]["i"] for t in ticks] == list(range(60))
    # MQTT carried every event line of the bundle, in order, on its own topic.
    mqtt_lines: dict[int, str] = {}
    for topic, payload in tap.on("tally/e2e/run/run-1/"):
        if topic.endswith("/score"):
            continue
        obj = json.loads(payload)
        assert topic == topics.event("e2e", "run-1", obj["source"], obj["kind"])
        mqtt_lines.setdefault(obj["seq"], payload)
    assert [mqtt_lines[s] for s in sorted(mqtt_lines)] == recorded
    # The two bad control messages became error events and changed nothing else.
    errors = [json.loads(r)["payload"]["error"] for r in recorded if '"source":"control"' in r]
    assert len(errors) == 2 and "malformed JSON" in errors[0] and "not the active run" in errors[1]

    manifest = json.loads((bundle / "manifest.json").read_text())
    arts = manifest["artifacts"]
    assert arts["output/copied.txt"]["writer"]["exe"].endswith("/cp")
    assert "--e2e-app" in arts["output/render.txt"]["writer"]["cmdline"]
    assert arts["output/render.txt"]["size_bytes"] == len("rendered by the app")
    assert manifest["end"] == {"reason": "mqtt:done"} and manifest["audit"]["mode"] == "fanotify"

    report_on_disk = (bundle / "report.json").read_bytes()
    assert report_on_disk == report_bytes(score_bundle(bundle))
    assert cli_main(["replay", str(bundle), "--json"]) == 0
    assert capsysbinary.readouterr().out == report_on_disk
    report = json.loads(report_on_disk)
    assert report["run"]["clean"] is True and report["run"]["missing"] == []
    assert report["run"]["event_count"] == len(recorded)
    scores = tap.json_on(topics.score("e2e", "run-1"))
    assert scores and scores[-1] == report
    statuses = tap.json_on(topics.status("e2e"))
    assert statuses[-1]["state"] == "idle" and statuses[-1]["last_run"] == "run-1"
    assert any(s["state"] == "running" for s in statuses)
