"""Session behaviour with a hand-driven client: replies, refusals, timeouts, limits, end paths, isolation."""

from __future__ import annotations

import asyncio
import os
import socket
import struct
from pathlib import Path
from typing import Any

import pytest

from rtmp import messages as m
from rtmp.chunk import ChunkReader, ChunkWriter, RawMessage
from rtmp.session import RtmpSession
from tests.rtmp.helpers import (
    EncodeSpec,
    RawClient,
    by_type,
    decode_errors,
    encode,
    finish,
    flv_files,
    flv_tags,
    hevc_config_record,
    packets,
    publish,
    running_ingest,
    send_tags,
)

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("amf3", [False, True])
async def test_publish_handshake_and_replies(tmp_path: Path, amf3: bool) -> None:
    async with running_ingest(tmp_path) as h:
        c = await RawClient.connect(h.port)
        status = await c.start_publishing("live", "k1?token=abc", amf3=amf3)
        assert status.args[0]["code"] == "NetStream.Publish.Start"
        [pub] = await h.wait_for("publish")
        assert pub["key"] == "k1" and pub["app"] == "live"
        # Server told us its window and chunk size before _result.
        c.command("deleteStream", 6, None, 1.0)
        [unp] = await h.wait_for("unpublish")
        assert unp["reason"] == "deleteStream"
        await c.close()


def test_tc_url_credentials_never_reach_events() -> None:
    from rtmp.session import _public_url

    assert _public_url("rtmp://bob:hunter2@127.0.0.1:1935/live?token=x") == "rtmp://127.0.0.1:1935/live"
    assert _public_url("rtmp://127.0.0.1/live/a@b") == "rtmp://127.0.0.1/live/a@b"


@pytest.mark.parametrize("key", ["../etc", "a/b", "a\x01b", "k" * 129, "", "not-allowed"])
async def test_bad_keys_get_badname(tmp_path: Path, key: str) -> None:
    async with running_ingest(tmp_path, allow_any=False, allowed_keys={"good"}) as h:
        c = await RawClient.connect(h.port)
        status = await c.start_publishing("live", key)
        assert status.args[0]["code"] == "NetStream.Publish.BadName"
        assert status.args[0]["level"] == "error"
        [rej] = await h.wait_for("publish_rejected")
        assert rej["code"] == "NetStream.Publish.BadName"
        assert not h.of("publish") and not flv_files(tmp_path)
        await c.close()
        c2 = await RawClient.connect(h.port)
        ok = await c2.start_publishing("live", "good?x=1")
        assert ok.args[0]["code"] == "NetStream.Publish.Start"
        await c2.close()


async def test_handshake_timeout_silent_and_slow(tmp_path: Path) -> None:
    async with running_ingest(tmp_path, handshake_timeout_s=0.5) as h:
        silent_r, silent_w = await asyncio.open_connection("127.0.0.1", h.port)
        slow_r, slow_w = await asyncio.open_connection("127.0.0.1", h.port)

        async def trickle() -> None:
            slow_w.write(b"\x03")
            for _ in range(20):
                await asyncio.sleep(0.1)
                slow_w.write(b"\x00" * 10)

        task = asyncio.create_task(trickle())
        assert await asyncio.wait_for(silent_r.read(), 3) == b""  # server closed us
        data = await asyncio.wait_for(slow_r.read(), 3)
        assert len(data) < 1 + 2 * 1536  # never got a full S0S1S2
        task.cancel()
        errs = await h.wait_for("protocol_error", 2)
        assert all("handshake" in e["error"] and e["stage"] == "handshake" for e in errs)
        for w in (silent_w, slow_w):
            w.close()


async def test_oversize_message_closes_only_that_session(tmp_path: Path, encode_cache: Path) -> None:
    src = encode(EncodeSpec(seconds=3), encode_cache)
    async with running_ingest(tmp_path / "rec", max_message_bytes=1024 * 1024) as h:
        good = await publish(h.url("live", "good"), src)
        await h.wait_for("publish")
        bad = await RawClient.connect(h.port)
        await bad.start_publishing("live", "bad")
        header = bytes([0x06]) + b"\x00\x00\x00" + (2 * 1024 * 1024).to_bytes(3, "big") + b"\x09" + b"\x01\0\0\0"
        bad.send_raw(header + b"\x17" * 1000)
        [err] = await h.wait_for("protocol_error")
        assert "declared" in err["error"]
        [bad_unp] = await h.wait_for("unpublish", key="bad")
        assert bad_unp["reason"] == "protocol_error"
        rc, out = await finish(good)
        assert rc == 0, out
        [unp] = await h.wait_for("unpublish", key="good")
    assert packets(Path(unp["recording"]["path"])) == packets(src)


def _garbage_payloads() -> list[bytes]:
    rnd = os.urandom
    hs = b"\x03" + b"\x00" * 1536 + b"\x00" * 1536
    return [
        rnd(5000), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"\x06" + rnd(3072), b"\x03" + rnd(100),
        hs + rnd(20000),                                       # random chunk stream
        hs + bytes([0x43]) + b"\0" * 7,                        # type-1 header on an unknown csid
        hs + bytes([0x03, 0, 0, 0, 0, 0, 20, 20, 0, 0, 0, 0]) + b"\x02\x00\x07connect\x00" + rnd(7),  # truncated AMF
        hs + b"".join(bytes([0x01, i & 0xFF, i >> 8]) + b"\0" * 11 for i in range(400)),  # csid flood
        hs + bytes([0x02, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0]) + b"\x00\x00\x00\x00",  # SetChunkSize 0
    ]


async def test_garbage_sessions_beside_a_good_one(tmp_path: Path, encode_cache: Path) -> None:
    src = encode(EncodeSpec(seconds=4), encode_cache)
    async with running_ingest(tmp_path / "rec", handshake_timeout_s=1.0) as h:
        good = await publish(h.url("live", "good"), src)
        await h.wait_for("publish")
        writers = []
        for payload in _garbage_payloads() * 3:
            _r, w = await asyncio.open_connection("127.0.0.1", h.port)
            w.write(payload)
            writers.append(w)
            await asyncio.sleep(0.05)
        rc, out = await finish(good)
        assert rc == 0, out
        [unp] = await h.wait_for("unpublish", key="good")
        for w in writers:
            w.close()
        errors = h.of("protocol_error")
    assert unp["reason"] in ("FCUnpublish", "deleteStream")
    rec = Path(unp["recording"]["path"])
    assert decode_errors(rec) == "" and packets(rec) == packets(src)
    assert len(errors) >= 20
    assert not h.of("internal_error")


async def test_tcp_reset_and_omitted_extended_timestamps(tmp_path: Path, encode_cache: Path) -> None:
    """A raw publisher that omits type-3 extended timestamps, starts past 2^24 ms, then sends RST."""
    src = encode(EncodeSpec(seconds=3), encode_cache)
    tags = flv_tags(src)
    offset = 0x1000000 + 1000
    async with running_ingest(tmp_path / "rec") as h:
        c = await RawClient.connect(h.port, ext_on_continuation=False)
        c.set_chunk_size(1000)
        await c.start_publishing("live", "rst")
        half = len(tags) // 2
        await send_tags(c, tags[:half], ts_offset_ms=offset)
        await asyncio.sleep(0.5)
        sock = c.w.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        c.w.transport.abort()
        [unp] = await h.wait_for("unpublish")
    assert unp["reason"] in ("reset", "closed")
    rec = Path(unp["recording"]["path"])
    assert decode_errors(rec) == ""
    got = [(t, ts, body) for t, ts, body in flv_tags(rec) if t in (8, 9)]
    want = [(t, ts + offset, body) for t, ts, body in tags[:half] if t in (8, 9)]
    assert got == want


async def test_server_shutdown_finishes_recordings(tmp_path: Path, encode_cache: Path) -> None:
    src = encode(EncodeSpec(seconds=6), encode_cache)
    async with running_ingest(tmp_path / "rec") as h:
        proc = await publish(h.url("live", "shut"), src)
        await h.wait_for("publish")
        await asyncio.sleep(2.5)
    # The context manager stopped the server while ffmpeg was still sending.
    [unp] = h.of("unpublish")
    assert unp["reason"] == "server_shutdown"
    await finish(proc)
    rec = Path(unp["recording"]["path"])
    assert decode_errors(rec) == ""
    rec_pkts = packets(rec)
    assert len(by_type(rec_pkts, "video")) > 30
    assert rec_pkts == packets(src)[:len(rec_pkts)]


class _FakeTransport:
    def __init__(self) -> None:
        self.out = bytearray()
        self.closing = False

    def write(self, data: bytes) -> None:
        self.out += data

    def is_closing(self) -> bool:
        return self.closing

    def get_extra_info(self, _name: str) -> Any:
        return ("127.0.0.1", 1)

    def abort(self) -> None:
        self.closing = True

    close = abort


async def test_acknowledgements_wrap_at_32_bits(tmp_path: Path) -> None:
    async with running_ingest(tmp_path) as h:
        s = RtmpSession(h.server.ctx)
        t = _FakeTransport()
        s.connection_made(t)  # type: ignore[arg-type]
        s.handshake.done = True
        cw = ChunkWriter()
        s.data_received(cw.write(RawMessage(2, m.WINDOW_ACK_SIZE, 0, 0, struct.pack(">I", 1000))))
        s.reader.bytes_received = 2**32 - 500
        s._last_ack = s.reader.bytes_received
        s.data_received(cw.write(RawMessage(4, m.AUDIO, 1, 0, b"\xaf\x01" * 600)))
        acks = [x for x in ChunkReader().feed(bytes(t.out)) if x.type_id == m.ACKNOWLEDGEMENT]
        assert len(acks) == 1
        value = struct.unpack(">I", acks[0].body)[0]
        # 500 bytes before 2^32, then a 1200-byte message plus its chunk headers: the counter wrapped.
        assert 700 <= value < 800
        s.connection_lost(None)


async def test_real_acks_over_the_wire(tmp_path: Path) -> None:
    async with running_ingest(tmp_path) as h:
        c = await RawClient.connect(h.port)
        c.send(RawMessage(2, m.WINDOW_ACK_SIZE, 0, 0, struct.pack(">I", 5000)))
        await c.start_publishing("live", "acked")
        c.set_chunk_size(4096)
        for i in range(10):
            c.send(RawMessage(4, m.AUDIO, 1, i * 21, b"\xaf\x01" + b"\x00" * 2000))
        ack = await c.expect(lambda x: x.type_id == m.ACKNOWLEDGEMENT)
        assert struct.unpack(">I", ack.body)[0] >= 5000
        await c.close()


async def test_idle_publisher_is_dropped(tmp_path: Path) -> None:
    async with running_ingest(tmp_path, idle_timeout_s=1.0, stats_interval_s=0.25) as h:
        c = await RawClient.connect(h.port)
        await c.start_publishing("live", "idle")
        c.send(RawMessage(4, m.AUDIO, 1, 0, b"\xaf\x01" + b"\x00" * 20))
        [unp] = await h.wait_for("unpublish", timeout_s=5)
        assert unp["reason"] == "idle_timeout"
        assert await asyncio.wait_for(c.r.read(), 3) == b""
        await c.close()


def _flv_tag(tag: int, ts: int, body: bytes) -> bytes:
    return (bytes([tag]) + len(body).to_bytes(3, "big") + (ts & 0xFFFFFF).to_bytes(3, "big")
            + bytes([ts >> 24]) + b"\0\0\0" + body + (11 + len(body)).to_bytes(4, "big"))


async def test_enhanced_rtmp_hevc_and_aggregate(tmp_path: Path) -> None:
    """hvc1 FourCC frames (Enhanced RTMP) inside an aggregate message: split, measured, recorded."""
    hvcc = hevc_config_record(tmp_path)
    async with running_ingest(tmp_path) as h:
        c = await RawClient.connect(h.port)
        await c.start_publishing("live", "hevc")
        c.set_chunk_size(4096)
        c.send(RawMessage(6, m.VIDEO, 1, 0, bytes([0x90]) + b"hvc1" + hvcc))  # SequenceStart
        tags = []
        for i in range(90):
            key = i % 30 == 0
            body = bytes([(0x90 if key else 0xA0) | 1]) + b"hvc1" + b"\x00\x00\x00" + bytes(500 if key else 100)
            tags.append(_flv_tag(9, 1000 + i * 40, body))
        for start in range(0, 90, 10):  # aggregates of 10 tags; inner timestamps are relative
            c.send(RawMessage(6, m.AGGREGATE, 1, 1000 + start * 40, b"".join(tags[start:start + 10])))
        c.command("deleteStream", 7, None, 1.0)
        [unp] = await h.wait_for("unpublish")
        [seq] = [e for e in h.of("sequence_header") if e["track"] == "video"]
        await c.close()
    assert seq["codec"] == "hevc" and seq["enhanced"] is True
    assert (seq["width"], seq["height"], seq["profile"]) == (854, 480, "Main")
    v = unp["stats"]["video"]
    assert (v["codec"], v["frames"], v["keyframes"]) == ("hevc", 90, 3)
    assert v["keyframe_interval_s"]["mean"] == pytest.approx(1.2)
    assert v["fps"] == pytest.approx(25.0)
    rec = flv_tags(Path(unp["recording"]["path"]))
    assert [ts for t, ts, _ in rec if t == 9] == [0] + [1000 + i * 40 for i in range(90)]
