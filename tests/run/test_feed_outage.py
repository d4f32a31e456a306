"""MQTT feed against a real mosquitto that is stopped for ~10 s while events keep flowing."""

from __future__ import annotations

import asyncio
import json

import pytest

from monitor.bundle import BundleWriter, read_events
from monitor.bus import EventBus
from monitor.mqtt import topics
from monitor.mqtt.feed import MqttFeed
from tests.run.conftest import tapping


@pytest.mark.slow
@pytest.mark.broker
async def test_broker_outage_loses_nothing_and_keeps_order(mosquitto, tmp_path):
    bus = EventBus()
    writer = BundleWriter(tmp_path / "bundle")
    bus.add_sink(writer)
    feed = MqttFeed(mosquitto.address, "nodeA", tmp_path / "outbox", run_id="r1")
    async with tapping(mosquitto.address, [topics.run_events("nodeA", "r1")]) as tap:
        await feed.start(bus)

        async def produce(n: int, period_s: float) -> None:
            for _ in range(n):
                bus.emit("test", "tick", {"blob": "x" * 64})
                await asyncio.sleep(period_s)

        await produce(50, 0.01)
        assert await feed.drained(10)
        seen_before_outage = len(tap.messages)
        await asyncio.to_thread(mosquitto.stop)
        await produce(200, 0.05)  # ~10 s of events while the broker is down
        queued_during_outage = feed.outbox.pending_bytes
        await asyncio.to_thread(mosquitto.start)
        await produce(50, 0.01)
        assert await feed.drained(30), f"outbox not drained: {feed.outbox.pending_bytes} bytes, {feed.last_error}"
        await asyncio.sleep(0.5)
        await feed.stop()
    writer.close()

    assert seen_before_outage >= 50
    assert queued_during_outage > 0
    assert feed.connects >= 2
    recorded = [e.to_json() for e in read_events(tmp_path / "bundle" / "events.jsonl").events]
    assert len(recorded) == 300
    received = [p for _, p in tap.on("tally/nodeA/run/r1/test/tick")]
    first_seen: dict[int, str] = {}
    order = []
    for payload in received:
        seq = json.loads(payload)["seq"]
        if seq not in first_seen:
            first_seen[seq] = payload
            order.append(seq)
    assert order == list(range(300)), "every sequence number, in order (duplicates allowed)"
    # Payloads are the bundle's event lines, byte for byte.
    assert [first_seen[s] for s in order] == recorded
