"""Small asyncio helpers every component's stop() shares."""

from __future__ import annotations

import asyncio
import contextlib


async def cancel_and_wait(task: asyncio.Task | None) -> None:
    """Cancel a background task and wait until it has finished unwinding (None: nothing to do).

    Why wait: a component's stop() then runs its last flush/poll after the loop task is gone,
    so nothing is emitted twice or after the component said it stopped."""
    if task is None:
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
