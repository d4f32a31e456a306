"""X11 driver: EWMH window titles and focus, XTEST key events, in process (python-xlib).

Why in process and not xdotool: a subprocess per key costs 5–20 ms of jitter on a loaded 2-core
machine; an open Display connection sends an XTEST event in well under a millisecond, so the
timestamp we record is the time the key actually went to the server.

Focus uses the EWMH way (a _NET_ACTIVE_WINDOW client message to the root, source indication 2 =
"pager", which window managers honour without focus-stealing prevention), so a window manager with
EWMH support (openbox) must run on the display. Titles are read from _NET_WM_NAME (UTF-8, e.g.
"Password Manager — Vault") with WM_NAME as the fallback.

OBS on X11 does not grab hotkeys: its hotkey thread polls the keyboard state (xcb_query_keymap),
so a chord must stay down across at least one poll. `press()` therefore holds keys `hold_ms`.
"""

from __future__ import annotations

import re
import select
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from Xlib import X, Xatom, display, error
from Xlib.ext import xtest
from Xlib.protocol import event as xevent

from scenarios.keys import KeyChord, keysym, parse_chord


class X11Error(RuntimeError):
    """The display is unreachable, a window is missing, or a key has no keycode."""


@dataclass(frozen=True, slots=True)
class WindowInfo:
    wid: int
    title: str


class X11Driver:
    """One connection to an X display; not thread-safe (use one driver per thread)."""

    def __init__(self, display_name: str | None = None) -> None:
        try:
            self.dpy = display.Display(display_name)
        except (error.DisplayError, error.DisplayConnectionError, OSError) as exc:
            raise X11Error(f"cannot open X display {display_name or '$DISPLAY'!r}: {exc}") from None
        if not self.dpy.has_extension("XTEST"):
            self.dpy.close()
            raise X11Error(f"X display {display_name!r} has no XTEST extension")
        self.root = self.dpy.screen().root
        self._atoms: dict[str, int] = {}

    def close(self) -> None:
        self.dpy.close()

    def __enter__(self) -> X11Driver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def atom(self, name: str) -> int:
        if name not in self._atoms:
            self._atoms[name] = self.dpy.intern_atom(name)
        return self._atoms[name]

    # ---- windows ---------------------------------------------------------------------------
    def client_windows(self) -> list[int]:
        """Top-level client windows the window manager manages (_NET_CLIENT_LIST)."""
        prop = self.root.get_full_property(self.atom("_NET_CLIENT_LIST"), Xatom.WINDOW)
        return [int(w) for w in prop.value] if prop is not None else []

    def title(self, wid: int) -> str:
        """_NET_WM_NAME as UTF-8, else WM_NAME; "" for a window that vanished."""
        win = self.dpy.create_resource_object("window", wid)
        try:
            prop = win.get_full_property(self.atom("_NET_WM_NAME"), self.atom("UTF8_STRING"))
            if prop is not None and prop.value:
                raw = prop.value
                return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
            prop = win.get_full_property(Xatom.WM_NAME, X.AnyPropertyType)
            if prop is not None and prop.value:
                raw = prop.value
                return raw.decode("latin-1") if isinstance(raw, bytes) else str(raw)
        except (error.BadWindow, error.BadMatch):
            return ""
        return ""

    def windows(self) -> list[WindowInfo]:
        return [WindowInfo(w, self.title(w)) for w in self.client_windows()]

    def find(self, title: str, *, match: str = "exact") -> WindowInfo | None:
        """First managed window whose title matches: exact, contains, or regex (re.search)."""
        for info in self.windows():
            if _title_matches(info.title, title, match):
                return info
        return None

    def wait_for_window(self, title: str, *, match: str = "exact", timeout_s: float = 5.0) -> WindowInfo:
        deadline = time.monotonic() + timeout_s
        while True:
            info = self.find(title, match=match)
            if info is not None:
                return info
            if time.monotonic() > deadline:
                seen = ", ".join(repr(w.title) for w in self.windows()) or "none"
                raise X11Error(f"no window titled {title!r} ({match}) within {timeout_s:g} s; seen: {seen}")
            time.sleep(0.02)

    def active_window(self) -> int | None:
        prop = self.root.get_full_property(self.atom("_NET_ACTIVE_WINDOW"), Xatom.WINDOW)
        if prop is None or not prop.value:
            return None
        wid = int(prop.value[0])
        return wid or None

    def active_title(self) -> str:
        wid = self.active_window()
        return self.title(wid) if wid else ""

    # ---- focus -----------------------------------------------------------------------------
    def activate(self, wid: int) -> None:
        """Ask the window manager to activate (raise + focus) a window; returns after the flush."""
        data = [2, X.CurrentTime, 0, 0, 0]  # source 2: pager (no focus-stealing prevention)
        ev = xevent.ClientMessage(window=self.dpy.create_resource_object("window", wid),
                                  client_type=self.atom("_NET_ACTIVE_WINDOW"), data=(32, data))
        self.root.send_event(ev, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)
        self.dpy.flush()

    def focus_title(self, title: str, *, match: str = "exact") -> WindowInfo:
        info = self.find(title, match=match)
        if info is None:
            seen = ", ".join(repr(w.title) for w in self.windows()) or "none"
            raise X11Error(f"no window titled {title!r} ({match}) to focus; seen: {seen}")
        self.activate(info.wid)
        return info

    def wait_active(self, wid: int, timeout_s: float = 2.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.active_window() == wid:
                return True
            time.sleep(0.005)
        return False

    # ---- keys ------------------------------------------------------------------------------
    def keycode(self, name: str) -> int:
        code = self.dpy.keysym_to_keycode(keysym(name))
        if not code:
            raise X11Error(f"key {name!r} has no keycode in this display's keymap")
        return int(code)

    def _codes(self, chord: KeyChord) -> list[int]:
        return [self.keycode(m) for m in chord.modifiers] + [self.keycode(chord.key)]

    def key_down(self, chord: KeyChord | str) -> None:
        """Press modifiers then the key (one flush: they reach the server together)."""
        chord = parse_chord(chord) if isinstance(chord, str) else chord
        for code in self._codes(chord):
            xtest.fake_input(self.dpy, X.KeyPress, code)
        self.dpy.flush()

    def key_up(self, chord: KeyChord | str) -> None:
        chord = parse_chord(chord) if isinstance(chord, str) else chord
        for code in reversed(self._codes(chord)):
            xtest.fake_input(self.dpy, X.KeyRelease, code)
        self.dpy.flush()

    def press(self, chord: KeyChord | str, hold_ms: float = 100.0) -> None:
        """Blocking press-hold-release (for scripts; the engine splits down/up to stay async)."""
        self.key_down(chord)
        time.sleep(hold_ms / 1000.0)
        self.key_up(chord)

    def sync(self) -> None:
        """Round trip: everything sent so far has been processed by the server."""
        self.dpy.sync()


def _title_matches(title: str, pattern: str, match: str) -> bool:
    if match == "exact":
        return title == pattern
    if match == "contains":
        return pattern in title
    if match == "regex":
        return re.search(pattern, title) is not None
    raise ValueError(f"unknown title match {match!r} (exact, contains, regex)")


def title_matches(title: str, pattern: str, match: str = "exact") -> bool:
    """Public form of the driver's title test (the responder and expectations share it)."""
    return _title_matches(title, pattern, match)


def any_title_matches(title: str, patterns: Iterable[str], match: str) -> bool:
    return any(_title_matches(title, p, match) for p in patterns)


class ActiveWindowWatcher:
    """Reports every _NET_ACTIVE_WINDOW change with its receipt time (monotonic ns), on a thread.

    Why: a focus request is only a request; the window manager applies it a few ms later (tens
    under load). Apps like Advanced Scene Switcher react to the change itself, so latencies "from
    focus" are measured from this report, and the reports go into the run as evidence.
    The callback runs on the watcher thread: hand over with loop.call_soon_threadsafe.
    """

    def __init__(self, display_name: str | None, callback: Callable[[int, int, str], None]) -> None:
        self.display_name = display_name
        self.callback = callback
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self.error: str | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="x11-active-window", daemon=True)
        self._thread.start()
        self._ready.wait(5)
        if self.error:
            raise X11Error(self.error)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)

    def _run(self) -> None:
        try:
            drv = X11Driver(self.display_name)
        except X11Error as exc:
            self.error = str(exc)
            self._ready.set()
            return
        try:
            net_active = drv.atom("_NET_ACTIVE_WINDOW")
            drv.root.change_attributes(event_mask=X.PropertyChangeMask)
            drv.dpy.sync()
            self._ready.set()
            fd = drv.dpy.fileno()
            while not self._stop.is_set():
                if drv.dpy.pending_events() == 0:
                    select.select([fd], [], [], 0.1)
                for _ in range(drv.dpy.pending_events()):
                    ev = drv.dpy.next_event()
                    if ev.type == X.PropertyNotify and ev.atom == net_active:
                        t_ns = time.monotonic_ns()
                        wid = drv.active_window() or 0
                        self.callback(t_ns, wid, drv.title(wid) if wid else "")
        finally:
            drv.close()
