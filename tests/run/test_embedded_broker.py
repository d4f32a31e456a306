"""With no broker URL the feed goes to an embedded amqtt broker on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import json

from monitor.bus import EventBus
from monitor.mqtt import topics
from monitor.run.serve_common import open_feed
from tests.run.conftest import tapping


async def test_embedded_broker_carries_events_and_retained_status(tmp_path):
    bus = EventBus()
    async with contextlib.AsyncExitStack() as stack:
        feed = await open_feed(stack, None, "emb", tmp_path / "outbox", on_command=None)
        assert feed.broker.host == "127.0.0.1" and feed.broker.port > 0
        feed.set_run("r")
        feed.attach(bus)
        feed.set_status(state="running", run="r")
        async with tapping(feed.broker, [topics.run_events("emb", "r"), topics.status("emb")]) as tap:
            sent = [bus.emit("probe.audio", "level", {"i": i}) for i in range(100)]
            assert await feed.drained(15)
            for _ in range(50):
                if len(tap.on("tally/emb/run/")) >= 100:
                    break
                await asyncio.sleep(0.1)
        got = {json.loads(p)["seq"]: p for _, p in tap.on("tally/emb/run/r/probe.audio/level")}
        assert [got[s] for s in sorted(got)] == [e.to_json() for e in sent]
        assert tap.json_on(topics.status("emb"))[-1]["state"] == "running"
