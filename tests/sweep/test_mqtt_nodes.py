"""Many monitoring nodes on one broker: three `tally serve` daemons (nodes A, B, C) on a real
mosquitto, runs started and finished over MQTT; one `tally sweep collect` gets all three reports
(deduplicated and resumable), and the dashboard's nodes table shows every node's retained status."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json

from monitor.dash.app import TallyDash, mqtt_source, node_event
from monitor.dash.state import DashState
from monitor.mqtt import topics
from monitor.mqtt.feed import MqttFeed
from monitor.run.daemon import Daemon
from monitor.sweep.collect import collect
from monitor.sweep.report import build_report
from monitor.sweep.results import read_rows
from tests.run.conftest import mosquitto  # noqa: F401 - the real broker fixture
from tests.sweep.conftest import materialize

TASK = "R06.07.01.03-T05"  # no live needs: a run is only the lifecycle and the scorer
NODES = ("A", "B", "C")


async def _until(cond, timeout_s: float = 60.0) -> None:
    async with asyncio.timeout(timeout_s):
        while not cond():  # noqa: ASYNC110 - polling state owned by other tasks is the point
            await asyncio.sleep(0.05)


async def _send(address, node: str, payload: dict) -> None:
    import aiomqtt

    async with aiomqtt.Client(address.host, address.port) as client:
        await client.publish(topics.command(node), json.dumps(payload).encode(), qos=1)


async def test_three_serve_nodes_one_collector_and_the_nodes_table(mosquitto, instances, tmp_path):  # noqa: F811
    inst = instances[TASK]
    address = mosquitto.address
    out = tmp_path / "sweep"
    ready = asyncio.Event()
    collector = asyncio.get_running_loop().create_task(collect(address, out, seconds=120, count=3, ready=ready))
    await asyncio.wait_for(ready.wait(), 10)
    dash = DashState()

    async def watch() -> None:
        async for event in mqtt_source(f"mqtt://127.0.0.1:{mosquitto.port}")():
            dash.apply(event)

    watcher = asyncio.get_running_loop().create_task(watch())
    daemons, feeds, serving = {}, {}, []
    try:
        for node in NODES:
            daemons[node] = Daemon(node, tmp_path / node / "runs", shared_ingest=False)
            feeds[node] = MqttFeed(address, node, tmp_path / node / "state", on_command=daemons[node].on_command)
            await feeds[node].start()
            serving.append(asyncio.get_running_loop().create_task(daemons[node].serve(feeds[node])))
        for node in NODES:
            await asyncio.wait_for(feeds[node].connected.wait(), 10)
        await asyncio.sleep(0.5)  # command subscriptions in place
        for node in NODES:
            work, _ = materialize(inst, inst / "oracle", tmp_path / node / "work")
            await _send(address, node, {"cmd": "start", "task": TASK, "workdir": str(work), "gt": str(inst / "gt"),
                                        "run": f"run-{node}"})
        await _until(lambda: all(d.active and d.session is not None and d.session.started.is_set()
                                 for d in daemons.values()))
        await _until(lambda: sum(n["state"] == "running" for n in dash.nodes.values()) == 3, 20)
        for node in NODES:
            await _send(address, node, {"cmd": "done", "run": f"run-{node}"})
        assert await asyncio.wait_for(collector, 120) == 3
        await _until(lambda: len(dash.nodes) == 3 and all(n["state"] == "idle" and n["last_score"] is not None
                                                          for n in dash.nodes.values()), 20)
    finally:
        for d in daemons.values():
            d.request_stop()
        for t in serving:
            with contextlib.suppress(Exception):
                await t
        for feed in feeds.values():
            await feed.drained(10)
            await feed.stop()
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
        if not collector.done():
            collector.cancel()

    rows = read_rows(out / "results.jsonl")
    assert sorted(r["labels"]["node"] for r in rows) == list(NODES)
    for r in rows:
        node = r["labels"]["node"]
        recorded = json.loads((tmp_path / node / "runs" / f"run-{node}" / "report.json").read_text())
        assert r["report_sha256"] == hashlib.sha256(json.dumps(recorded, sort_keys=True).encode()).hexdigest()
        assert r["task"] == TASK and r["status"] == "scored" and r["key"]["scorer"] != "unknown"
    assert {dash.nodes[n]["run"] for n in NODES} == {f"run-{n}" for n in NODES}
    # a restarted collector sees the retained reports again and adds nothing
    assert await collect(address, out, seconds=3) == 0
    assert build_report(out)["by_label"]["node"].keys() == set(NODES)


async def test_dash_nodes_table_lists_every_node():
    events = [node_event("tally/A/status", {"state": "running", "run": "r1", "task": "T"}),
              node_event("tally/B/status", {"state": "idle", "last_run": "r0", "last_score": 87.5}),
              node_event("tally/C/run/r9/score", {"task": "T9", "score": 100.0}),
              node_event("tally/C/status", {"state": "offline"})]

    async def source():
        for e in events:
            yield e

    app = TallyDash(lambda: source(), refresh_s=0.05)
    async with app.run_test(size=(160, 50)) as pilot:
        await app.feed_done.wait()
        app.refresh_view()
        await pilot.pause()
        table = app.query_one("#nodes-table")
        assert table.row_count == 3 and not app.query_one("#nodes-panel").has_class("hidden")
        assert app.state.nodes["C"] == {"node": "C", "state": "offline", "task": "T9", "run": "r9", "last_score": 100.0}
        assert app.state.nodes["B"]["last_score"] == 87.5
