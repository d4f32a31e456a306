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

import os
from collections.abc import Callable
from pathlib import Path

from monitor.audit.inotify_fd import IN_CREATE, IN_ISDIR, IN_MOVED_TO, IN_ONLYDIR, IN_Q_OVERFLOW, InotifyFd

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
        self._ino = InotifyFd()

    def start(self) -> None:
        """Initial walk (in the caller's thread: run it off the event loop), then the watch thread."""
        if self._ino.open():
            self.unwatched += 1
        self.walk(self.root)
        self._ino.run("audit-dirwatch", self._drain, FALLBACK_RESCAN_S, self._fallback)

    def stop(self) -> None:
        self._ino.stop()

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
        if self._ino.fd >= 0 and not self._ino.add_watch(path, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR):
            self.unwatched += 1

    def _fallback(self) -> None:
        if self.unwatched:
            self.walk(self.root)

    def _drain(self) -> None:
        rescan = False
        for folder, mask, name in self._ino.events():
            if mask & IN_Q_OVERFLOW:
                self.overflows += 1
                rescan = True
                continue
            if folder is None or not name or not mask & IN_ISDIR:
                continue
            self.walk(os.path.join(folder, os.fsdecode(name)))
        if rescan:
            self.walk(self.root)
