"""Issue 20 items 1, 2, 6: `tally serve` against hostile control messages and a broker restart,
with a real mosquitto. After each attack the daemon must answer the next command (its reply on
`tally/<node>/control/error`), a concurrent good run must lose no event, and the feed must come
back after the broker does. Latencies are printed (`-s`) for the note; the waits are hang guards."""

from __future__ import annotations

import asyncio
import json
import time

import aiomqtt
import pytest

from monitor.bundle import read_events
from monitor.mqtt import topics
from monitor.mqtt.feed import MqttFeed
from monitor.outbox import MAX_RECORD_BYTES, Outbox
from monitor.run.daemon import Daemon
from tests.hostile.conftest import tapping

TASK = "R06.04.01.04-T01"  # no live needs: a run is only the lifecycle
NODE = "hx"


async def _until(cond, timeout_s: float = 30.0) -> None:
    async with asyncio.timeout(timeout_s):
        while not cond():  # noqa: ASYNC110 - polling state owned by another task is the point
            await asyncio.sleep(0.02)


async def _send(address, *payloads: bytes) -> None:
    async with aiomqtt.Client(address.host, address.port) as client:
        for p in payloads:
            await client.publish(topics.command(NODE), p, qos=1)


def _replies(tap, rid: str) -> list[dict]:
    return [p for p in tap.json_on(topics.control_error(NODE)) if p["payload"].get("id") == rid]


async def _probe(address, tap, rid: str) -> float:
    """Send `done` with an id while idle-or-running-another-run; seconds until its reply is seen."""
    t0 = time.monotonic()
    await _send(address, json.dumps({"cmd": "done", "run": "not-this-one", "id": rid}).encode())
    await _until(lambda: _replies(tap, rid))
    return time.monotonic() - t0


def _attacks(tmp_path, work, gt) -> dict[str, bytes]:
    return {
        "1.2 MB command": json.dumps({"cmd": "done", "k" * 1_200_000: 1}).encode(),
        "100k-deep control JSON": b"[" * 100_000 + b"]" * 100_000,
        "30k-deep control JSON (under the size cap)": b'{"cmd":"done","x":' + b"[" * 30_000 + b"]" * 30_000 + b"}",
        "workdir=/": json.dumps({"cmd": "start", "task": TASK, "workdir": "/", "gt": str(gt)}).encode(),
        "workdir=/etc": json.dumps({"cmd": "start", "task": TASK, "workdir": "/etc", "gt": str(gt)}).encode(),
        "gt==workdir": json.dumps({"cmd": "start", "task": TASK, "workdir": str(work), "gt": str(work)}).encode(),
        "gt inside workdir": json.dumps({"cmd": "start", "task": TASK, "workdir": str(work),
                                         "gt": str(work / "hidden")}).encode(),
        "timeout NaN": b'{"cmd":"start","task":"%s","workdir":"%s","gt":"%s","timeout_s":NaN}' % (
            TASK.encode(), str(work).encode(), str(gt).encode()),
        "timeout Infinity": b'{"cmd":"start","task":"%s","workdir":"%s","gt":"%s","timeout_s":1e999}' % (
            TASK.encode(), str(work).encode(), str(gt).encode()),
    }


@pytest.mark.broker
async def test_each_attack_is_answered_and_the_good_run_loses_nothing(mosquitto, tmp_path):
    work, gt, other = tmp_path / "work", tmp_path / "gt", tmp_path / "other"
    for d in (work, gt, other, work / "hidden"):
        d.mkdir()
    daemon = Daemon(NODE, tmp_path / "runs", shared_ingest=False)
    feed = MqttFeed(mosquitto.address, NODE, tmp_path / "state", on_command=daemon.on_command)
    latencies: dict[str, float] = {}
    async with tapping(mosquitto.address, [f"tally/{NODE}/#"]) as tap:
        await feed.start()
        serving = asyncio.get_running_loop().create_task(daemon.serve(feed))
        await asyncio.wait_for(feed.connected.wait(), 10)
        await asyncio.sleep(0.3)  # the command subscription is in place
        latencies["baseline"] = await _probe(mosquitto.address, tap, "p0")
        # a good run, recording while the attacks arrive
        await _send(mosquitto.address, json.dumps({"cmd": "start", "task": TASK, "workdir": str(other),
                                                   "gt": str(gt), "run": "good"}).encode())
        await _until(lambda: daemon.session is not None and daemon.session.started.is_set())
        for i, (name, payload) in enumerate(_attacks(tmp_path, work, gt).items()):
            errors_before = len(daemon.errors)
            await _send(mosquitto.address, payload)
            await _until(lambda n=errors_before: len(daemon.errors) > n)
            latencies[name] = await _probe(mosquitto.address, tap, f"p{i + 1}")
            daemon.session.bus.emit("test", "tick", {"after": name})  # good-run traffic in between
        rejected = {name: e["payload"]["error"] for name, e in zip(_attacks(tmp_path, work, gt),
                                                                     [e for e in daemon.errors
                                                                      if "id" not in e["payload"]], strict=False)}
        assert daemon.active and daemon.session.run_id == "good", "no attack touched the good run"
        await _send(mosquitto.address, json.dumps({"cmd": "done", "run": "good"}).encode())
        await _until(lambda: not daemon.active)
        assert await feed.drained(20)
        await asyncio.sleep(0.5)
        daemon.request_stop()
        await serving
        await feed.stop()

    for name, seconds in latencies.items():
        print(f"\n{name}: next command answered after {seconds * 1000:.0f} ms")
    print("\n" + "\n".join(f"  {k}: {v}" for k, v in rejected.items()))
    assert "byte limit" in rejected["1.2 MB command"] and "byte limit" in rejected["100k-deep control JSON"]
    assert "nested deeper" in rejected["30k-deep control JSON (under the size cap)"]
    assert "is /" in rejected["workdir=/"] and "system directory" in rejected["workdir=/etc"]
    assert "gt is the work dir" in rejected["gt==workdir"] and "inside the work dir" in rejected["gt inside workdir"]
    assert "NaN" in rejected["timeout NaN"] and "timeout_s" in rejected["timeout Infinity"]
    assert all(len(e["payload"]["error"]) <= 1200 for e in daemon.errors)
    assert not feed.incidents, [e.payload for e in feed.incidents]
    # the good run: gap-free in its bundle, and every event published on MQTT, in order
    events = read_events(tmp_path / "runs" / "good" / "events.jsonl").events
    assert [e.seq for e in events] == list(range(len(events)))
    assert sum(1 for e in events if e.kind == "tick") == len(_attacks(tmp_path, work, gt))
    published = sorted({json.loads(p)["seq"] for t, p in tap.on(f"tally/{NODE}/run/good/")
                        if t != topics.score(NODE, "good")})
    assert published == [e.seq for e in events]
    report = json.loads((tmp_path / "runs" / "good" / "report.json").read_text())
    assert report["run"]["clean"] and report["run"]["ended"] == "mqtt:done"


@pytest.mark.broker
async def test_a_poisoned_outbox_is_skipped_with_an_event(mosquitto, tmp_path):
    """An outbox an older version left with a 1.2 MB record: the restarted feed skips it, says so,
    and delivers what follows (it used to die on it at every start)."""
    box = Outbox(tmp_path / "state")
    big = json.dumps({"t": "tally/hx/control/error", "p": "k" * 1_200_000, "r": False})
    import os

    os.write(box._fd, (big + "\n").encode())  # what the old append wrote; today's append refuses it
    box.append("tally/hx/after", "still delivered")
    box.close()
    assert len(big) > MAX_RECORD_BYTES
    feed = MqttFeed(mosquitto.address, NODE, tmp_path / "state")
    async with tapping(mosquitto.address, [f"tally/{NODE}/#"]) as tap:
        await feed.start()
        await _until(lambda: tap.on("tally/hx/after"), 20)
        await _until(lambda: tap.on(topics.feed_event(NODE, "outbox_skipped")), 20)
        await feed.stop()
    skipped = tap.json_on(topics.feed_event(NODE, "outbox_skipped"))
    assert "over the" in skipped[0]["payload"]["reason"]
    assert feed.outbox.pending_bytes == 0


@pytest.mark.broker
async def test_an_idle_daemon_reconnects_after_a_broker_restart(mosquitto, tmp_path):
    daemon = Daemon(NODE, tmp_path / "runs", shared_ingest=False)
    feed = MqttFeed(mosquitto.address, NODE, tmp_path / "state", on_command=daemon.on_command)
    await feed.start()
    serving = asyncio.get_running_loop().create_task(daemon.serve(feed))
    await asyncio.wait_for(feed.connected.wait(), 10)
    connects = feed.connects
    await asyncio.sleep(1.0)  # idle: nothing to publish
    t_down = time.monotonic()
    await asyncio.to_thread(mosquitto.stop)
    await _until(lambda: not feed.connected.is_set(), 30)  # noticed while idle (it used to never be)
    noticed_s = time.monotonic() - t_down
    await asyncio.sleep(max(0.0, 3.0 - noticed_s))  # down 3 s, as in the report
    await asyncio.to_thread(mosquitto.start)
    t_up = time.monotonic()
    await _until(lambda: feed.connects > connects and feed.connected.is_set(), 30)
    reconnect_s = time.monotonic() - t_up
    await asyncio.sleep(0.3)  # the new subscription is in place
    async with tapping(mosquitto.address, [f"tally/{NODE}/#"]) as tap:
        answer_s = await _probe(mosquitto.address, tap, "after-restart")
    daemon.request_stop()
    await serving
    t0 = time.monotonic()
    await feed.stop()
    stop_s = time.monotonic() - t0
    print(f"\nbroker loss noticed after {noticed_s:.2f} s; "
          f"reconnected {reconnect_s:.2f} s after the broker came back; next command answered in "
          f"{answer_s * 1000:.0f} ms; feed stop {stop_s:.2f} s")
    assert feed.connects > connects
    assert any(e.kind == "reconnected" for e in feed.incidents), "the reconnect is logged as an event"


@pytest.mark.broker
async def test_a_frozen_broker_is_noticed_by_keepalive_and_heartbeat(mosquitto, tmp_path):
    """A broker that stops answering without closing the socket (SIGSTOP): no FIN ever comes, so
    only the keepalive / status heartbeat can notice; then it thaws and the daemon answers again."""
    import os
    import signal

    from monitor.mqtt.feed import KEEPALIVE_S

    daemon = Daemon(NODE, tmp_path / "runs", shared_ingest=False)
    feed = MqttFeed(mosquitto.address, NODE, tmp_path / "state", on_command=daemon.on_command)
    await feed.start()
    serving = asyncio.get_running_loop().create_task(daemon.serve(feed))
    await asyncio.wait_for(feed.connected.wait(), 10)
    await asyncio.sleep(1.0)
    connects = feed.connects
    os.kill(mosquitto.proc.pid, signal.SIGSTOP)
    t_frozen = time.monotonic()
    try:
        await _until(lambda: not feed.connected.is_set(), 6 * KEEPALIVE_S)
        noticed_s = time.monotonic() - t_frozen
    finally:
        os.kill(mosquitto.proc.pid, signal.SIGCONT)
    await _until(lambda: feed.connects > connects and feed.connected.is_set(), 60)
    await asyncio.sleep(0.3)
    async with tapping(mosquitto.address, [f"tally/{NODE}/#"]) as tap:
        answer_s = await _probe(mosquitto.address, tap, "after-thaw")
    daemon.request_stop()
    await serving
    await feed.stop()
    print(f"\nfrozen broker noticed after {noticed_s:.2f} s (keepalive {KEEPALIVE_S} s); "
          f"next command answered {answer_s * 1000:.0f} ms after reconnecting")
    assert any(e.kind == "feed_error" for e in feed.incidents) or feed.last_error


@pytest.mark.broker
async def test_a_run_with_a_fifo_output_is_scored_fail_while_the_daemon_answers(mosquitto, tmp_path):
    """Agent-file attack through the daemon: the run's output is a FIFO (it used to hang scoring
    forever). The run is scored as the agent's fail, and commands are answered meanwhile."""
    import os

    from verifiers.synth import overlay, synth_instance

    task = "R06.07.01.03-T06"
    inst = synth_instance(task, tmp_path / "inst")
    work = tmp_path / "work"
    overlay(inst / "workdir", inst / "oracle", work)
    (work / "output" / "spotting_list.csv").unlink()
    os.mkfifo(work / "output" / "spotting_list.csv")
    daemon = Daemon(NODE, tmp_path / "runs", shared_ingest=False)
    feed = MqttFeed(mosquitto.address, NODE, tmp_path / "state", on_command=daemon.on_command)
    async with tapping(mosquitto.address, [f"tally/{NODE}/#"]) as tap:
        await feed.start()
        serving = asyncio.get_running_loop().create_task(daemon.serve(feed))
        await asyncio.wait_for(feed.connected.wait(), 10)
        await asyncio.sleep(0.3)
        await _send(mosquitto.address, json.dumps({"cmd": "start", "task": task, "workdir": str(work),
                                                   "gt": str(inst / "gt"), "run": "fifo"}).encode())
        await _until(lambda: daemon.session is not None and daemon.session.started.is_set())
        t0 = time.monotonic()
        await _send(mosquitto.address, json.dumps({"cmd": "done", "run": "fifo"}).encode())
        probe_s = await _probe(mosquitto.address, tap, "while-scoring")
        await _until(lambda: not daemon.active, 120)
        scored_s = time.monotonic() - t0
        daemon.request_stop()
        await serving
        await feed.stop()
    report = json.loads((tmp_path / "runs" / "fifo" / "report.json").read_text())
    print(f"\nFIFO output: run ended and scored {scored_s:.2f} s after done; a command sent meanwhile "
          f"was answered in {probe_s * 1000:.0f} ms")
    assert all(c["status"] == "fail" for c in report["checks"]), report["checks"]
    # scored from the bundle's snapshot, which stores regular files only (the FIFO is "missing");
    # scored from the work dir, the pre-flight names it a FIFO (tests/hostile/test_agent_files.py)
    assert "spotting_list.csv" in report["checks"][0]["message"]
