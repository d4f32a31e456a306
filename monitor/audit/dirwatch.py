"""Every directory under a root, now and as they appear: the fanotify permission group's marks.

Why its own thread with inotify: FAN_OPEN_PERM marks are per directory, and fanotify's permission
class cannot report directory creation (FAN_CREATE needs FAN_REPORT_FID, which that class
refuses). Rescanning the whole tree from the thread that answers permission requests made every
opener under the work dir wait for the walk (p99 897 ms on 20 000 directories). Here the initial
walk runs once, off the event loop, and afterwards only a new directory's own subtree is walked,
when inotify reports it (IN_CREATE / IN_MOVED_TO with IN_ISDIR). If inotify cannot watch a
directory (the per-user watch limit) or its queue overflows, this thread falls back to a periodic
rescan -- still never in the permission thread.

Each directory is handed to `on_dir` *before* its entries are listed, so a subdirectory created
between the two is either listed or reported: none is missed.
"""

from __future__ import annotations

import ctypes
import os
import struct
import threading
from collections.abc import Callable
from pathlib import Path

from monitor.audit.fdio import poll_until_stopped, read_available

IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_Q_OVERFLOW = 0x00004000
IN_ONLYDIR = 0x01000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
_EV = struct.Struct("iIII")  # wd, mask, cookie, len
#: Rescan period when inotify could not cover every directory.
FALLBACK_RESCAN_S = 2.0


class DirWatch:
    """Calls `on_dir(path)` (in its thread, or the caller's for `start`) once per directory."""

    def __init__(self, root: Path, on_dir: Callable[[str], None], excluded: Callable[[str], bool]) -> None:
        self.root = str(Path(os.path.realpath(root)))
        self.on_dir = on_dir
        self.excluded = excluded
        self.seen: set[str] = set()
        self.unwatched = 0  # directories inotify could not watch (then the fallback rescan runs)
        self.overflows = 0
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._fd = -1
        self._wds: dict[int, str] = {}
        self._stop_r, self._stop_w = -1, -1
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Initial walk (in the caller's thread: run it off the event loop), then the watch thread."""
        fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        self._fd = fd
        if fd < 0:
            self.unwatched += 1
        self.walk(self.root)
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._loop, name="audit-dirwatch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            os.write(self._stop_w, b"x")
            self._thread.join(timeout=5)
            self._thread = None
        for fd in (self._fd, self._stop_r, self._stop_w):
            if fd >= 0:
                os.close(fd)
        self._fd = self._stop_r = self._stop_w = -1

    def walk(self, top: str) -> None:
        """Watch and hand over `top` and every directory below it (iterative: no recursion limit)."""
        stack = [top]
        while stack:
            path = stack.pop()
            if self.excluded(path):
                continue
            if path not in self.seen:
                self._watch(path)
                self.seen.add(path)
                self.on_dir(path)
            try:
                with os.scandir(path) as entries:
                    for entry in entries:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
            except OSError:
                continue

    def _watch(self, path: str) -> None:
        if self._fd < 0:
            return
        wd = self._libc.inotify_add_watch(self._fd, path.encode(), IN_CREATE | IN_MOVED_TO | IN_ONLYDIR)
        if wd < 0:
            self.unwatched += 1
        else:
            self._wds[wd] = path

    def _loop(self) -> None:
        if self._fd < 0:
            fd = self._stop_r  # nothing to read but the stop pipe: rescans only
            poll_until_stopped(fd, self._stop_r, lambda: None, FALLBACK_RESCAN_S, self._fallback)
            return
        poll_until_stopped(self._fd, self._stop_r, self._drain, FALLBACK_RESCAN_S, self._fallback)

    def _fallback(self) -> None:
        if self.unwatched:
            self.walk(self.root)

    def _drain(self) -> None:
        rescan = False
        for buf in read_available(self._fd):
            offset = 0
            while offset + _EV.size <= len(buf):
                wd, mask, _cookie, length = _EV.unpack_from(buf, offset)
                name = buf[offset + _EV.size: offset + _EV.size + length].rstrip(b"\0")
                offset += _EV.size + length
                if mask & IN_Q_OVERFLOW:
                    self.overflows += 1
                    rescan = True
                    continue
                folder = self._wds.get(wd)
                if folder is None or not name or not mask & IN_ISDIR:
                    continue
                self.walk(os.path.join(folder, os.fsdecode(name)))
        if rescan:
            self.walk(self.root)
