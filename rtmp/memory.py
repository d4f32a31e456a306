"""Give freed heap memory back to the OS after a connection that held a lot is gone.

Why: glibc raises its mmap threshold after the first large free, so later 16 MiB buffers come
from the heap, and a freed heap block is only returned when it sits at the top and exceeds the
(also raised) trim threshold. Measured here: five attackers' buffers left ~150 MB resident for
good after they left. `malloc_trim(0)` releases every free page; it costs a few ms, so it runs
once, shortly after the last big release, never per message. Elsewhere than glibc: a no-op.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
from collections.abc import Callable

#: A session that held at least this much asks for a trim when it ends.
TRIM_AFTER_HELD_BYTES = 1024 * 1024
TRIM_DELAY_S = 0.5


def _load_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn  # type: ignore[no-any-return]


_MALLOC_TRIM = _load_trim()


class Trimmer:
    """Debounced malloc_trim on the running loop."""

    def __init__(self) -> None:
        self._handle: asyncio.TimerHandle | None = None
        self.trims = 0

    def request(self) -> None:
        if _MALLOC_TRIM is None or self._handle is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._handle = loop.call_later(TRIM_DELAY_S, self._trim)

    def _trim(self) -> None:
        self._handle = None
        if _MALLOC_TRIM is not None:
            _MALLOC_TRIM(0)
            self.trims += 1
