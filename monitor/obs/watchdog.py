"""Children that die with their launcher: a watchdog process that kills OBS, Xvfb and the window
manager when the process that started them is gone (SIGKILL, a test runner's timeout, a crash).

Why a watchdog and not PR_SET_PDEATHSIG: the launcher starts its children in their own sessions
(so a terminal's Ctrl-C reaches the launcher only, which then closes OBS the saving way), so no
signal to the launcher's group reaches them; PDEATHSIG fires when the *thread* that forked the
child ends (ObsInstance.start often runs in an asyncio.to_thread worker, whose end would kill a
healthy OBS), and it reaches only the direct child, not OBS's own children (obs-ffmpeg-mux).

How: the watchdog is a tiny Python child that reads a pipe whose only write end the launcher
holds (close-on-exec, so no other child inherits it). The launcher writes `+<pid>` when it starts
a child and `-<pid>` once it has reaped it, and `exit` when it closes cleanly. End of file without
`exit` means the launcher died: the watchdog sends SIGTERM to each remaining child's process group
(Xvfb removes its lock), waits up to TERM_GRACE_S, then SIGKILLs what is left. Each child is a
session leader (start_new_session), so its pid is its process group id.
"""

from __future__ import annotations

import os
import subprocess
import sys

#: how long the watchdog lets SIGTERMed children leave before SIGKILL (Xvfb leaves in ~10 ms;
#: OBS 29 may not react to SIGTERM at all)
TERM_GRACE_S = 2.0

_WATCHDOG = f"""
import os, signal, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
groups, buf = set(), b""
while True:
    chunk = os.read(0, 4096)
    if not chunk:
        break
    buf += chunk
    *lines, buf = buf.split(b"\\n")
    for line in lines:
        if line == b"exit":
            raise SystemExit(0)
        if line[:1] == b"+":
            groups.add(int(line[1:]))
        elif line[:1] == b"-":
            groups.discard(int(line[1:]))
def alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except OSError:
        return False
for sig in (signal.SIGTERM, signal.SIGKILL):
    for pgid in groups:
        try:
            os.killpg(pgid, sig)
        except OSError:
            pass
    deadline = time.monotonic() + {TERM_GRACE_S}
    while any(alive(g) for g in groups) and time.monotonic() < deadline:
        time.sleep(0.05)
"""


class ChildWatchdog:
    """The launcher's side: start the watchdog once, tell it about each child, close it cleanly."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._write_fd = -1

    def _ensure(self) -> None:
        if self._proc is not None:
            return
        read_fd, write_fd = os.pipe()  # both close-on-exec: no other child holds the write end
        try:
            self._proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", _WATCHDOG], stdin=read_fd,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          start_new_session=True)
        except BaseException:
            os.close(write_fd)
            raise
        finally:
            os.close(read_fd)
        self._write_fd = write_fd

    def _send(self, line: str) -> None:
        try:
            os.write(self._write_fd, line.encode() + b"\n")
        except OSError:  # the watchdog itself is gone: nothing more it can do for us
            pass

    def watch(self, pid: int) -> None:
        """`pid` (a session leader) is to be killed, with its group, if this process dies."""
        self._ensure()
        self._send(f"+{pid}")

    def release(self, pid: int) -> None:
        """`pid` was reaped by us: forget it (its number may be reused)."""
        if self._proc is not None:
            self._send(f"-{pid}")

    def close(self) -> None:
        """Every child was stopped by us: the watchdog exits without killing anything."""
        if self._proc is None:
            return
        self._send("exit")
        os.close(self._write_fd)
        self._write_fd = -1
        try:
            self._proc.wait(5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(5)
        self._proc = None
