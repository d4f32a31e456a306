"""fanotify through ctypes: close-after-write events with the writer's pid, and exec of forbidden tools.

Why fanotify: unlike inotify it names the process behind each event, so the manifest can say
"written by /usr/bin/cp, pid 123, argv [...]" and a verifier can fail a file written by a tool
other than the app. It needs CAP_SYS_ADMIN (we run as root); without it the caller falls back to
inotify and says the evidence is weaker.

Marks: the work dir's mount gets FAN_CLOSE_WRITE (filtered to paths under the work dir here);
each forbidden executable's inode gets FAN_OPEN_EXEC, so even a process that exits within
microseconds is seen exec'ing it. Events are read in a dedicated thread that wakes on the fd.

A short-lived writer (cp) is often gone from /proc by the time its close event is read (measured:
about 1 in 5 `cp` copies left only a pid). So a second group in the permission class holds
FAN_OPEN_PERM marks on every directory under the work dir: the opener waits (microseconds)
until we have read its /proc entry and answered FAN_ALLOW, which makes the writer's identity
certain before it can even write. Answers are given in a finally block; if this process dies,
the kernel allows everything pending. Directories are marked by a DirWatch in its own thread
(one walk at start, then only new directories, from inotify create events): the permission
thread does nothing but answer, so no opener waits for a tree walk.

The root may not be `/`: marking every directory of the machine would stall it.
"""

from __future__ import annotations

import ctypes
import os
import struct
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from monitor.audit.dirwatch import DirWatch
from monitor.audit.fdio import poll_until_stopped, read_available
from monitor.audit.procinfo import process_info

FAN_CLOEXEC = 0x1
FAN_NONBLOCK = 0x2
FAN_CLASS_NOTIF = 0x0
FAN_CLASS_CONTENT = 0x4
FAN_OPEN_PERM = 0x10000
FAN_ALLOW = 0x01
FAN_UNLIMITED_QUEUE = 0x10
FAN_MARK_ADD = 0x1
FAN_MARK_MOUNT = 0x10
FAN_CLOSE_WRITE = 0x8
FAN_OPEN_EXEC = 0x1000
FAN_Q_OVERFLOW = 0x4000
FAN_EVENT_ON_CHILD = 0x08000000
FAN_NOFD = -1
AT_FDCWD = -100
_META = struct.Struct("IBBHQii")  # event_len, vers, reserved, metadata_len, mask, fd, pid
_RESPONSE = struct.Struct("iI")  # fd, response
FANOTIFY_METADATA_VERSION = 3

Record = dict[str, Any]


class FanotifyUnavailable(OSError):
    """fanotify cannot be used here (not root, kernel without it, filesystem refuses marks)."""


def refuse_root(root: Path) -> None:
    """The audit watches a work dir, never the whole machine."""
    if Path(os.path.realpath(root)) == Path("/"):
        raise ValueError("the audit refuses to watch / (give the run a work dir of its own)")


def _metadata(buf: bytes) -> Iterator[tuple[int, int, int]]:
    """(mask, fd, pid) of each fanotify_event_metadata in one read; stops at a record whose version
    or length is not the one this reader knows (the rest of the buffer cannot be trusted)."""
    offset = 0
    while offset + _META.size <= len(buf):
        event_len, vers, _res, _mlen, mask, fd, pid = _META.unpack_from(buf, offset)
        if vers != FANOTIFY_METADATA_VERSION or event_len < _META.size:
            return
        offset += event_len
        yield mask, fd, pid


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fanotify_init.argtypes = [ctypes.c_uint, ctypes.c_uint]
    libc.fanotify_init.restype = ctypes.c_int
    libc.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int, ctypes.c_char_p]
    libc.fanotify_mark.restype = ctypes.c_int
    return libc


class FanotifyWatcher:
    """Reads fanotify events in a thread and hands plain records to callbacks (called in that thread)."""

    def __init__(self, root: Path, on_write: Callable[[Record], None], on_exec: Callable[[Record], None],
                 exec_paths: list[Path] | None = None, exclude: list[Path] | None = None,
                 open_snapshots: bool = True) -> None:
        refuse_root(root)
        self.root = Path(os.path.realpath(root))
        self.on_write = on_write
        self.on_exec = on_exec
        self.exec_paths = list(exec_paths or [])
        self.exclude = [Path(os.path.realpath(p)) for p in exclude or []]
        self.marked_exec: list[str] = []
        self.overflows = 0
        self.own_pid = os.getpid()
        self._fd = -1
        self._stop_r, self._stop_w = -1, -1
        self._thread: threading.Thread | None = None
        self.open_snapshots = open_snapshots
        self._perm_fd = -1
        self._perm_thread: threading.Thread | None = None
        self._marked_dirs: set[str] = set()
        self._dirwatch: DirWatch | None = None
        self._snap_lock = threading.Lock()
        self._snapshots: dict[int, Record] = {}  # pid -> /proc facts read while it opened a file
        self.perm_error: str | None = None

    def start(self) -> None:
        libc = _libc()
        self._libc = libc
        fd = libc.fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_UNLIMITED_QUEUE,
                                os.O_RDONLY | os.O_LARGEFILE | os.O_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            raise FanotifyUnavailable(err, f"fanotify_init: {os.strerror(err)}")
        if libc.fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_CLOSE_WRITE, AT_FDCWD,
                              str(self.root).encode()) < 0:
            err = ctypes.get_errno()
            os.close(fd)
            raise FanotifyUnavailable(err, f"fanotify_mark({self.root}): {os.strerror(err)}")
        for exe in self.exec_paths:
            if libc.fanotify_mark(fd, FAN_MARK_ADD, FAN_OPEN_EXEC, AT_FDCWD, str(exe).encode()) == 0:
                self.marked_exec.append(str(exe))
        self._fd = fd
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._loop, name="fanotify", daemon=True)
        self._thread.start()
        if self.open_snapshots:
            self._start_perm(libc)

    def _start_perm(self, libc: ctypes.CDLL) -> None:
        fd = libc.fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK | FAN_UNLIMITED_QUEUE,
                                os.O_RDONLY | os.O_LARGEFILE | os.O_CLOEXEC)
        if fd < 0:
            self.perm_error = f"fanotify_init(FAN_CLASS_CONTENT): {os.strerror(ctypes.get_errno())}"
            return
        self._perm_fd = fd
        self._dirwatch = DirWatch(self.root, self._mark_dir, self._excluded)
        self._dirwatch.start()
        self._perm_thread = threading.Thread(target=self._perm_loop, name="fanotify-perm", daemon=True)
        self._perm_thread.start()

    def _mark_dir(self, dirpath: str) -> None:
        fd = self._perm_fd
        if fd < 0 or dirpath in self._marked_dirs:
            return
        if self._libc.fanotify_mark(fd, FAN_MARK_ADD, FAN_OPEN_PERM | FAN_EVENT_ON_CHILD,
                                    AT_FDCWD, dirpath.encode()) == 0:
            self._marked_dirs.add(dirpath)

    @property
    def marked_dirs(self) -> int:
        return len(self._marked_dirs)

    def _perm_loop(self) -> None:
        """Never leave an opener waiting: if this loop fails, closing the group allows everything."""
        try:
            self._perm_loop_inner()
        except Exception as exc:
            self.perm_error = f"permission reader failed: {type(exc).__name__}: {exc}"
            fd, self._perm_fd = self._perm_fd, -1
            if fd >= 0:
                os.close(fd)

    def _perm_loop_inner(self) -> None:
        poll_until_stopped(self._perm_fd, self._stop_r, self._perm_drain)

    def _perm_drain(self) -> None:
        for buf in read_available(self._perm_fd):
            for mask, fd, pid in _metadata(buf):
                if fd == FAN_NOFD:
                    continue
                try:
                    if mask & FAN_OPEN_PERM and pid != self.own_pid:
                        info = process_info(pid)
                        with self._snap_lock:
                            if len(self._snapshots) > 10_000:  # a pid reused later re-snapshots on open
                                self._snapshots.clear()
                            self._snapshots[pid] = info
                finally:
                    os.write(self._perm_fd, _RESPONSE.pack(fd, FAN_ALLOW))
                    os.close(fd)

    def snapshot(self, pid: int) -> Record | None:
        with self._snap_lock:
            return self._snapshots.get(pid)

    def stop(self) -> None:
        if self._dirwatch is not None:
            self._dirwatch.stop()
            self._dirwatch = None
        if self._thread is not None:
            os.write(self._stop_w, b"x")
            self._thread.join(timeout=5)
            self._thread = None
        if self._perm_thread is not None:
            self._perm_thread.join(timeout=5)
            self._perm_thread = None
        for fd in (self._fd, self._perm_fd, self._stop_r, self._stop_w):
            if fd >= 0:
                os.close(fd)
        self._fd = self._perm_fd = self._stop_r = self._stop_w = -1

    def _loop(self) -> None:
        poll_until_stopped(self._fd, self._stop_r, self._drain)

    def _drain(self) -> None:
        for buf in read_available(self._fd):
            self._parse(buf)

    def _parse(self, buf: bytes) -> None:
        for mask, fd, pid in _metadata(buf):
            mono_ns = time.monotonic_ns()
            if mask & FAN_Q_OVERFLOW:
                self.overflows += 1
                continue
            if fd == FAN_NOFD:
                continue
            try:
                path = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                path = None
            finally:
                os.close(fd)
            if path is None:
                continue
            if mask & FAN_OPEN_EXEC:
                self.on_exec({**process_info(pid), "exe_opened": path, "mono_ns": mono_ns})
            if mask & FAN_CLOSE_WRITE and self._under_root(path) and not self._excluded(path):
                info, source = self._writer_info(pid)
                self.on_write({**info, "path": path, "mono_ns": mono_ns, "identified_at": source})

    def _writer_info(self, pid: int) -> tuple[Record, str]:
        """The writer's /proc facts at close time, or the open-time snapshot when the close-time read
        is incomplete. A short-lived writer (cp) can exit between the reads of one `process_info`:
        its exe was still there and its cmdline already gone (seen in CI: cp named, argv None). The
        snapshot was read while the writer sat blocked in open() awaiting our answer, so it is whole;
        it is taken only when it shows the same image (or the close-time read found none)."""
        info = process_info(pid)
        if info["exe"] is not None and info["cmdline"] is not None:
            return info, "close"
        early = self.snapshot(pid)
        if early is not None and early.get("exe") and info["exe"] in (None, early["exe"]):
            return early, "open"
        return info, "close"

    def _under_root(self, path: str) -> bool:
        return path == str(self.root) or path.startswith(str(self.root) + os.sep)

    def _excluded(self, path: str) -> bool:
        return any(path == str(p) or path.startswith(str(p) + os.sep) for p in self.exclude)
