"""One inotify descriptor read by one thread: what the audit's two inotify users share.

`DirWatch` (directories for fanotify's permission marks) and `InotifyWatcher` (closed-after-write
files, the weaker fallback when fanotify is unavailable) differ only in what they watch for and
what they do with an event; the descriptor, its stop pipe, the reader thread and the parsing of
the kernel's packed `struct inotify_event` records are this module's, written once.
"""

from __future__ import annotations

import ctypes
import os
import struct
import threading
from collections.abc import Callable, Iterator

from monitor.audit.fdio import poll_until_stopped, read_available

IN_CLOSE_WRITE = 0x00000008
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_Q_OVERFLOW = 0x00004000
IN_ONLYDIR = 0x01000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
_EV = struct.Struct("iIII")  # wd, mask, cookie, len


class InotifyFd:
    """An inotify descriptor (or none, `fd < 0`, when the kernel refused one), its watches and a
    reader thread that stops on a byte written to its stop pipe, draining what arrived before."""

    def __init__(self) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self.fd = -1
        self.watched: dict[int, str] = {}  # watch descriptor -> directory path
        self._stop_r, self._stop_w = -1, -1
        self._thread: threading.Thread | None = None

    def open(self) -> int:
        """Open the descriptor; returns the errno when the kernel refused (0 on success)."""
        self.fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        return ctypes.get_errno() if self.fd < 0 else 0

    def add_watch(self, path: str, mask: int) -> bool:
        """Watch directory `path` for `mask`; False when inotify could not (no fd, watch limit)."""
        if self.fd < 0:
            return False
        wd = self._libc.inotify_add_watch(self.fd, path.encode(), mask)
        if wd < 0:
            return False
        self.watched[wd] = path
        return True

    def events(self) -> Iterator[tuple[str | None, int, bytes]]:
        """(watched directory or None, mask, entry name) of every event readable now."""
        for buf in read_available(self.fd):
            offset = 0
            while offset + _EV.size <= len(buf):
                wd, mask, _cookie, length = _EV.unpack_from(buf, offset)
                name = buf[offset + _EV.size: offset + _EV.size + length].rstrip(b"\0")
                offset += _EV.size + length
                yield self.watched.get(wd), mask, name

    def run(self, name: str, drain: Callable[[], None], idle_s: float | None = None,
            on_idle: Callable[[], None] | None = None) -> None:
        """Start the reader thread: `drain` whenever the fd is readable (only `on_idle` every
        `idle_s` when there is no fd), until `stop`."""
        self._stop_r, self._stop_w = os.pipe()
        fd = self.fd if self.fd >= 0 else self._stop_r  # no fd: nothing to read but the stop pipe
        drain_fn = drain if self.fd >= 0 else (lambda: None)
        self._thread = threading.Thread(
            target=poll_until_stopped, args=(fd, self._stop_r, drain_fn, idle_s, on_idle), name=name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            os.write(self._stop_w, b"x")
            self._thread.join(timeout=5)
            self._thread = None
        for fd in (self.fd, self._stop_r, self._stop_w):
            if fd >= 0:
                os.close(fd)
        self.fd = self._stop_r = self._stop_w = -1
