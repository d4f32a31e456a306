"""The two loops every kernel-notification reader here needs (fanotify, inotify), written once.

Both descriptors are non-blocking: a reader thread polls the notification fd beside a stop pipe,
and drains until EAGAIN, so nothing that arrived before stop is lost.
"""

from __future__ import annotations

import errno
import os
import select
from collections.abc import Callable, Iterator


def read_available(fd: int, chunk_bytes: int = 64 * 1024) -> Iterator[bytes]:
    """Every buffer readable from a non-blocking fd right now (stops at EAGAIN or EOF)."""
    while True:
        try:
            buf = os.read(fd, chunk_bytes)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                return
            raise
        if not buf:
            return
        yield buf


def poll_until_stopped(fd: int, stop_r: int, drain: Callable[[], None], timeout_s: float | None = None,
                       on_idle: Callable[[], None] | None = None) -> None:
    """Call `drain` whenever `fd` is readable; on a byte on `stop_r`, drain once more and return.
    With `timeout_s`, `on_idle` runs at least that often (periodic rescans)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    poller.register(stop_r, select.POLLIN)
    timeout_ms = None if timeout_s is None else int(timeout_s * 1000)
    while True:
        ready = {f for f, _ in poller.poll(timeout_ms)}
        if fd in ready:
            drain()
        if stop_r in ready:
            drain()  # whatever arrived before stop still counts
            return
        if on_idle is not None:
            on_idle()
