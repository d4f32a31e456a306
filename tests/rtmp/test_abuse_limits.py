"""Issue 20 item 3, layer by layer: each limit of the ingest against the input that broke it."""

from __future__ import annotations

import asyncio
import random
import time
import tracemalloc
import urllib.parse
from pathlib import Path

import pytest

from rtmp import messages as m
from rtmp.api import BadQuery, streams_payload
from rtmp.budget import PendingBudget
from rtmp.chunk import ChunkReader, ChunkWriter, RawMessage
from rtmp.errors import ChunkError
from rtmp.stats import BITRATE_WINDOW_MS, MAX_WINDOW_ENTRIES, _Track
from rtmp.streams import StreamRegistry
from tests.rtmp.attackers import MIB, tiny_chunk_message
from tests.rtmp.helpers import RawClient, running_ingest

pytestmark = pytest.mark.timeout(120)


def _set_chunk_size(size: int) -> bytes:
    return ChunkWriter().write(RawMessage(2, m.SET_CHUNK_SIZE, 0, 0, size.to_bytes(4, "big")))


def test_tiny_chunks_hold_one_buffer_not_a_list() -> None:
    """Chunk size 2, a 16 MiB message held one chunk short: Python memory ≈ the payload (the
    list-of-chunks reader held ~17×), and the message completes byte-exact."""
    body, rest = tiny_chunk_message(4, hold_back=1)
    r = ChunkReader()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        r.feed(_set_chunk_size(2))
        for off in range(0, len(body), 65536):
            assert r.feed(body[off:off + 65536]) == []
        held_mem = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert 16 * MIB - 8 <= r.held_bytes <= 16 * MIB
    assert held_mem < 1.25 * 16 * MIB, held_mem
    [msg] = r.feed(rest)
    assert len(msg.body) == 16 * MIB - 1 and msg.body[:2] == b"\x17\x01" and r.held_bytes == 0


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 5, 64, 255, 256, 257])
def test_bulk_continuations_match_the_writer(chunk_size: int) -> None:
    """The bulk path for small chunks gives exactly the messages the writer cut, however the
    bytes are split, with other chunk streams interleaved."""
    rng = random.Random(chunk_size)
    w = ChunkWriter(chunk_size=chunk_size)
    msgs = [RawMessage(rng.choice([4, 5, 70]), rng.choice([8, 9]), 1, i * 40, rng.randbytes(rng.randrange(0, 900)))
            for i in range(60)]
    wire = b"".join(w.write(x) for x in msgs)
    for split in (1, 7, 777, len(wire)):
        r = ChunkReader()
        r.chunk_size = chunk_size
        got: list[RawMessage] = []
        for off in range(0, len(wire), split):
            got += r.feed(wire[off:off + split])
        assert [(g.csid, g.timestamp_ms, g.body) for g in got] == [(x.csid, x.timestamp_ms, x.body) for x in msgs]
        assert r.held_bytes == 0


def test_held_bytes_over_the_connection_limit_raise() -> None:
    """Counted is memory actually held: here one 3 MiB chunk (chunk size 2^31 - 1) still
    arriving, which no declared-length check sees because its header is not committed yet."""
    w = ChunkWriter(chunk_size=0x7FFFFFFF)
    wire = w.write(RawMessage(4, m.VIDEO, 1, 0, b"\x17\x01" + bytes(3 * MIB)))
    r = ChunkReader(max_message_bytes=4 * MIB, max_pending_bytes=2 * MIB)
    r.feed(_set_chunk_size(0x7FFFFFFF))
    with pytest.raises(ChunkError, match="held"):
        for off in range(0, len(wire), 65536):
            r.feed(wire[off:off + 65536])
    assert r.held_bytes == 0  # released with the error


def test_two_byte_messages_count_as_a_flood() -> None:
    w = ChunkWriter()
    data = w.write(RawMessage(5, m.AUDIO, 1, 0, b"\xaf\x01")) + b"\xc5\xaf\x01" * 5000
    with pytest.raises(ChunkError, match="flood"):
        ChunkReader().feed(data)


def test_global_budget_drops_the_biggest_holder() -> None:
    b: PendingBudget[str] = PendingBudget(100)
    assert b.update("good", 10) is None
    assert b.update("hog", 80) is None
    assert b.update("good", 30) == "hog"  # the good one crossed the line, the hog pays
    b.forget("hog")
    assert (b.used_bytes, b.update("good", 0), b.used_bytes) == (30, None, 0)


def test_window_is_bounded_in_entries_and_sums_match() -> None:
    """3 M 2-byte frames on one timestamp: the windows stay at the entry cap, O(1) per frame."""
    t = _Track()
    start = time.process_time()
    for _ in range(300_000):
        t.add(1000, 2)
    assert len(t.window) <= MAX_WINDOW_ENTRIES and len(t.bwindow) <= MAX_WINDOW_ENTRIES
    assert t.bwindow_bytes == 2 * len(t.bwindow)
    assert time.process_time() - start < 5  # the O(n) sum took minutes here
    # Running sums agree with a recomputation on an irregular stream.
    rng = random.Random(1)
    t = _Track()
    ts = 0
    frames: list[tuple[int, int]] = []
    for _ in range(5000):
        ts += rng.choice([0, 1, 21, 33, 400])
        size = rng.randrange(1, 5000)
        t.add(ts, size)
        frames.append((ts, size))
        recent = [s for x, s in frames[-MAX_WINDOW_ENTRIES:] if x >= ts - BITRATE_WINDOW_MS]
        assert t.bwindow_bytes == sum(recent)


def test_ended_stream_keeps_only_its_frozen_view() -> None:
    reg = StreamRegistry(allow_any=True, max_history=5)
    rec = reg.start("live", "k", "c")
    for i in range(100):
        rec.stats.on_audio_frame(i * 21, 100)
    reg.end(rec, "closed")
    view = rec.api_view()
    assert view["state"] == "ended" and rec.api_view() is view  # computed once
    assert len(rec.stats.audio.window) == 0  # windows released
    assert rec.final_snapshot()["audio"]["frames"] == 100
    for i in range(10):
        reg.end(reg.start("live", f"k{i}", "c"), "closed")
    assert len(reg.all()) == 5


def test_allow_list_pins_the_app() -> None:
    reg = StreamRegistry({"live/abc", "other"})
    assert reg.check("live", "abc?token=1") == "abc"
    with pytest.raises(Exception, match="not allowed"):
        reg.check("rogue", "abc")
    assert reg.check("any", "other") == "other"  # bare keys: the embedding API's older form


class _FakeServer:
    def __init__(self, registry: StreamRegistry) -> None:
        self.registry = registry


def test_streams_api_is_paginated() -> None:
    reg = StreamRegistry(allow_any=True)
    for i in range(250):
        reg.end(reg.start("live", f"k{i}", "c"), "closed")
    reg.start("live", "now", "c")
    srv = _FakeServer(reg)
    first = streams_payload(srv)  # type: ignore[arg-type]
    assert (len(first["streams"]), first["total"], first["next_offset"]) == (100, 251, 100)
    last = streams_payload(srv, {"offset": "200", "limit": "100"})  # type: ignore[arg-type]
    assert (len(last["streams"]), last["next_offset"]) == (51, None)
    assert last["streams"][-1]["key"] == "now"
    live = streams_payload(srv, {"state": "live"})  # type: ignore[arg-type]
    assert [s["key"] for s in live["streams"]] == ["now"]
    for bad in ({"limit": "0"}, {"limit": "x"}, {"state": "gone"}, {"offset": "-1"}):
        with pytest.raises(BadQuery):
            streams_payload(srv, bad)  # type: ignore[arg-type]
    assert urllib.parse.urlencode({"limit": 5})  # (the API reads these from the query string)


def test_metadata_strings_are_capped() -> None:
    out = m.to_jsonable({"title": "x" * 1_200_000, "k" * 5000: 1, "deep": [[[[[[[[[[1]]]]]]]]]],
                         "many": list(range(100_000))})
    text = repr(out)
    assert len(text) < 20_000 and "truncated" in text


def _flv_files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.flv"))


def _exists(path: Path) -> bool:
    return path.exists()


async def test_header_only_recording_is_removed(tmp_path: Path) -> None:
    async with running_ingest(tmp_path) as h:
        c = await RawClient.connect(h.port)
        await c.start_publishing("live", "empty")
        [pub] = await h.wait_for("publish")
        await c.close()
        [unp] = await h.wait_for("unpublish")
    assert unp["recording"]["removed"] == "no media"
    assert _flv_files(tmp_path) == []
    assert pub["recording"].startswith(str(tmp_path))
    assert not _exists(tmp_path / "live")  # the emptied <app>/<key> folders went too


async def test_replaced_publisher_without_media_leaves_no_file(tmp_path: Path) -> None:
    async with running_ingest(tmp_path) as h:
        a = await RawClient.connect(h.port)
        await a.start_publishing("live", "dup")
        b = await RawClient.connect(h.port)
        await b.start_publishing("live", "dup")
        b.send(RawMessage(4, m.AUDIO, 1, 0, b"\xaf\x01" + bytes(20)))
        await h.wait_for("unpublish", reason="replaced")
        await b.close()
        await h.wait_for("unpublish", count=2)
        await a.close()
    files = _flv_files(tmp_path)
    assert len(files) == 1 and files[0].stat().st_size > 13


async def test_trickle_of_one_byte_per_tick_is_dropped(tmp_path: Path) -> None:
    """Bytes are not progress: a publisher sending a byte every 0.2 s (never a whole message)
    is dropped by the 1 s idle timeout like a silent one."""
    async with running_ingest(tmp_path, idle_timeout_s=1.0, stats_interval_s=0.25) as h:
        c = await RawClient.connect(h.port)
        await c.start_publishing("live", "trickle")
        wire = ChunkWriter().write(RawMessage(4, m.AUDIO, 1, 0, b"\xaf\x01" + bytes(500)))
        for i in range(25):
            c.send_raw(wire[i:i + 1])
            await asyncio.sleep(0.2)
            if h.of("unpublish"):
                break
        [unp] = await h.wait_for("unpublish", timeout_s=3)
        assert unp["reason"] == "idle_timeout"
        await c.close()


async def test_connection_caps_evict_idle_connections_not_publishers(tmp_path: Path) -> None:
    async with running_ingest(tmp_path, max_connections=6, max_connections_per_address=4) as h:
        pub = await RawClient.connect(h.port)
        await pub.start_publishing("live", "keep")
        idle = [await asyncio.open_connection("127.0.0.1", h.port) for _ in range(10)]
        await asyncio.sleep(0.3)
        assert h.server.metrics.connections_active <= 4
        assert h.server.metrics.connections_evicted_total >= 7
        # The publisher was never evicted: its media still lands.
        pub.send(RawMessage(4, m.AUDIO, 1, 0, b"\xaf\x01" + bytes(20)))
        await asyncio.sleep(0.2)
        assert ("live", "keep") in h.server.registry.live
        # Four publishers fill the per-address cap; a fifth connection is refused.
        others = []
        for i in range(3):
            c = await RawClient.connect(h.port)
            await c.start_publishing("live", f"p{i}")
            others.append(c)
        r, w = await asyncio.open_connection("127.0.0.1", h.port)
        assert await asyncio.wait_for(r.read(), 3) == b""
        assert h.of("connection_refused")
        for _, wr in idle:
            wr.close()
        for c in [pub, *others]:
            await c.close()
        w.close()


async def test_huge_metadata_string_is_cut_in_the_event(tmp_path: Path) -> None:
    """A 1.2 MB string in onMetaData (issue 20, item 1): the event carries a few kB, marked."""
    from rtmp import amf0

    async with running_ingest(tmp_path) as h:
        c = await RawClient.connect(h.port)
        await c.start_publishing("live", "meta")
        c.set_chunk_size(65536)
        c.send(RawMessage(5, m.DATA_AMF0, 1, 0, amf0.encode("@setDataFrame", "onMetaData",
                                                            amf0.EcmaArray(title="k" * 1_200_000, width=640.0))))
        [meta] = await h.wait_for("metadata")
        await c.close()
    assert len(repr(meta)) < 5000 and "truncated 1198976 chars" in meta["metadata"]["title"]
    assert meta["metadata"]["width"] == 640


def test_streams_json_equals_the_payload() -> None:
    import json

    from rtmp.api import streams_json

    reg = StreamRegistry(allow_any=True)
    for i in range(30):
        rec = reg.start("live", f"k{i}", "c")
        rec.stats.on_audio_frame(0, 10)
        reg.end(rec, "closed")
    rec = reg.start("live", "now", "c")
    srv = _FakeServer(reg)
    for q in ({}, {"limit": "7", "offset": "25"}, {"state": "ended"}):
        text_page = json.loads(streams_json(srv, q))  # type: ignore[arg-type]
        dict_page = json.loads(json.dumps(streams_payload(srv, q)))  # type: ignore[arg-type]
        # the clock is read as each page is built: the same clock, later for the second page
        assert 0 <= dict_page.pop("server_clock_s") - text_page.pop("server_clock_s") < 5
        assert text_page == dict_page
