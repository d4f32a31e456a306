"""The disk outbox: order, cursor persistence across reopen, torn tails, compaction."""

from __future__ import annotations

import json
import os

from monitor.outbox import Outbox


def test_order_ack_and_reopen(tmp_path):
    box = Outbox(tmp_path / "ob", cursor_every=1)
    for i in range(10):
        box.append("t/a", json.dumps({"seq": i}))
    first = box.peek(4)
    assert [json.loads(r.payload)["seq"] for r in first] == [0, 1, 2, 3]
    for r in first[:3]:
        box.ack(r)
    box.close()
    again = Outbox(tmp_path / "ob")
    rest = again.peek(100)
    assert [json.loads(r.payload)["seq"] for r in rest] == list(range(3, 10))


def test_torn_tail_from_a_killed_writer_is_skipped_and_sealed(tmp_path):
    box = Outbox(tmp_path / "ob")
    box.append("t", "one")
    box.close()
    with open(tmp_path / "ob" / "queue.jsonl", "ab") as fh:
        fh.write(b'{"t":"t","p":"to')  # killed mid-write
    box = Outbox(tmp_path / "ob")
    box.append("t", "two")
    records = box.peek(10)
    assert [(r.topic, r.payload) for r in records] == [("t", "one"), ("", ""), ("t", "two")]
    for r in records:
        box.ack(r)
    assert box.torn_skipped == 1 and box.acked == 2 and box.pending_bytes == 0


def test_incomplete_last_line_waits(tmp_path):
    box = Outbox(tmp_path / "ob")
    box.append("t", "one")
    os.write(box._fd, b'{"t":"t","p":"half')
    assert [r.payload for r in box.peek(10)] == ["one"]


def test_peek_from_a_later_position_leaves_the_cursor(tmp_path):
    box = Outbox(tmp_path / "ob")
    for i in range(6):
        box.append("t", str(i))
    head = box.peek(2)
    tail = box.peek(10, start=head[-1].end)
    assert [r.payload for r in tail] == ["2", "3", "4", "5"]
    assert box.cursor == 0


def test_compacts_when_caught_up(tmp_path):
    box = Outbox(tmp_path / "ob", compact_after_bytes=200)
    for i in range(20):
        box.append("topic", f"payload {i}")
    for r in box.peek(100):
        box.ack(r)
    assert box.size_bytes == 0 and box.cursor == 0 and box.pending_bytes == 0
    box.append("topic", "after")
    assert [r.payload for r in box.peek(5)] == ["after"]
