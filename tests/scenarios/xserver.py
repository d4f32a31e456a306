"""Xvfb + openbox for the scenario tests (started and stopped by the fixture, nothing left over)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from scenarios.procs import stop_process

needs_x = pytest.mark.skipif(shutil.which("Xvfb") is None or shutil.which("openbox") is None,
                             reason="xvfb and openbox not installed")


@contextmanager
def xvfb_openbox() -> Iterator[str]:
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1024x768x24",
                             "-nolisten", "tcp"], pass_fds=(write_fd,), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    os.close(write_fd)
    home = tempfile.mkdtemp(prefix="tally-x-")
    wm = None
    try:
        with os.fdopen(read_fd, "rb") as pipe:
            line = pipe.readline()
        if not line.strip():
            raise RuntimeError("Xvfb did not report a display")
        display = f":{int(line)}"
        env = {**os.environ, "DISPLAY": display, "HOME": home}
        wm = subprocess.Popen(["openbox", "--sm-disable"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
        _wait_for_wm(display)
        yield display
    finally:
        for proc in (wm, xvfb):
            stop_process(proc)
        shutil.rmtree(home, ignore_errors=True)


def _wait_for_wm(display: str, timeout_s: float = 10.0) -> None:
    """openbox is ready once it set _NET_SUPPORTING_WM_CHECK on the root window."""
    from Xlib import Xatom
    from Xlib import display as xdisplay
    dpy = xdisplay.Display(display)
    try:
        atom = dpy.intern_atom("_NET_SUPPORTING_WM_CHECK")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if dpy.screen().root.get_full_property(atom, Xatom.WINDOW) is not None:
                return
            time.sleep(0.05)
        raise RuntimeError("openbox did not start")
    finally:
        dpy.close()
