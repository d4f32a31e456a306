"""A read-only file-like view of a file that another process is still writing (a live recording).

PyAV/FFmpeg demuxers read through `read(n)`; at the current end of a growing file `read` waits for
more bytes instead of returning b"" (which FFmpeg would take as end of stream). It gives up — and
reports a clean end — when `stop()` is called, when `done()` says the writer has finished, or when
the file has not grown for `idle_timeout_s`. No `seek` is offered, so FFmpeg treats it as a stream.

Why a file: the RTMP ingest records each publish as an FLV that is valid up to its last complete
write, and FLV needs no index, so tailing it is a faithful live feed without a playback server.
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable
from pathlib import Path


class GrowingFile(io.RawIOBase):
    def __init__(self, path: str | Path, *, idle_timeout_s: float = 5.0, poll_s: float = 0.01,
                 done: Callable[[], bool] | None = None, wait_for_file_s: float = 10.0) -> None:
        super().__init__()
        self.path = Path(path)
        self.idle_timeout_s = idle_timeout_s
        self.poll_s = poll_s
        self._done = done
        self._stop = threading.Event()
        deadline = time.monotonic() + wait_for_file_s
        while not self.path.exists():
            if time.monotonic() > deadline or self._stop.is_set():
                raise FileNotFoundError(f"{self.path.name}: no such recording (waited {wait_for_file_s:g} s)")
            time.sleep(poll_s)
        self._f = open(self.path, "rb")
        self.bytes_read = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def stop(self) -> None:
        self._stop.set()

    def readinto(self, buf) -> int:
        last_growth = time.monotonic()
        while True:
            n = self._f.readinto(buf)
            if n:
                self.bytes_read += n
                return n
            if self._stop.is_set():
                return 0
            finished = self._done is not None and self._done()
            if finished:
                n = self._f.readinto(buf)  # the last bytes written before it finished
                self.bytes_read += n or 0
                return n or 0
            if time.monotonic() - last_growth > self.idle_timeout_s:
                return 0
            time.sleep(self.poll_s)

    def close(self) -> None:
        if not self.closed:
            self._f.close()
        super().close()
