"""RTMP chunk stream: reassemble messages from chunks (reader) and split them again (writer).

Sans-IO: `ChunkReader.feed(bytes) -> list[RawMessage]`, `ChunkWriter.write(msg) -> bytes`.
Points that the simple Python servers get wrong, and how this one handles them:

* A type-3 header that *starts* a message reuses the chunk stream's remembered timestamp delta
  (after a type-0 header that delta is the type-0 timestamp field, as the spec and ffmpeg say);
  silent AAC relies on this for nearly every frame.
* Extended timestamps: read on types 0–2 when the 24-bit field is 0xFFFFFF, and on type-3 chunks
  of such a stream *if present*: a compliant peer repeats the same 4 bytes, so the bytes are
  consumed only when they equal the remembered value (some clients omit them).
* Timestamps are unwrapped to a 64-bit millisecond counter, so a 32-bit wrap never goes backwards.
* SetChunkSize and Abort act inside the reader, at the exact byte where they arrive, because
  the very next chunk is already cut to the new size.
* Declared message lengths above `max_message_bytes` raise `ChunkError` (that session ends).
* Memory: a message being reassembled is one growing `bytearray` (not a list of chunk `bytes`,
  which with chunk size 2 cost ~17× the payload in object headers), and `held_bytes` (those
  buffers plus the unparsed input) may not exceed `max_pending_bytes`; the session reports it to
  the server-wide budget (`rtmp.budget`).
* Runs of small type-3 continuation chunks (chunk size ≤ 256) are cut with a few strided slice
  copies instead of one Python iteration per chunk, so a chunk-size-2 peer costs about what a
  normal one does.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from rtmp.errors import ChunkError

DEFAULT_CHUNK_SIZE = 128
MAX_CHUNK_SIZE = 0x7FFFFFFF
#: 16 MiB: a 4K keyframe exceeds nginx-rtmp's 1 MiB default; RTMP's 24-bit length tops out here.
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
#: A peer opening thousands of chunk streams is attacking memory, not streaming.
DEFAULT_MAX_CHUNK_STREAMS = 256
#: Declared sizes of all messages being reassembled at once (interleaved on several chunk
#: streams) may not exceed this: without it, 256 half-sent 16 MiB messages would hold 4 GiB.
DEFAULT_MAX_PENDING_BYTES = 2 * DEFAULT_MAX_MESSAGE_BYTES
#: A flood of 1-byte type-3 headers repeating an empty (or 1-byte) message makes tens of
#: thousands of messages per read and hogs the loop for every session; real publishers send
#: next to none of those.
MAX_TINY_MESSAGES_PER_FEED = 1024
#: Messages up to this size count as "tiny" for that flood limit: a flood of 2-byte AAC messages
#: is as cheap to send as empty ones (3 wire bytes each) and as costly to handle.
TINY_MESSAGE_BYTES = 16
#: Continuation runs are sliced in bulk when the chunk size is at most this.
_FAST_CHUNK_SIZE = 256

MSG_SET_CHUNK_SIZE = 1
MSG_ABORT = 2

_HEADER_LEN = (11, 7, 3, 0)
_U32 = 1 << 32


@dataclass(slots=True)
class RawMessage:
    """One reassembled RTMP message. `timestamp_ms` is unwrapped (can exceed 2^32)."""

    csid: int
    type_id: int
    stream_id: int
    timestamp_ms: int
    body: bytes


class _StreamState:
    """What a chunk stream id remembers between chunks (the 'previous header')."""

    __slots__ = ("buf", "delta", "ext", "ext_value", "length", "remaining", "seen", "stream_id",
                 "timestamp", "ts32", "type_id")

    def __init__(self) -> None:
        self.seen = False       # a header has been committed on this chunk stream
        self.timestamp = 0      # unwrapped absolute ms of the current/last message
        self.ts32 = 0           # same, modulo 2^32, as the wire sees it
        self.delta = 0          # remembered delta for type-3 new messages
        self.length = 0
        self.type_id = 0
        self.stream_id = 0
        self.ext = False        # last header used an extended timestamp
        self.ext_value = 0      # ...and this was its 4-byte value
        self.buf: bytearray | None = None  # the partial message, None between messages
        self.remaining = 0


class ChunkReader:
    """Incremental chunk parser. Raises `ChunkError` on protocol violations."""

    def __init__(self, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                 max_chunk_streams: int = DEFAULT_MAX_CHUNK_STREAMS,
                 max_pending_bytes: int | None = None) -> None:
        self.chunk_size = DEFAULT_CHUNK_SIZE
        self.max_message_bytes = max_message_bytes
        self.max_pending_bytes = max_pending_bytes if max_pending_bytes is not None else 2 * max_message_bytes
        self.max_chunk_streams = max_chunk_streams
        self.bytes_received = 0
        self._buf = bytearray()
        self._streams: dict[int, _StreamState] = {}
        self._held = 0  # bytes in the partial-message buffers

    @property
    def held_bytes(self) -> int:
        """Memory this reader holds for peer data: partial messages plus unparsed input."""
        return self._held + len(self._buf)

    def release(self) -> None:
        """Drop every partial message and unparsed byte (the session is over)."""
        self._buf = bytearray()
        for st in self._streams.values():
            st.buf = None
        self._held = 0

    def feed(self, data: bytes | bytearray | memoryview) -> list[RawMessage]:
        self.bytes_received += len(data)
        buf = self._buf
        buf += data
        out: list[RawMessage] = []
        try:
            pos = self._parse(buf, out)
            if pos:
                del buf[:pos]
            held = self._held + len(buf)
            if held > self.max_pending_bytes:
                raise ChunkError(f"{held} bytes of partial messages held (limit {self.max_pending_bytes})")
        except ChunkError as exc:
            # Complete messages before the bad chunk are still real: hand them over with the error.
            exc.messages = out
            self.release()
            raise
        return out

    def _big_continuations(self, buf: bytearray, mv: memoryview, start: int, n: int, st: _StreamState,
                           header: int) -> int:
        """Large chunks (the usual 4096): append whole continuation chunks of `st`'s message with
        no header bookkeeping (nothing in the chunk stream's state changes mid-message), up to
        but not including the message's last chunk."""
        size = self.chunk_size
        stride = size + 1
        partial = st.buf
        assert partial is not None
        pos = start
        remaining = st.remaining
        while remaining > size and n - pos >= stride and buf[pos] == header:
            partial += mv[pos + 1:pos + stride]
            pos += stride
            remaining -= size
        if pos != start:
            self._held += st.remaining - remaining
            st.remaining = remaining
        return pos

    def _fast_continuation(self, buf: bytearray, start: int, n: int, st: _StreamState) -> int:
        """Consume a run of whole 1-byte-header type-3 continuation chunks of `st`'s message at
        `start` in bulk; return the new position (`start` when there is no run worth it).

        The run stops before the message's last chunk (the ordinary path completes it) and at
        the first byte that is not this chunk stream's type-3 header.
        """
        size = self.chunk_size
        stride = size + 1
        k = min((st.remaining - 1) // size, (n - start) // stride)
        if k < 4:
            return start
        end = start + k * stride
        headers = buf[start:end:stride]
        k -= len(headers.lstrip(headers[:1]))  # leading run of the same header byte
        if k < 4:
            return start
        end = start + k * stride
        piece = bytearray(k * size)
        for j in range(size):
            piece[j::size] = buf[start + 1 + j:end:stride]
        assert st.buf is not None
        st.buf += piece
        st.remaining -= k * size
        self._held += k * size
        return end

    def _parse(self, buf: bytearray, out: list[RawMessage]) -> int:
        mv = memoryview(buf)
        try:
            return self._parse_view(buf, mv, out)
        finally:
            mv.release()  # feed() resizes buf next; an exported view would forbid that

    def _parse_view(self, buf: bytearray, mv: memoryview, out: list[RawMessage]) -> int:
        """Parse whole chunks from `buf`; return how many bytes were consumed.

        Nothing in a chunk stream's state is changed until the chunk's payload is complete,
        so a chunk split across TCP reads is simply parsed again on the next feed. Payload bytes
        are copied once (view slice → bytes) and joined once per multi-chunk message.
        """
        n = len(buf)
        pos = 0
        tiny = 0
        streams = self._streams
        while pos < n:
            start = pos
            b0 = buf[pos]
            fmt = b0 >> 6
            csid = b0 & 0x3F
            if fmt == 3 and csid > 1:
                fst = streams.get(csid)
                if fst is not None and fst.buf is not None and not fst.ext:
                    if self.chunk_size <= _FAST_CHUNK_SIZE:
                        pos = self._fast_continuation(buf, start, n, fst)
                    else:
                        pos = self._big_continuations(buf, mv, start, n, fst, b0)
                    if pos != start:
                        continue
            pos += 1
            if csid == 0:
                if n - pos < 1:
                    return start
                csid = 64 + buf[pos]
                pos += 1
            elif csid == 1:
                if n - pos < 2:
                    return start
                csid = 64 + buf[pos] + (buf[pos + 1] << 8)
                pos += 2
            hlen = _HEADER_LEN[fmt]
            if n - pos < hlen:
                return start
            st = streams.get(csid)
            if st is None:
                if fmt != 0:
                    raise ChunkError(f"chunk stream {csid} starts with a type-{fmt} header")
                if len(streams) >= self.max_chunk_streams:
                    raise ChunkError(f"more than {self.max_chunk_streams} chunk streams")
                st = _StreamState()
            new_message = True
            if fmt < 3:
                ts_field = (buf[pos] << 16) | (buf[pos + 1] << 8) | buf[pos + 2]
                length = st.length
                type_id = st.type_id
                stream_id = st.stream_id
                if fmt <= 1:
                    length = (buf[pos + 3] << 16) | (buf[pos + 4] << 8) | buf[pos + 5]
                    type_id = buf[pos + 6]
                    if fmt == 0:
                        stream_id = int.from_bytes(buf[pos + 7:pos + 11], "little")
                pos += hlen
                ext = ts_field == 0xFFFFFF
                if ext:
                    if n - pos < 4:
                        return start
                    ts_field = int.from_bytes(buf[pos:pos + 4], "big")
                    pos += 4
                if length > self.max_message_bytes:
                    raise ChunkError(f"message of {length} bytes declared (limit {self.max_message_bytes})")
                if fmt == 0:
                    if st.seen:
                        diff = (ts_field - st.ts32) % _U32
                        if diff >= _U32 // 2:
                            diff -= _U32
                        timestamp = st.timestamp + diff
                        if timestamp < 0:
                            timestamp = ts_field
                    else:
                        timestamp = ts_field
                    ts32 = ts_field
                else:
                    timestamp = st.timestamp + ts_field
                    ts32 = (st.ts32 + ts_field) % _U32
                delta = ts_field
                ext_value = ts_field
            else:
                ext = st.ext
                ext_value = st.ext_value
                if ext:
                    if n - pos < 4:
                        return start
                    if int.from_bytes(buf[pos:pos + 4], "big") == ext_value:
                        pos += 4
                length = st.length
                type_id = st.type_id
                stream_id = st.stream_id
                delta = st.delta
                if st.buf is None:
                    # Type 3 starting a new message: same header, remembered delta.
                    timestamp = st.timestamp + delta
                    ts32 = (st.ts32 + delta) % _U32
                else:
                    new_message = False
                    timestamp = st.timestamp
                    ts32 = st.ts32
            remaining = length if new_message else st.remaining
            take = remaining if remaining < self.chunk_size else self.chunk_size
            if n - pos < take:
                return start
            # Commit: the whole chunk is here.
            if csid not in streams:
                streams[csid] = st
            st.seen = True
            st.timestamp = timestamp
            st.ts32 = ts32
            st.delta = delta
            st.ext = ext
            st.ext_value = ext_value
            st.length = length
            st.type_id = type_id
            st.stream_id = stream_id
            piece = mv[pos:pos + take]
            pos += take
            remaining -= take
            st.remaining = remaining
            if new_message:
                # (A fresh header mid-message means the peer abandoned the old one: it is dropped.)
                if st.buf is not None:
                    self._held -= len(st.buf)
                    st.buf = None
                if remaining:
                    pending = length
                    if self._held:  # other partial messages (rare: interleaving on chunk streams)
                        pending += sum(o.length for o in streams.values() if o.buf is not None)
                    if pending > self.max_pending_bytes:
                        raise ChunkError(f"{pending} bytes of interleaved messages pending "
                                         f"(limit {self.max_pending_bytes})")
                    st.buf = bytearray(piece)
                    self._held += take
                    continue
                body = piece.tobytes()
            else:
                partial = st.buf
                if partial is None:  # cannot happen: a continuation always has a message
                    raise ChunkError("continuation chunk without a message")
                partial += piece
                self._held += take
                if remaining:
                    continue
                body = bytes(partial)
                self._held -= len(partial)
            st.buf = None
            msg = RawMessage(csid, type_id, stream_id, timestamp, body)
            out.append(msg)
            if length <= TINY_MESSAGE_BYTES:
                tiny += 1
                if tiny > MAX_TINY_MESSAGES_PER_FEED:
                    raise ChunkError(f"more than {MAX_TINY_MESSAGES_PER_FEED} messages of <= {TINY_MESSAGE_BYTES} bytes "
                                     "in one read (a flood)")
            if stream_id == 0 and type_id in (MSG_SET_CHUNK_SIZE, MSG_ABORT):
                self._control(msg)
        return pos

    def _control(self, msg: RawMessage) -> None:
        if len(msg.body) < 4:
            raise ChunkError("short protocol control message")
        value = struct.unpack(">I", msg.body[:4])[0]
        if msg.type_id == MSG_SET_CHUNK_SIZE:
            size = value & 0x7FFFFFFF
            if size < 1:
                raise ChunkError("SetChunkSize 0")
            self.chunk_size = size
        else:
            st = self._streams.get(value)
            if st is not None:
                if st.buf is not None:
                    self._held -= len(st.buf)
                st.buf = None
                st.remaining = 0


def _basic_header(fmt: int, csid: int) -> bytes:
    if csid < 2 or csid > 65599:
        raise ValueError(f"chunk stream id {csid} out of range 2..65599")
    if csid < 64:
        return bytes([(fmt << 6) | csid])
    if csid < 320:
        return bytes([fmt << 6, csid - 64])
    rest = csid - 64
    return bytes([(fmt << 6) | 1, rest & 0xFF, rest >> 8])


class ChunkWriter:
    """Split messages into chunks, compressing headers against the previous one per chunk stream.

    `fmt` forces a header type (tests use it to produce every case); `ext_on_continuation=False`
    imitates the clients that omit the extended timestamp on type-3 chunks.
    """

    def __init__(self, chunk_size: int = DEFAULT_CHUNK_SIZE, ext_on_continuation: bool = True) -> None:
        self.chunk_size = chunk_size
        self.ext_on_continuation = ext_on_continuation
        self._prev: dict[int, tuple[int, int, int, int, int]] = {}  # csid -> (ts32, delta, len, type, msid)

    def write(self, msg: RawMessage, fmt: int | None = None) -> bytes:
        ts32 = msg.timestamp_ms % _U32
        length = len(msg.body)
        prev = self._prev.get(msg.csid)
        if fmt is None:
            if prev is None or prev[4] != msg.stream_id or (ts32 - prev[0]) % _U32 >= _U32 // 2:
                fmt = 0
            else:
                delta = (ts32 - prev[0]) % _U32
                if prev[2] != length or prev[3] != msg.type_id:
                    fmt = 1
                elif prev[1] != delta:
                    fmt = 2
                else:
                    fmt = 3
        if fmt == 0:
            field = ts32
        else:
            if prev is None:
                raise ValueError("a compressed header needs a previous message on this chunk stream")
            field = (ts32 - prev[0]) % _U32 if fmt < 3 else prev[1]
        self._prev[msg.csid] = (ts32, field, length, msg.type_id, msg.stream_id)
        ext = field >= 0xFFFFFF
        ext_bytes = struct.pack(">I", field) if ext else b""
        wire_ts = 0xFFFFFF if ext else field
        header = _basic_header(fmt, msg.csid)
        if fmt <= 2:
            header += wire_ts.to_bytes(3, "big")
        if fmt <= 1:
            header += length.to_bytes(3, "big") + bytes([msg.type_id])
        if fmt == 0:
            header += msg.stream_id.to_bytes(4, "little")
        parts = [header, ext_bytes]
        cont = _basic_header(3, msg.csid) + (ext_bytes if self.ext_on_continuation else b"")
        body = msg.body
        size = self.chunk_size
        parts.append(body[:size])
        for off in range(size, length, size):
            parts.append(cont)
            parts.append(body[off:off + size])
        return b"".join(parts)
