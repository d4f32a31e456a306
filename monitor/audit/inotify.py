"""inotify fallback (ctypes): which files were closed after writing, but not by whom.

Used when fanotify is unavailable. inotify watches are per directory, so every directory under
the work dir is watched and new ones are added as they appear (a file written into a directory
created a moment earlier can be missed: one more reason this evidence is weaker).
"""

from __future__ import annotations

import ctypes
import os
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from monitor.audit.fdio import poll_until_stopped, read_available

IN_CLOSE_WRITE = 0x00000008
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_Q_OVERFLOW = 0x00004000
IN_ISDIR = 0x40000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
_EV = struct.Struct("iIII")  # wd, mask, cookie, len

Record = dict[str, Any]


class InotifyWatcher:
    def __init__(self, root: Path, on_write: Callable[[Record], None], exclude: list[Path] | None = None) -> None:
        from monitor.audit.fanotify import refuse_root

        refuse_root(root)
        self.root = Path(os.path.realpath(root))
        self.on_write = on_write
        self.exclude = [Path(os.path.realpath(p)) for p in exclude or []]
        self.overflows = 0
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._fd = -1
        self._wds: dict[int, Path] = {}
        self._stop_r, self._stop_w = -1, -1
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"inotify_init1: {os.strerror(err)}")
        self._fd = fd
        self._watch_tree(self.root)
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._loop, name="inotify", daemon=True)
        self._thread.start()

    def _watch_tree(self, top: Path) -> None:
        for dirpath, dirnames, _ in os.walk(top):
            if self._excluded(dirpath):
                dirnames[:] = []
                continue
            wd = self._libc.inotify_add_watch(self._fd, dirpath.encode(), IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE)
            if wd >= 0:
                self._wds[wd] = Path(dirpath)

    def stop(self) -> None:
        if self._thread is not None:
            os.write(self._stop_w, b"x")
            self._thread.join(timeout=5)
            self._thread = None
        for fd in (self._fd, self._stop_r, self._stop_w):
            if fd >= 0:
                os.close(fd)
        self._fd = self._stop_r = self._stop_w = -1

    def _loop(self) -> None:
        poll_until_stopped(self._fd, self._stop_r, self._drain)

    def _drain(self) -> None:
        for buf in read_available(self._fd):
            offset = 0
            while offset + _EV.size <= len(buf):
                wd, mask, _cookie, length = _EV.unpack_from(buf, offset)
                name = buf[offset + _EV.size: offset + _EV.size + length].rstrip(b"\0").decode("utf-8", "replace")
                offset += _EV.size + length
                if mask & IN_Q_OVERFLOW:
                    self.overflows += 1
                    continue
                folder = self._wds.get(wd)
                if folder is None or not name:
                    continue
                path = folder / name
                if mask & IN_ISDIR:
                    if mask & (IN_CREATE | IN_MOVED_TO):
                        self._watch_tree(path)
                    continue
                if mask & (IN_CLOSE_WRITE | IN_MOVED_TO) and not self._excluded(str(path)):
                    self.on_write({"pid": None, "exe": None, "cmdline": None, "comm": None, "ppid": None,
                                   "path": str(path), "mono_ns": time.monotonic_ns()})

    def _excluded(self, path: str) -> bool:
        return any(path == str(p) or path.startswith(str(p) + os.sep) for p in self.exclude)
