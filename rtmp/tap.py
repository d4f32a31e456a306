"""A per-stream tag tap: the live stream as an FLV byte stream for a consumer thread (a probe),
straight from the session, instead of re-reading the growing recording.

Why: a probe tailing the recording sees a tag only when the recorder flushes (every 256 KiB or
250 ms of media), so at 500 kbit/s its delay is set by the recording buffer, not by the stream.
A tap gets every tag the moment the session has handled it.

`TagTap` is a read-only, non-seekable `io.RawIOBase`, so PyAV/FFmpeg can demux it as a stream
(`probes.sources.av.AvSource(tap, container_format="flv")`). `readinto` returns whatever is
buffered (a short read) and blocks only when nothing is: FFmpeg asks for 32 KiB at a time, which
is half a second at 500 kbit/s. A tap opened after the stream started first gets the FLV header,
the last onMetaData and the last audio/video sequence headers, so its decoder can start. If the
consumer falls more than `max_pending_bytes` behind, the tap ends (`overrun` is set) instead of
holding the stream's bytes without bound: the ingest never waits for a probe.
"""

from __future__ import annotations

import io
import struct
import threading
from collections import deque

FLV_HEADER = b"FLV\x01\x05\x00\x00\x00\x09" + b"\x00\x00\x00\x00"
DEFAULT_MAX_PENDING_BYTES = 8 * 1024 * 1024
_TAG_HEADER = struct.Struct(">II3x")


def flv_tag(tag_type: int, ts_ms: int, body: bytes) -> bytes:
    """One FLV tag with its trailing PreviousTagSize (the recorder's layout)."""
    ts32 = ts_ms & 0xFFFFFFFF
    size = len(body)
    return b"".join((_TAG_HEADER.pack((tag_type << 24) | size, ((ts32 & 0xFFFFFF) << 8) | (ts32 >> 24)),
                     body, struct.pack(">I", size + 11)))


class TagTap(io.RawIOBase):
    def __init__(self, preamble: bytes = b"", max_pending_bytes: int = DEFAULT_MAX_PENDING_BYTES) -> None:
        super().__init__()
        self.max_pending_bytes = max_pending_bytes
        self._chunks: deque[memoryview] = deque()
        self._pending = 0
        self._cond = threading.Condition()
        self._ended = False
        self.overrun = False
        self.tags = 0
        self.bytes_read = 0
        self._put(FLV_HEADER + preamble)

    # --- the ingest's side (event loop thread) -----------------------------------------------------
    def _put(self, data: bytes) -> None:
        with self._cond:
            if self._ended:
                return
            if self._pending + len(data) > self.max_pending_bytes:
                self.overrun = True
                self._ended = True
            else:
                self._chunks.append(memoryview(data))
                self._pending += len(data)
            self._cond.notify()

    def push(self, tag_type: int, ts_ms: int, body: bytes) -> None:
        self.tags += 1
        self._put(flv_tag(tag_type, ts_ms, body))

    def end(self) -> None:
        """The stream ended: the reader gets the rest, then end of file."""
        with self._cond:
            self._ended = True
            self._cond.notify_all()

    @property
    def ended(self) -> bool:
        return self._ended

    # --- the consumer's side (any thread) ----------------------------------------------------------
    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def stop(self) -> None:
        """The consumer gives up (AvSource.stop calls this on its reader)."""
        self.end()

    def readinto(self, buf: bytearray | memoryview) -> int:  # type: ignore[override]
        with self._cond:
            while not self._chunks and not self._ended:
                self._cond.wait()
            out = memoryview(buf).cast("B")
            n = 0
            while self._chunks and n < len(out):
                chunk = self._chunks[0]
                take = min(len(chunk), len(out) - n)
                out[n:n + take] = chunk[:take]
                n += take
                if take == len(chunk):
                    self._chunks.popleft()
                else:
                    self._chunks[0] = chunk[take:]
            self._pending -= n
            self.bytes_read += n
            return n
