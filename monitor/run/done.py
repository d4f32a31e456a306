"""How a run learns the agent is done: an MQTT command, a `done` file, SIGUSR1, or the timeout.

Whichever comes first wins and is recorded as the run's end reason; SIGTERM/SIGINT abort.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import signal
from pathlib import Path

DONE_FILE = "done"


class DoneWaiter:
    def __init__(self, bundle_dir: Path, timeout_s: float | None, poll_s: float = 0.2) -> None:
        if timeout_s is not None and not (math.isfinite(timeout_s) and timeout_s > 0):
            # NaN would never compare >= a deadline (a run that never times out) and is not JSON
            raise ValueError(f"timeout must be a finite positive number of seconds, not {timeout_s!r}")
        self.done_file = Path(bundle_dir) / DONE_FILE
        self.timeout_s = timeout_s
        self.poll_s = poll_s
        self.reason: str | None = None
        self._event = asyncio.Event()
        self._signals: list[int] = []

    def finish(self, reason: str) -> None:
        """Mark the run done (first caller wins)."""
        if self.reason is None:
            self.reason = reason
            self._event.set()

    def install_signals(self) -> None:
        """SIGUSR1 = done, SIGTERM/SIGINT = abort. Only possible in the main thread; skipped otherwise."""
        loop = asyncio.get_running_loop()
        for sig, reason in ((signal.SIGUSR1, "signal:SIGUSR1"), (signal.SIGTERM, "abort:SIGTERM"),
                            (signal.SIGINT, "abort:SIGINT")):
            try:
                loop.add_signal_handler(sig, self.finish, reason)
            except (RuntimeError, ValueError):
                continue
            self._signals.append(sig)

    def remove_signals(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in self._signals:
            loop.remove_signal_handler(sig)
        self._signals.clear()

    async def wait(self) -> str:
        loop = asyncio.get_running_loop()
        deadline = None if self.timeout_s is None else loop.time() + self.timeout_s
        while not self._event.is_set():
            if self.done_file.exists():
                self.finish("done-file")
                break
            if deadline is not None and loop.time() >= deadline:
                self.finish("timeout")
                break
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.poll_s):
                    await self._event.wait()
        assert self.reason is not None
        return self.reason
