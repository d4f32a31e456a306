"""Chunk reader/writer: every header form, csid sizes, remembered deltas, extended timestamps."""

from __future__ import annotations

import struct

import pytest

from rtmp.chunk import ChunkReader, ChunkWriter, RawMessage
from rtmp.errors import ChunkError


def feed_bytewise(reader: ChunkReader, data: bytes, step: int = 1) -> list[RawMessage]:
    out: list[RawMessage] = []
    for i in range(0, len(data), step):
        out += reader.feed(data[i:i + step])
    return out


@pytest.mark.parametrize("csid", [2, 3, 63, 64, 65, 319, 320, 321, 65599])
@pytest.mark.parametrize("step", [1, 7, 1000])
def test_round_trip_csids_and_splits(csid: int, step: int) -> None:
    msgs = [RawMessage(csid, 9, 1, t, bytes([t % 251]) * (t % 700 + 1)) for t in range(0, 3000, 40)]
    w = ChunkWriter(chunk_size=128)
    data = b"".join(w.write(x) for x in msgs)
    assert feed_bytewise(ChunkReader(), data, step) == msgs


def test_type3_new_message_reuses_delta_after_type0() -> None:
    """Type 0 at t=100, then type-3 new messages: delta is the type-0 timestamp (spec, ffmpeg)."""
    r = ChunkReader()
    body = b"\xaf\x01" + b"x" * 10
    data = bytes([0x04]) + (100).to_bytes(3, "big") + len(body).to_bytes(3, "big") + b"\x08" + b"\x01\0\0\0" + body
    data += bytes([0xC4]) + body + bytes([0xC4]) + body
    assert [x.timestamp_ms for x in r.feed(data)] == [100, 200, 300]


def test_type3_new_message_reuses_type2_delta() -> None:
    w = ChunkWriter()
    msgs = [RawMessage(4, 8, 1, 1000 + 21 * i, b"a" * 6) for i in range(50)]
    chunks = [w.write(x) for x in msgs]
    # Silent AAC pattern: one type 0, one type 2 (the delta), then only 1-byte type-3 headers.
    assert chunks[1][0] >> 6 == 2 and all(c[0] >> 6 == 3 and len(c) == 7 for c in chunks[2:])
    assert ChunkReader().feed(b"".join(chunks)) == msgs


@pytest.mark.parametrize("ext_on_continuation", [True, False])
def test_extended_timestamps_with_and_without_repeat(ext_on_continuation: bool) -> None:
    w = ChunkWriter(chunk_size=100, ext_on_continuation=ext_on_continuation)
    start = 0xFFFFFF + 12345
    msgs = [RawMessage(6, 9, 1, start + 33 * i, bytes([i]) * 450) for i in range(10)]
    data = b"".join(w.write(x) for x in msgs)
    r = ChunkReader()
    r.chunk_size = 100  # as if SetChunkSize 100 had arrived
    assert feed_bytewise(r, data, 57) == msgs


def test_extended_delta_on_type1() -> None:
    w = ChunkWriter()
    msgs = [RawMessage(4, 8, 1, 0, b"a"), RawMessage(4, 8, 1, 0x1000000 + 5, b"bb"),
            RawMessage(4, 8, 1, 2 * (0x1000000 + 5), b"cc")]
    assert ChunkReader().feed(b"".join(w.write(x) for x in msgs)) == msgs


def test_32bit_wrap_is_unwrapped() -> None:
    w = ChunkWriter()
    ts = [2**32 - 100 + 40 * i for i in range(6)]
    msgs = [RawMessage(4, 8, 1, t, b"z" * 3) for t in ts]
    out = ChunkReader().feed(b"".join(w.write(x) for x in msgs))
    assert [x.timestamp_ms for x in out] == ts  # never goes back to 0
    # And a type-0 header with a small absolute value after the wrap continues upwards.
    w2 = ChunkWriter()
    data = w2.write(RawMessage(4, 8, 1, 2**32 - 10, b"a")) + w2.write(RawMessage(4, 8, 1, 20, b"b"), fmt=0)
    assert [x.timestamp_ms for x in ChunkReader().feed(data)] == [2**32 - 10, 2**32 + 20]


def test_set_chunk_size_mid_stream_and_abort() -> None:
    w = ChunkWriter(chunk_size=128)
    data = w.write(RawMessage(6, 9, 1, 0, b"a" * 300))
    data += w.write(RawMessage(2, 1, 0, 0, struct.pack(">I", 4096)))
    w.chunk_size = 4096
    data += w.write(RawMessage(6, 9, 1, 33, b"b" * 5000))
    # Half a message on csid 7, then Abort(7), then a fresh message on 7.
    partial = w.write(RawMessage(7, 8, 1, 0, b"c" * 6000))[:4096 + 12]
    data += partial + w.write(RawMessage(2, 2, 0, 0, struct.pack(">I", 7)))
    data += w.write(RawMessage(7, 8, 1, 0, b"d" * 10), fmt=0)
    r = ChunkReader()
    out = feed_bytewise(r, data, 333)
    assert r.chunk_size == 4096
    assert [(x.csid, len(x.body)) for x in out] == [(6, 300), (2, 4), (6, 5000), (2, 4), (7, 10)]


def test_message_size_limit_and_16mib() -> None:
    big = RawMessage(6, 9, 1, 0, b"k" * (16 * 1024 * 1024 - 1))  # the largest a 24-bit length allows
    w = ChunkWriter(chunk_size=128)
    data = w.write(RawMessage(2, 1, 0, 0, struct.pack(">I", 65536)))
    w.chunk_size = 65536
    assert ChunkReader().feed(data + w.write(big))[1].body == big.body
    with pytest.raises(ChunkError, match="declared"):
        ChunkReader(max_message_bytes=1024).feed(ChunkWriter().write(RawMessage(6, 9, 1, 0, b"x" * 2048))[:20])


def test_type1_first_on_unknown_csid_is_an_error() -> None:
    with pytest.raises(ChunkError):
        ChunkReader().feed(bytes([0x44]) + b"\x00" * 7)


def test_ack_counter_counts_bytes() -> None:
    r = ChunkReader()
    r.feed(b"\x02" + b"\x00" * 5)
    assert r.bytes_received == 6


def test_interleaved_pending_bytes_are_bounded() -> None:
    """Many half-sent large messages on different chunk streams: refused before memory runs away."""
    w = ChunkWriter(chunk_size=128)
    data = b"".join(w.write(RawMessage(10 + i, 9, 1, 0, bytes(1_000_000)))[:140] for i in range(40))
    r = ChunkReader(max_message_bytes=1_000_000, max_pending_bytes=8_000_000)
    with pytest.raises(ChunkError, match="pending"):
        r.feed(data)


def test_empty_message_flood_is_refused() -> None:
    w = ChunkWriter()
    data = w.write(RawMessage(5, 8, 1, 0, b"")) + bytes([0xC5]) * 20000
    with pytest.raises(ChunkError, match="flood"):
        ChunkReader().feed(data)
