"""monitor/obs/watchdog.py without OBS: children in their own sessions die with their launcher.

The launcher is a small Python process that starts two `sleep` children the way ObsInstance
starts Xvfb and OBS (start_new_session) and registers them with a ChildWatchdog; the test then
SIGKILLs the launcher. The real-OBS version of this is test_cli_obs.py's kill -9 test.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

from tests.proc_tree import alive, kill_tree, wait_gone

#: how fast orphans must go: the watchdog sees EOF at once; `sleep` leaves on SIGTERM
GONE_WITHIN_S = 3.0

LAUNCHER = textwrap.dedent("""
    import subprocess, sys, time
    from monitor.obs.watchdog import ChildWatchdog
    dog = ChildWatchdog()
    kids = [subprocess.Popen(["sleep", "600"], start_new_session=True) for _ in range(2)]
    for k in kids:
        dog.watch(k.pid)
    print(*[k.pid for k in kids], flush=True)
    if sys.argv[1] == "clean":
        for k in kids:
            k.terminate(); k.wait(); dog.release(k.pid)
        dog.close()
        print("closed", flush=True)
    time.sleep(600)
""")


def _launcher(mode: str) -> tuple[subprocess.Popen[str], list[int]]:
    proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, mode], stdout=subprocess.PIPE, text=True)
    pids = [int(p) for p in proc.stdout.readline().split()]  # type: ignore[union-attr]
    return proc, pids


def test_sigkilled_launcher_takes_its_session_leader_children_along() -> None:
    proc, kids = _launcher("kill")
    try:
        assert all(alive(p) for p in kids)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(5)
        assert wait_gone(kids, GONE_WITHIN_S) == [], "children outlived their SIGKILLed launcher"
    finally:
        kill_tree(proc, also=kids)


def test_clean_close_kills_nothing_and_the_watchdog_leaves() -> None:
    proc, _kids = _launcher("clean")
    try:
        assert proc.stdout.readline().strip() == "closed"  # type: ignore[union-attr]
        dogs = [p for p in _children(proc.pid) if "monitor" not in _cmdline(p) and "sleep" not in _cmdline(p)]
        assert dogs == [], [_cmdline(p) for p in dogs]  # the watchdog exited on `exit`
        stranger = subprocess.Popen(["sleep", "600"], start_new_session=True)
        try:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(5)
            assert wait_gone([stranger.pid], 1.0) == [stranger.pid]  # nobody kills an unwatched process
        finally:
            stranger.kill()
            stranger.wait()
    finally:
        kill_tree(proc)


def _children(pid: int) -> list[int]:
    from tests.proc_tree import descendants

    return [p for p in descendants(pid) if alive(p)]


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
