"""Xvfb without a window manager, two described client windows, and xdotool: for the x11 tests."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from scenarios.procs import stop_process


@contextmanager
def plain_xvfb() -> Iterator[str]:
    """Xvfb without a window manager (no WM_STATE anywhere, no reparenting)."""
    with xvfb_process() as (display, _proc):
        yield display


@contextmanager
def xvfb_process() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Xvfb on a free display (-displayfd) and its process, to kill it early when a test needs to."""
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
                            pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    os.close(write_fd)
    try:
        with os.fdopen(read_fd, "rb") as pipe:
            line = pipe.readline()
        if not line.strip():
            raise RuntimeError("Xvfb did not report a display")
        yield f":{int(line)}", proc
    finally:
        stop_process(proc)


@contextmanager
def two_windows(display: str) -> Iterator[dict[str, Any]]:
    """A 'terminal' (left) and an 'obs' window (right), mapped, with WM_CLASS, WM_NAME and _NET_WM_PID."""
    from Xlib import X, Xatom
    from Xlib import display as xdisplay

    dpy = xdisplay.Display(display)
    root = dpy.screen().root
    pid_atom = dpy.intern_atom("_NET_WM_PID")
    made: dict[str, Any] = {}
    for key, x, instance, klass, title in (("term", 20, "xterm", "XTerm", "agent@box: ~/work/build_scenes.py"),
                                           ("obs", 520, "obs", "obs", "OBS 29.0.2 - Profile: Untitled")):
        win = root.create_window(x, 40, 400, 300, 0, dpy.screen().root_depth, X.InputOutput, X.CopyFromParent,
                                 background_pixel=dpy.screen().white_pixel,
                                 event_mask=X.ExposureMask)
        win.set_wm_class(instance, klass)
        win.set_wm_name(title)
        win.change_property(pid_atom, Xatom.CARDINAL, 32, [os.getpid()])
        win.map()
        made[key] = win
    dpy.sync()
    _wait_viewable(dpy, list(made.values()))
    try:
        yield {"dpy": dpy, **made}
    finally:
        dpy.close()


def _wait_viewable(dpy: Any, wins: list[Any], timeout_s: float = 5.0) -> None:
    """Until every window is viewable. A MapRequest that reaches openbox in the first moments
    after it announced itself (_NET_SUPPORTING_WM_CHECK) can be lost, so the map is re-sent."""
    from Xlib import X

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        waiting = [w for w in wins if w.get_attributes().map_state != X.IsViewable]
        if not waiting:
            return
        time.sleep(0.25)
        for w in waiting:
            w.map()
        dpy.sync()
    raise RuntimeError("test windows never became viewable")


def xdotool(display: str, *args: str) -> None:
    done = subprocess.run(["xdotool", *args], env={**os.environ, "DISPLAY": display}, timeout=15,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert done.returncode == 0, f"xdotool {' '.join(args)}: {done.stderr.strip()}"


def geometry_origin(display: str, wid: int) -> tuple[int, int]:
    """Where the window's client area is on the root (after any reparenting by the WM)."""
    from Xlib import display as xdisplay

    dpy = xdisplay.Display(display)
    try:
        win = dpy.create_resource_object("window", wid)
        pos = win.translate_coords(dpy.screen().root, 0, 0)
        return -pos.x, -pos.y
    finally:
        dpy.close()
