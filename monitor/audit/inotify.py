"""inotify fallback (ctypes): which files were closed after writing, but not by whom.

Used when fanotify is unavailable. inotify watches are per directory, so every directory under
the work dir is watched and new ones are added as they appear (a file written into a directory
created a moment earlier can be missed: one more reason this evidence is weaker).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from monitor.audit.inotify_fd import (
    IN_CLOSE_WRITE,
    IN_CREATE,
    IN_ISDIR,
    IN_MOVED_TO,
    IN_Q_OVERFLOW,
    InotifyFd,
)

Record = dict[str, Any]


class InotifyWatcher:
    def __init__(self, root: Path, on_write: Callable[[Record], None], exclude: list[Path] | None = None) -> None:
        from monitor.audit.fanotify import refuse_root

        refuse_root(root)
        self.root = Path(os.path.realpath(root))
        self.on_write = on_write
        self.exclude = [Path(os.path.realpath(p)) for p in exclude or []]
        self.overflows = 0
        self._ino = InotifyFd()

    def start(self) -> None:
        err = self._ino.open()
        if err:
            raise OSError(err, f"inotify_init1: {os.strerror(err)}")
        self._watch_tree(self.root)
        self._ino.run("inotify", self._drain)

    def _watch_tree(self, top: Path) -> None:
        for dirpath, dirnames, _ in os.walk(top):
            if self._excluded(dirpath):
                dirnames[:] = []
                continue
            self._ino.add_watch(dirpath, IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE)

    def stop(self) -> None:
        self._ino.stop()

    def _drain(self) -> None:
        for folder, mask, raw_name in self._ino.events():
            if mask & IN_Q_OVERFLOW:
                self.overflows += 1
                continue
            name = raw_name.decode("utf-8", "replace")
            if folder is None or not name:
                continue
            path = Path(folder) / name
            if mask & IN_ISDIR:
                if mask & (IN_CREATE | IN_MOVED_TO):
                    self._watch_tree(path)
                continue
            if mask & (IN_CLOSE_WRITE | IN_MOVED_TO) and not self._excluded(str(path)):
                self.on_write({"pid": None, "exe": None, "cmdline": None, "comm": None, "ppid": None,
                               "path": str(path), "mono_ns": time.monotonic_ns()})

    def _excluded(self, path: str) -> bool:
        return any(path == str(p) or path.startswith(str(p) + os.sep) for p in self.exclude)
