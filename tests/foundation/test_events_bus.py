"""Event encoding round trip, and the bus's promise: a stalled subscriber never blocks a producer."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from monitor.bus import EventBus
from monitor.events import Event, EventDecodeError, EventFactory


def test_event_round_trip_is_byte_stable():
    f = EventFactory()
    e = f.make("rtmp", "stats", {"fps": np.float64(29.97), "n": np.int64(3), "nested": {"b": 1, "a": [1, 2]}})
    line = e.to_json()
    back = Event.from_json(line)
    assert back.to_json() == line
    assert back.payload["fps"] == pytest.approx(29.97)
    assert back.payload["n"] == 3
    assert "\n" not in line


@pytest.mark.parametrize("bad", ["", "{", "[]", '{"seq": 1}', '{"seq":"x","mono_ns":1,"wall_time":0,"source":"a","kind":"b"}',
                                 b"\xff\xfe"])
def test_garbage_lines_raise_the_documented_error(bad):
    with pytest.raises(EventDecodeError):
        Event.from_json(bad)


def test_sequence_numbers_are_gap_free():
    f = EventFactory()
    assert [f.make("s", "k").seq for _ in range(5)] == [0, 1, 2, 3, 4]


async def test_stalled_subscriber_drops_and_reports_without_blocking_producer():
    bus = EventBus()
    seen: list[Event] = []
    bus.add_sink(seen.append)
    stalled = bus.subscribe("stalled", maxsize=10)
    healthy = bus.subscribe("healthy", maxsize=10_000)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    for i in range(5_000):
        bus.emit("test", "tick", {"i": i})
    assert loop.time() - t0 < 5  # sanity only: publish returned; no awaiting on the stalled queue
    assert stalled.queue.qsize() == 10 and stalled.dropped == 4_990
    assert healthy.queue.qsize() == 5_000 and healthy.dropped == 0
    report = bus.report_drops()
    assert report is not None and report.payload["new_drops"] == {"stalled": 4_990}
    assert bus.report_drops() is None  # nothing new since
    assert len(seen) == 5_001 and seen[-1].kind == "drops"


async def test_filtered_subscription_only_gets_its_events():
    bus = EventBus()
    sub = bus.subscribe("obs-only", accept=lambda e: e.source == "obs")
    bus.emit("rtmp", "stats")
    bus.emit("obs", "scene")
    got = await asyncio.wait_for(sub.get(), 1)
    assert got.source == "obs" and sub.queue.empty()
