"""FLV recording of one published stream, valid whichever way the stream ends.

Tags are written through a buffered file as they arrive (no per-message syscall). The first
tag is always an onMetaData script tag whose `duration` and `filesize` are the last two
properties, so `close()` can patch both doubles in place. Every end path (deleteStream, TCP
close or reset, replaced publisher, server shutdown) goes through `close()`, and a file that is
never closed (the process is killed) is still a readable FLV up to its last complete write,
because FLV needs no index.
"""

from __future__ import annotations

import re
import struct
import time
from pathlib import Path
from typing import Any, BinaryIO

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


class FlvRecorder:
    def __init__(self, path: Path, buffer_bytes: int = 256 * 1024) -> None:
        self.path = path
        self._f: BinaryIO | None = open(path, "xb", buffering=buffer_bytes)  # closed in close()
        self._f.write(FLV_HEADER)
        self._pos = len(FLV_HEADER)
        self._meta_done = False
        self._duration_off: int | None = None
        self._filesize_off: int | None = None
        self.first_ts_ms: int | None = None
        self.last_ts_ms: int | None = None
        self.tags = 0

    @property
    def closed(self) -> bool:
        return self._f is None

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
        self._write_tag(tag_type, ts_ms, body)

    def write_data(self, ts_ms: int, body: bytes) -> None:
        if not self._meta_done:
            self.write_metadata(None)
        self._write_tag(TAG_SCRIPT, ts_ms, body)

    def _write_tag(self, tag_type: int, ts_ms: int, body: bytes) -> None:
        f = self._f
        if f is None:
            return
        size = len(body)
        ts32 = ts_ms & 0xFFFFFFFF
        header = struct.pack(">B3sI3s", tag_type, size.to_bytes(3, "big"),
                             ((ts32 & 0xFFFFFF) << 8) | (ts32 >> 24), b"\x00\x00\x00")
        f.write(header)
        f.write(body)
        f.write(struct.pack(">I", size + 11))
        self._pos += 11 + size + 4
        self.tags += 1

    def close(self) -> dict[str, Any]:
        """Patch duration/filesize and close; idempotent. Returns what was written."""
        f = self._f
        if f is None:
            return self.summary()
        self._f = None
        try:
            duration_s = 0.0
            if self.first_ts_ms is not None and self.last_ts_ms is not None:
                duration_s = max(0, self.last_ts_ms - self.first_ts_ms) / 1000
            self.duration_s = duration_s
            f.flush()
            if self._duration_off is not None:
                f.seek(self._duration_off)
                f.write(struct.pack(">d", duration_s))
            if self._filesize_off is not None:
                f.seek(self._filesize_off)
                f.write(struct.pack(">d", float(self._pos)))
        finally:
            f.close()
        return self.summary()

    def summary(self) -> dict[str, Any]:
        return {"path": str(self.path), "bytes": self._pos, "tags": self.tags,
                "duration_s": getattr(self, "duration_s", None)}
