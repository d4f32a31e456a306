"""A test's subprocess and everything it started, found and ended together.

Why: `proc.kill()` on a timeout ends only the direct child; a launcher's OBS and Xvfb run in their
own sessions (so no process-group signal reaches them) and would keep running, holding a display
and a websocket port, after the test gave up. The tree is read from /proc (parent pids) *before*
anything is killed, since orphans are re-parented and lose the link.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid` (children first), from /proc's parent pids."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # exited meanwhile
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        out.extend(kids)
        todo.extend(kids)
    return out


def alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def kill_tree(proc: subprocess.Popen, wait_s: float = 5.0, also: Iterable[int] = ()) -> None:
    """SIGKILL `proc`, every descendant it has now and the live pids of `also` (children read
    earlier, which may have been re-parented since); reap `proc`."""
    for pid in [*[p for p in also if alive(p)], *descendants(proc.pid), proc.pid]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(wait_s)


def wait_gone(pids: list[int], timeout_s: float) -> list[int]:
    """Wait until none of `pids` is alive; return those still alive after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while (left := [p for p in pids if alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left
