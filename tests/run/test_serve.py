"""`tally serve` over MQTT: bad control messages get an error event and change nothing; a good
start/done pair produces a scored run; status is retained and turns offline with the last will."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys

import aiohttp
import aiomqtt
import pytest

from monitor.broker import free_port
from monitor.bundle import read_events
from monitor.mqtt import topics
from monitor.mqtt.feed import MqttFeed
from monitor.run.daemon import Daemon
from tests.run.conftest import tapping

TASK = "R06.04.01.04-T01"


async def _send(address, node: str, *payloads: bytes) -> None:
    async with aiomqtt.Client(address.host, address.port) as client:
        for p in payloads:
            await client.publish(topics.command(node), p, qos=1)


async def _until(cond, timeout_s: float = 20.0) -> None:
    async with asyncio.timeout(timeout_s):
        while not cond():  # noqa: ASYNC110 - polling state owned by another task is the point
            await asyncio.sleep(0.05)


async def test_bad_commands_change_nothing_and_a_run_completes(mosquitto, tmp_path):
    work, gt = tmp_path / "work", tmp_path / "gt"
    work.mkdir()
    gt.mkdir()
    daemon = Daemon("srv", tmp_path / "runs", shared_ingest=False)
    feed = MqttFeed(mosquitto.address, "srv", tmp_path / "state", on_command=daemon.on_command)
    async with tapping(mosquitto.address, ["tally/srv/#"]) as tap:
        await feed.start()
        serving = asyncio.get_running_loop().create_task(daemon.serve(feed))
        await asyncio.wait_for(feed.connected.wait(), 10)
        await asyncio.sleep(0.3)  # the command subscription is in place
        start = {"cmd": "start", "task": TASK, "workdir": str(work), "gt": str(gt), "run": "r1"}
        await _send(mosquitto.address, "srv",
                    b"\xff not json",
                    json.dumps({"cmd": "start", "task": "R06.99.99.99-T99", "workdir": str(work), "gt": str(gt)}).encode(),
                    json.dumps({"cmd": "done"}).encode(),
                    json.dumps({"cmd": "reboot"}).encode())
        await _until(lambda: len(daemon.errors) == 4)
        assert not daemon.active and not any((tmp_path / "runs").iterdir())
        await _send(mosquitto.address, "srv", json.dumps(start).encode())
        await _until(lambda: daemon.active and daemon.session is not None and daemon.session.started.is_set())
        await _send(mosquitto.address, "srv", json.dumps({**start, "run": "r2"}).encode(),
                    json.dumps({"cmd": "abort", "run": "zzz"}).encode())
        await _until(lambda: len(daemon.errors) == 6)
        assert daemon.active and daemon.session.run_id == "r1"
        await _send(mosquitto.address, "srv", json.dumps({"cmd": "done", "run": "r1"}).encode())
        await _until(lambda: not daemon.active)
        await _send(mosquitto.address, "srv", json.dumps({**start, "run": "r2"}).encode())
        await _until(lambda: daemon.active and daemon.session.run_id == "r2" and daemon.session.started.is_set())
        await _send(mosquitto.address, "srv", json.dumps({"cmd": "abort"}).encode())
        await _until(lambda: not daemon.active)
        daemon.request_stop()
        await serving
        await feed.drained(10)
        await feed.stop()
        await asyncio.sleep(0.3)

    messages = [e["payload"]["error"] for e in daemon.errors]
    assert "malformed JSON" in messages[0]
    assert "unknown task" in messages[1]
    assert "no run is active" in messages[2]
    assert "unknown cmd" in messages[3]
    assert "already active" in messages[4]
    assert "not the active run" in messages[5]
    published = tap.json_on(topics.control_error("srv"))
    assert [p["payload"]["error"] for p in published] == messages
    assert [p["seq"] for p in published] == list(range(6))
    assert [r.end_reason for r in daemon.results] == ["mqtt:done", "mqtt:abort"]
    assert sorted(os.listdir(tmp_path / "runs")) == ["r1", "r2"]
    aborted = json.loads((tmp_path / "runs" / "r2" / "report.json").read_text())
    assert aborted["run"]["ended"] == "mqtt:abort" and aborted["run"]["missing"] == []
    report = json.loads((tmp_path / "runs" / "r1" / "report.json").read_text())
    assert tap.json_on(topics.score("srv", "r1"))[-1] == report
    states = [(s["state"], s.get("run")) for s in tap.json_on(topics.status("srv"))]
    assert ("running", "r1") in states and ("running", "r2") in states and states[-1][0] == "offline"


@pytest.mark.slow
async def test_last_will_marks_a_killed_daemon_offline(mosquitto, tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "monitor.cli", "serve", "--mqtt",  # noqa: ASYNC220
                             f"mqtt://127.0.0.1:{mosquitto.port}", "--node", "doomed", "--runs",
                             str(tmp_path / "runs"), "--state", str(tmp_path / "state")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        async with tapping(mosquitto.address, [topics.status("doomed")]) as tap:
            # a fresh interpreter importing the whole CLI is slow on a loaded machine
            await _until(lambda: any(s.get("state") == "idle" for s in tap.json_on(topics.status("doomed"))), 120)
            os.kill(proc.pid, signal.SIGKILL)
            # keepalive is 5 s: the broker gives up on the client after 1.5x that and publishes the will
            await _until(lambda: tap.json_on(topics.status("doomed"))[-1].get("state") == "offline", 15)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait()


@pytest.mark.broker
@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")
async def test_ingest_stays_up_between_runs_and_feeds_the_active_run(mosquitto, tmp_path):
    work, gt = tmp_path / "work", tmp_path / "gt"
    work.mkdir()
    gt.mkdir()
    port = free_port()
    daemon = Daemon("shr", tmp_path / "runs", ingest_port=port)
    feed = MqttFeed(mosquitto.address, "shr", tmp_path / "state", on_command=daemon.on_command)
    await feed.start()
    serving = asyncio.get_running_loop().create_task(daemon.serve(feed))
    await asyncio.wait_for(feed.connected.wait(), 10)
    await _until(lambda: "ingest" in daemon.shared_needs())
    ingest = daemon.host.running[0]

    async def publish(key: str) -> int:
        proc = await asyncio.create_subprocess_exec(
            "ffmpeg", "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i",
            "testsrc2=size=160x120:rate=15", "-t", "2", "-c:v", "libx264", "-preset", "ultrafast",
            "-f", "flv", f"rtmp://127.0.0.1:{port}/live/{key}",
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        return await asyncio.wait_for(proc.wait(), 30)

    for run_id in ("s1", "s2"):
        await daemon.on_command(json.dumps({"cmd": "start", "task": "R06.12.01.01-T05", "workdir": str(work),
                                            "gt": str(gt), "run": run_id}).encode())
        await _until(lambda: daemon.session is not None and daemon.session.started.is_set())
        assert await publish("test_key") == 0
        await daemon.on_command(json.dumps({"cmd": "done"}).encode())
        await _until(lambda: not daemon.active)
    assert daemon.host.running[0] is ingest, "the same ingest served both runs"
    assert await publish("test_key") == 0  # between runs: accepted, recorded in no bundle
    daemon.request_stop()
    await serving
    await feed.stop()

    for run_id in ("s1", "s2"):
        events = read_events(tmp_path / "runs" / run_id / "events.jsonl").events
        kinds = [(e.source, e.kind) for e in events]
        assert ("run", "component_shared") in kinds
        assert [e.payload["key"] for e in events if (e.source, e.kind) == ("rtmp", "publish")] == ["test_key"]
        seqs = [e.seq for e in events]
        assert seqs == list(range(len(seqs))), "forwarded events get the run's own gap-free numbers"
        report = json.loads((tmp_path / "runs" / run_id / "report.json").read_text())
        assert report["run"]["components"]["shared"] == ["ingest"]
        assert "ingest" not in report["run"]["components"]["started"]


@pytest.mark.slow
async def test_sigkilled_daemon_mid_run_leaves_a_replayable_bundle(mosquitto, tmp_path):
    work, gt, runs = tmp_path / "work", tmp_path / "gt", tmp_path / "runs"
    work.mkdir()
    gt.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "monitor.cli", "serve", "--mqtt",  # noqa: ASYNC220
                             f"mqtt://127.0.0.1:{mosquitto.port}", "--node", "victim", "--runs", str(runs),
                             "--state", str(tmp_path / "state"), "--ingest", "127.0.0.1:0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        async with tapping(mosquitto.address, [topics.status("victim")]) as tap:
            await _until(lambda: any(s.get("state") == "idle" for s in tap.json_on(topics.status("victim"))), 120)
        await _send(mosquitto.address, "victim", json.dumps(
            {"cmd": "start", "task": "R06.12.01.01-T05", "workdir": str(work), "gt": str(gt), "run": "k1"}).encode())
        events = runs / "k1" / "events.jsonl"
        await _until(lambda: events.exists() and b'"kind":"waiting"' in events.read_bytes(), 60)
        (work / "half.txt").write_text("partial")
        await asyncio.sleep(0.3)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait()
    replay = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "monitor.cli", "replay",
                                                      str(runs / "k1"), "--json"], capture_output=True, timeout=120)
    assert replay.returncode == 0, replay.stderr.decode()
    report = json.loads(replay.stdout)
    assert report["run"]["ended"] is None and not report["run"]["clean"]
    assert report["run"]["components"]["shared"] == ["ingest"]
    assert any(m.startswith("end record") for m in report["run"]["missing"])
    assert "stop record of component audit" in report["run"]["missing"]
    # The live checks of T05 could not be judged from a run with no stream: error, not the agent's 0.
    # The shared ingest's `listening` was repeated into the run, so "no stream arrived" is the agent's
    # failure, not "could not judge".
    statuses = {c["name"]: c["status"] for c in report["checks"]}
    assert statuses["encoder_at_ingest"] == "fail" and statuses["duration"] == "fail", report["checks"]
    assert not (runs / "k1" / "report.json").exists()


async def test_serve_with_obs_proxy_records_a_scripts_requests_into_the_active_run(mosquitto, tmp_path):
    """`tally serve --obs URL --obs-proxy-port P`: the proxy lives as long as the daemon; each run gets
    its `listening` announcement and the requests a script sends through it during the run."""
    from tests.obs.test_ws_proxy import FakeObs

    work, gt = tmp_path / "work", tmp_path / "gt"
    work.mkdir()
    gt.mkdir()
    obs = FakeObs()
    await obs.start()
    proxy_port = free_port()
    daemon = Daemon("prx", tmp_path / "runs", shared_ingest=False, obs_url=f"ws://127.0.0.1:{obs.port}",
                    obs_proxy_port=proxy_port)
    feed = MqttFeed(mosquitto.address, "prx", tmp_path / "state", on_command=daemon.on_command)
    await feed.start()
    serving = asyncio.get_running_loop().create_task(daemon.serve(feed))
    try:
        await asyncio.wait_for(feed.connected.wait(), 10)
        await _until(lambda: "obs" in daemon.shared_needs())
        for run_id, scene in (("p1", "Live"), ("p2", "BRB")):
            await daemon.on_command(json.dumps({"cmd": "start", "task": "R06.12.01.01-T17", "workdir": str(work),
                                                "gt": str(gt), "run": run_id}).encode())
            await _until(lambda: daemon.session is not None and daemon.session.started.is_set())
            async with aiohttp.ClientSession() as http, http.ws_connect(f"ws://127.0.0.1:{proxy_port}") as ws:
                await ws.receive_json()                                      # Hello
                await ws.send_json({"op": 6, "d": {"requestType": "CreateScene", "requestId": 1,
                                                   "requestData": {"sceneName": scene}}})
                await ws.receive_json()
            await asyncio.sleep(0.3)
            await daemon.on_command(json.dumps({"cmd": "done"}).encode())
            await _until(lambda: not daemon.active)
    finally:
        daemon.request_stop()
        await serving
        await feed.stop()
        await obs.stop()
    for run_id, scene, ok in (("p1", "Live", False), ("p2", "BRB", True)):
        events = read_events(tmp_path / "runs" / run_id / "events.jsonl").events
        proxied = [e.payload for e in events if e.source == "obs-proxy"]
        assert proxied[0] == {"host": "127.0.0.1", "port": proxy_port, "upstream": f"ws://127.0.0.1:{obs.port}"}
        reqs = [(p["request_type"], p["names"], p["ok"]) for p in proxied if "request_type" in p]
        assert reqs == [("CreateScene", {"sceneName": scene}, ok)], reqs     # only this run's script
