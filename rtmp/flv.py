"""FLV recording of one published stream, valid whichever way the stream ends.

Tags are queued in memory as they arrive and written with one writev per 256 KiB (no
per-message syscall, no copy of media payloads). The first tag is always an onMetaData script
tag whose `duration` and `filesize` are the last two properties, so `close()` can patch both
doubles in place. Every end path (deleteStream, TCP
close or reset, replaced publisher, server shutdown) goes through `close()`, and a file that is
never closed (the process is killed) is still a readable FLV up to its last complete write,
because FLV needs no index.
"""

from __future__ import annotations

import os
import re
import struct
import time
from pathlib import Path
from typing import Any

from rtmp import amf0

TAG_AUDIO = 8
TAG_VIDEO = 9
TAG_SCRIPT = 18

FLV_HEADER = b"FLV\x01\x05\x00\x00\x00\x09" + b"\x00\x00\x00\x00"
_DURATION_KEY = b"\x00\x08duration\x00"
_FILESIZE_KEY = b"\x00\x08filesize\x00"
_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\]")


def recording_path(record_dir: Path, app: str, key: str, when_s: float | None = None) -> Path:
    """`<record_dir>/<app>/<key>/<UTC timestamp>.flv`, unique even for reconnects in one second.

    `app` and `key` must already be validated (see streams.is_safe_name); this re-checks them so
    no caller can write outside `record_dir`.
    """
    for part in (app, key):
        if not part or part in (".", "..") or _UNSAFE.search(part):
            raise ValueError(f"unsafe path component {part!r}")
    when_s = time.time() if when_s is None else when_s
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(when_s)) + f".{int(when_s * 1000) % 1000:03d}Z"
    folder = record_dir / app / key
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stamp}.flv"
    n = 1
    while path.exists():
        path = folder / f"{stamp}-{n}.flv"
        n += 1
    return path


def remove_recording(path: Path, record_dir: Path | None) -> None:
    """Delete a recording that holds no media, and its `<app>/<key>` folders if that empties them.

    Only inside `record_dir`: the folders above it are never touched.
    """
    path.unlink(missing_ok=True)
    if record_dir is None:
        return
    root = record_dir.resolve()
    folder = path.parent.resolve()
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:  # not empty (another recording), or gone
            return
        folder = folder.parent


#: Tag header: type<<24|size, ts low 24 bits<<8|ts high 8 bits, 3 zero bytes of stream id.
_TAG_HEADER = struct.Struct(">II3x")
_PREV_SIZE = struct.Struct(">I")
_DOUBLE = struct.Struct(">d")
#: Pieces per writev call (Linux IOV_MAX is 1024).
_IOV_BATCH = 1000


def _writev_all(fd: int, pieces: list[bytes]) -> None:
    """Write every piece with as few writev calls as possible, coping with short writes."""
    while pieces:
        batch = pieces[:_IOV_BATCH]
        n = os.writev(fd, batch)
        i = 0
        while i < len(batch) and n >= len(batch[i]):
            n -= len(batch[i])
            i += 1
        rest = pieces[i:]
        if n and rest:
            rest[0] = memoryview(rest[0])[n:]  # type: ignore[call-overload]
        pieces = rest


class FlvRecorder:
    """Buffers tag pieces in a list and writes them with one `writev` per `buffer_bytes`, or as
    soon as the buffer holds more than `max_delay_ms` of media time.

    No Python-side copy of media payloads (a BufferedWriter copies each body into its buffer,
    and costs three calls per tag); a killed process loses at most `buffer_bytes`. The time bound
    is for whoever tails the file (the live probes): 256 KiB is 0.3 s at 6 Mb/s but 32 s of a
    64 kb/s audio-only stream. Media time (tag timestamps) costs no clock call per tag.
    """

    def __init__(self, path: Path, buffer_bytes: int = 256 * 1024, max_delay_ms: int | None = 250) -> None:
        self.path = path
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        self._buffer_bytes = buffer_bytes
        self._max_delay_ms = max_delay_ms
        #: timestamp of the oldest tag still in the buffer
        self._pending_since_ms: int | None = None
        self._pending: list[bytes] = [FLV_HEADER]
        self._pending_bytes = len(FLV_HEADER)
        self._pos = len(FLV_HEADER)
        self._meta_done = False
        self._duration_off: int | None = None
        self._filesize_off: int | None = None
        self.first_ts_ms: int | None = None
        self.last_ts_ms: int | None = None
        self.tags = 0
        self.media_tags = 0

    @property
    def closed(self) -> bool:
        return self._fd is None

    def write_metadata(self, metadata: dict[str, Any] | None, ts_ms: int = 0) -> None:
        """Write the publisher's onMetaData; the first one becomes the patchable header tag."""
        if self._meta_done:
            self._write_tag(TAG_SCRIPT, ts_ms, amf0.encode("onMetaData", amf0.EcmaArray(metadata or {})))
            return
        props = amf0.EcmaArray({k: v for k, v in (metadata or {}).items() if k not in ("duration", "filesize")})
        props["duration"] = 0.0
        props["filesize"] = 0.0
        body = amf0.encode("onMetaData", props)
        tag_start = self._pos
        d = body.rfind(_DURATION_KEY)
        s = body.rfind(_FILESIZE_KEY)
        self._write_tag(TAG_SCRIPT, 0, body)
        self._duration_off = tag_start + 11 + d + len(_DURATION_KEY) if d >= 0 else None
        self._filesize_off = tag_start + 11 + s + len(_FILESIZE_KEY) if s >= 0 else None
        self._meta_done = True

    def write_media(self, tag_type: int, ts_ms: int, body: bytes) -> None:
        if not self._meta_done:
            self.write_metadata(None)
        if self.first_ts_ms is None:
            self.first_ts_ms = ts_ms
        self.last_ts_ms = ts_ms
        self.media_tags += 1
        self._write_tag(tag_type, ts_ms, body)

    def write_data(self, ts_ms: int, body: bytes) -> None:
        if not self._meta_done:
            self.write_metadata(None)
        self._write_tag(TAG_SCRIPT, ts_ms, body)

    def _write_tag(self, tag_type: int, ts_ms: int, body: bytes) -> None:
        if self._fd is None:
            return
        size = len(body)
        ts32 = ts_ms & 0xFFFFFFFF
        pending = self._pending
        pending.append(_TAG_HEADER.pack((tag_type << 24) | size, ((ts32 & 0xFFFFFF) << 8) | (ts32 >> 24)))
        pending.append(body)
        pending.append(_PREV_SIZE.pack(size + 11))
        self._pos += 15 + size
        self._pending_bytes += 15 + size
        self.tags += 1
        since = self._pending_since_ms
        if since is None:
            self._pending_since_ms = since = ts_ms
        if self._pending_bytes >= self._buffer_bytes or (
                self._max_delay_ms is not None and abs(ts_ms - since) >= self._max_delay_ms):
            # abs: audio and video tags interleave a few ms out of order; a jump back (a
            # timestamp reset) of more than the bound flushes too
            self.flush()

    def flush(self) -> None:
        if self._fd is None or not self._pending:
            return
        self._pending_since_ms = None
        pieces, self._pending, self._pending_bytes = self._pending, [], 0
        _writev_all(self._fd, pieces)

    def close(self) -> dict[str, Any]:
        """Flush, patch duration/filesize and close; idempotent. Returns what was written."""
        fd = self._fd
        if fd is None:
            return self.summary()
        try:
            duration_s = 0.0
            if self.first_ts_ms is not None and self.last_ts_ms is not None:
                duration_s = max(0, self.last_ts_ms - self.first_ts_ms) / 1000
            self.duration_s = duration_s
            self.flush()
            if self._duration_off is not None:
                os.pwrite(fd, _DOUBLE.pack(duration_s), self._duration_off)
            if self._filesize_off is not None:
                os.pwrite(fd, _DOUBLE.pack(float(self._pos)), self._filesize_off)
        finally:
            self._fd = None
            self._pending = []
            os.close(fd)
        return self.summary()

    def summary(self) -> dict[str, Any]:
        return {"path": str(self.path), "bytes": self._pos, "tags": self.tags,
                "duration_s": getattr(self, "duration_s", None)}
