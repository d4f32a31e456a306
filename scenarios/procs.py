"""Stopping child processes (test windows, OBS's Xvfb and window manager, test servers) the same way everywhere.

It lives in scenarios/ (below monitor/ in the layering) because both use it: the scenario engine's test
windows and monitor/obs's launcher.

Why one function: each of them is asked politely first (SIGTERM lets Xvfb remove its lock file and
PulseAudio its socket), then killed if it does not leave in time, and always reaped, so no test
or run leaves a zombie or a display lock behind.
"""

from __future__ import annotations

import subprocess


def stop_process(proc: subprocess.Popen | None, timeout_s: float = 5.0) -> int | None:
    """SIGTERM, wait up to `timeout_s`, then SIGKILL and reap; returns the exit code (None for no
    process). A process that already exited is only reaped."""
    if proc is None:
        return None
    if proc.poll() is None:
        proc.terminate()
        try:
            return proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
    return proc.wait(timeout_s)
