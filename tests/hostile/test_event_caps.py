"""Issue 20 item 1: no single message from outside makes an event too big to publish.

The 1.2 MB key of a control message and a 1.2 MB onMetaData string from any RTMP publisher both
reach events through EventFactory.make, which caps them; an event built around the factory is
refused by the outbox instead of poisoning it."""

from __future__ import annotations

from monitor.events import MAX_TEXT_CHARS, TRUNCATED_KEY, Event, EventFactory
from monitor.mqtt.feed import MqttFeed
from monitor.mqtt.topics import BrokerAddress
from monitor.outbox import MAX_RECORD_BYTES


def test_huge_texts_keys_lists_and_depth_are_capped_and_marked():
    factory = EventFactory()
    meta = {"title": "t" * 1_200_000, "k" * 1_200_000: 1, "list": list(range(50_000)),
            "many": {f"key{i}": "v" * 100 for i in range(5000)}}
    deep: dict = {}
    node = deep
    for _ in range(1000):
        node["d"] = {}
        node = node["d"]
    event = factory.make("rtmp", "metadata", {"metadata": meta, "deep": deep})
    line = event.to_json()
    assert len(line.encode()) < MAX_RECORD_BYTES // 2
    assert event.payload[TRUNCATED_KEY] is True
    assert len(event.payload["metadata"]["title"]) < MAX_TEXT_CHARS + 40


def test_ordinary_payloads_pass_unchanged():
    payload = {"client": "127.0.0.1:5000", "bps": [1.5, 2.0, None], "nested": {"a": [{"b": "c"}]}, "n": 3,
               "pair": (1, 2)}
    event = EventFactory().make("rtmp", "stats", payload)
    assert event.payload == payload and TRUNCATED_KEY not in event.payload


def test_an_uncapped_event_is_refused_by_the_outbox_not_queued(tmp_path):
    feed = MqttFeed(BrokerAddress("127.0.0.1", 1), "n", tmp_path / "box", run_id="r")
    feed.on_event(Event(0, 0, 0.0, "rtmp", "metadata", {"x": "y" * 2_000_000}))
    feed.on_event(Event(1, 0, 0.0, "rtmp", "stats", {"x": 1}))
    records = feed.outbox.peek(10)
    assert [r.topic.rsplit("/", 1)[-1] for r in records] == ["stats"]
    assert feed.outbox.refused == 1
    feed.outbox.close()
