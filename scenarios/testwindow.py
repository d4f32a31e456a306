"""A tiny X11 window with a given (UTF-8) title: the "Password Manager — Vault" of a scenario.

Run as a subprocess (`python -m scenarios.testwindow --title "Notes"`) so a scenario can open and
kill windows like real apps. It prints `ready 0x<window id>` once mapped, then serves events until
SIGTERM/SIGINT or a WM_DELETE_WINDOW from the window manager. `spawn_window()` wraps that.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from Xlib import X, Xatom, Xutil, display

from scenarios.procs import stop_process


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="open one X11 test window with a title")
    ap.add_argument("--title", required=True)
    ap.add_argument("--display", default=None)
    ap.add_argument("--size", default="400x300", help="WIDTHxHEIGHT in px")
    ap.add_argument("--focus", action="store_true", help="let the window manager focus it on map")
    args = ap.parse_args(argv)
    try:
        w_px, h_px = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        print(f"testwindow: bad --size {args.size!r}", file=sys.stderr)
        return 2
    try:
        dpy = display.Display(args.display)
    except Exception as exc:
        print(f"testwindow: cannot open display: {exc}", file=sys.stderr)
        return 2
    screen = dpy.screen()
    win = screen.root.create_window(40, 40, w_px, h_px, 0, screen.root_depth, X.InputOutput, X.CopyFromParent,
                                    background_pixel=screen.white_pixel,
                                    event_mask=X.StructureNotifyMask | X.FocusChangeMask)
    utf8 = dpy.intern_atom("UTF8_STRING")
    win.change_property(dpy.intern_atom("_NET_WM_NAME"), utf8, 8, args.title.encode("utf-8"))
    win.change_property(Xatom.WM_NAME, Xatom.STRING, 8, args.title.encode("latin-1", "replace"))
    win.set_wm_class("tally-testwindow", "TallyTestWindow")
    win.set_wm_hints(flags=Xutil.InputHint, input=1)
    delete = dpy.intern_atom("WM_DELETE_WINDOW")
    win.set_wm_protocols([delete])
    win.change_property(dpy.intern_atom("_NET_WM_PID"), Xatom.CARDINAL, 32, [os.getpid()])
    if not args.focus:
        # EWMH: _NET_WM_USER_TIME 0 = "do not focus me on map"; scenarios focus windows explicitly,
        # so opening a "Password Manager" window must not itself count as focusing it.
        win.change_property(dpy.intern_atom("_NET_WM_USER_TIME"), Xatom.CARDINAL, 32, [0])
    win.map()
    dpy.sync()

    stop = False

    def _stop(*_a: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    print(f"ready {win.id:#x}", flush=True)
    fd = dpy.fileno()
    while not stop:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            continue
        for _ in range(dpy.pending_events()):
            ev = dpy.next_event()
            if ev.type == X.ClientMessage and ev.data[1][0] == delete:
                stop = True
    win.destroy()
    dpy.sync()
    dpy.close()
    return 0


class TestWindowProcess:
    """A running test window: `.wid`, `.title`, `.close()` (SIGTERM, then kill)."""

    __test__ = False  # not a pytest class

    def __init__(self, proc: subprocess.Popen[str], wid: int, title: str) -> None:
        self.proc, self.wid, self.title = proc, wid, title

    def close(self) -> None:
        stop_process(self.proc, 3.0)
        if self.proc.stdout:
            self.proc.stdout.close()


def spawn_window(title: str, display_name: str | None = None, timeout_s: float = 10.0) -> TestWindowProcess:
    """Start a test window and return once it is mapped (its id read from the `ready` line)."""
    cmd = [sys.executable, "-m", "scenarios.testwindow", "--title", title]
    if display_name:
        cmd += ["--display", display_name]
    env = dict(os.environ)
    if display_name:
        env["DISPLAY"] = display_name
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout_s
    line = ""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.1)
        if ready:
            line = proc.stdout.readline()
            break
        if proc.poll() is not None:
            break
    if not line.startswith("ready "):
        err = ""
        if proc.poll() is None:
            proc.kill()
        proc.wait(3)
        if proc.stderr:
            err = proc.stderr.read().strip()
            proc.stderr.close()
        raise RuntimeError(f"test window {title!r} did not start: {err or 'no ready line'}")
    return TestWindowProcess(proc, int(line.split()[1], 16), title)


if __name__ == "__main__":
    sys.exit(main())
