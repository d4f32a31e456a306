"""Read-only recorder of user input on an X display (XRECORD), published as `x11` `ui/input` events.

Why: some tasks are scored on *how* the work was done, not only on what was left behind. T17 ("build
the scenes with a script, without touching the OBS window") needs to know whether keys or clicks
went to OBS; OBS's own log only shows its Settings dialog. The X server sees every key and button
press and knows where it went, so we ask it.

How: the RECORD extension (Xvfb and Xorg ship it) copies core device events to a recording
connection; `record_enable_context` blocks until another connection disables the context, so it
runs on its own thread and `stop()` disables it from a second (control) connection. A third
connection, used only on the recording thread, resolves where each press went: the focused window
for a key press, the top-level window under the press's root coordinates for a button press. That
window is resolved to its top-level *client* (the window carrying WM_STATE, as xprop/XmuClientWindow
do; without a window manager the child of the root itself) and described by WM_CLASS
(instance, class), _NET_WM_PID and _NET_WM_NAME/WM_NAME, cached per window id. Resolution happens
when the recording thread handles the press (normally well under a millisecond later), so a focus
change that races a key press can be attributed to the new window.

Security: key identity is never read (no keycode, keysym or text leaves the recorder: an agent may
type a password). Only counts per target window are kept. Button numbers are kept (1 left, 3 right,
4/5 wheel): they say nothing secret.

Volume: presses are aggregated per target window into segments; a segment ends when input goes to
another window, and pending segments are emitted every `flush_s` (0.5 s), so a fast typist in one
window produces at most two events per second. Pointer motion is not recorded: hovering is not
interaction, every drag starts with a button press (which is counted), and motion arrives per pixel
step, the one event type that would cost real CPU on the recording thread.

Synthetic input (XTEST, e.g. xdotool or tally's own scenario driver) is indistinguishable from a
real keyboard here and is counted like it.

Events (source `x11`): `ui/input_started` {display, record_version}, `ui/input` {window,
key_presses, button_presses, buttons, first_mono_ns, last_mono_ns}, `ui/input_stopped` {totals,
segments_dropped}, `ui/input_unavailable` {display, reason, lost}. docs/x_input.md describes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from monitor.aio import cancel_and_wait
from monitor.bus import EventBus
from verifiers.evidence import ui

log = logging.getLogger(__name__)

SOURCE = "x11"
KIND_INPUT = "ui/input"
KIND_STARTED = "ui/input_started"
KIND_STOPPED = "ui/input_stopped"
KIND_UNAVAILABLE = "ui/input_unavailable"

_KEY_PRESS = 2
_BUTTON_PRESS = 4
#: window facts are cached per window id; the cache is cleared when it grows past this
MAX_CACHE_WINDOWS = 1024
#: pending segments between two flushes; beyond this a press only merges into a pending segment
#: for the same window (or is counted as dropped)
MAX_PENDING_SEGMENTS = 256
MAX_TITLE_CHARS = 200
#: how deep below a top-level window the client (WM_STATE) is searched; WMs use 1-2 levels
MAX_SEARCH_DEPTH = 4


class XInputUnavailable(RuntimeError):
    """The display cannot be reached or has no RECORD extension: one clear sentence, no traceback."""


@dataclass(frozen=True, slots=True)
class WindowTarget:
    """Where input went: a top-level client window (or the root: the desktop, no window)."""

    window_id: int
    wm_instance: str | None = None
    wm_class: str | None = None
    pid: int | None = None
    title: str | None = None
    root: bool = False
    gone: bool = False  # destroyed before it could be described

    def as_payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {"window_id": f"0x{self.window_id:x}", "wm_instance": self.wm_instance,
                               "wm_class": self.wm_class, "pid": self.pid, "title": self.title}
        if self.root:
            out["root"] = True
        if self.gone:
            out["gone"] = True
        return out


@dataclass
class Segment:
    """Consecutive presses that went to one window."""

    target: WindowTarget
    first_mono_ns: int
    last_mono_ns: int
    key_presses: int = 0
    button_presses: int = 0
    buttons: Counter[int] = field(default_factory=Counter)

    def add(self, kind: int, button: int | None, mono_ns: int) -> None:
        self.last_mono_ns = mono_ns
        if kind == _KEY_PRESS:
            self.key_presses += 1
        else:
            self.button_presses += 1
            if button is not None:
                self.buttons[button] += 1

    def as_payload(self) -> dict[str, Any]:
        return {"window": self.target.as_payload(), "key_presses": self.key_presses,
                "button_presses": self.button_presses,
                "buttons": {str(b): n for b, n in sorted(self.buttons.items())},
                "first_mono_ns": self.first_mono_ns, "last_mono_ns": self.last_mono_ns}


def _open_display(name: str | None) -> Any:
    from Xlib import display, error

    try:
        return display.Display(name)
    except (error.DisplayError, error.DisplayConnectionError, error.ConnectionClosedError, OSError) as exc:
        raise XInputUnavailable(f"cannot open X display {name or '$DISPLAY'!r}: {exc}") from None


class WindowResolver:
    """Turns 'the focused window' / 'the window at (x, y)' into a described top-level client.

    Owns its connection; used only on the recording thread (python-xlib displays are not shared
    between threads here)."""

    def __init__(self, dpy: Any) -> None:
        from Xlib import error

        self.dpy = dpy
        self._xerror = error.XError
        self.root = dpy.screen().root
        self._cache: dict[int, WindowTarget] = {}
        atom = dpy.intern_atom
        self._wm_state = atom("WM_STATE")
        self._net_wm_pid = atom("_NET_WM_PID")
        self._net_wm_name = atom("_NET_WM_NAME")
        self._utf8 = atom("UTF8_STRING")

    def focused(self) -> WindowTarget:
        from Xlib import X

        focus = self.dpy.get_input_focus().focus
        wid = focus if isinstance(focus, int) else focus.id
        if wid == X.PointerRoot:  # focus follows the pointer: the key goes where the pointer is
            ptr = self.root.query_pointer()
            return self.at(ptr.root_x, ptr.root_y)
        if wid in (X.NONE, self.root.id):
            return WindowTarget(self.root.id, root=True)
        return self.describe(wid)

    def at(self, root_x: int, root_y: int) -> WindowTarget:
        """The top-level window whose area holds (root_x, root_y), topmost first (stacking order)."""
        child = self.root.translate_coords(self.root, root_x, root_y).child
        wid = child if isinstance(child, int) else child.id
        if not wid:
            return WindowTarget(self.root.id, root=True)
        return self.describe(wid)

    def describe(self, wid: int) -> WindowTarget:
        hit = self._cache.get(wid)
        if hit is not None:
            return hit
        try:
            client = self._client_of(wid)
            target = self._facts(client)
        except self._xerror:
            target = WindowTarget(wid, gone=True)
        if len(self._cache) >= MAX_CACHE_WINDOWS:
            self._cache.clear()
        self._cache[wid] = target
        return target

    def _window(self, wid: int) -> Any:
        return self.dpy.create_resource_object("window", wid)

    def _has_wm_state(self, wid: int) -> bool:
        from Xlib import X

        return self._window(wid).get_property(self._wm_state, X.AnyPropertyType, 0, 0) is not None

    def _client_of(self, wid: int) -> int:
        """The window with WM_STATE at or above `wid`, else below its top-level ancestor, else that ancestor."""
        w, top = wid, wid
        while w and w != self.root.id:
            if self._has_wm_state(w):
                return w
            parent = self._window(w).query_tree().parent
            pid = parent if isinstance(parent, int) else parent.id
            if pid in (0, self.root.id):
                top = w
                break
            w = pid
        return self._find_below(top, MAX_SEARCH_DEPTH) or top

    def _find_below(self, wid: int, depth: int) -> int | None:
        if depth <= 0:
            return None
        children = [c.id for c in self._window(wid).query_tree().children]
        for c in children:
            if self._has_wm_state(c):
                return c
        for c in children:
            found = self._find_below(c, depth - 1)
            if found:
                return found
        return None

    def _facts(self, wid: int) -> WindowTarget:
        from Xlib import X, Xatom

        win = self._window(wid)
        wm_class = win.get_wm_class()
        pid_prop = win.get_full_property(self._net_wm_pid, Xatom.CARDINAL)
        pid = int(pid_prop.value[0]) if pid_prop is not None and len(pid_prop.value) else None
        name_prop = win.get_full_property(self._net_wm_name, self._utf8) \
            or win.get_full_property(Xatom.WM_NAME, X.AnyPropertyType)
        title = None
        if name_prop is not None:
            raw = name_prop.value
            title = (raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw))[:MAX_TITLE_CHARS]
        return WindowTarget(wid, wm_instance=wm_class[0] if wm_class else None,
                            wm_class=wm_class[1] if wm_class else None, pid=pid, title=title)


class XInputRecorder:
    """Records key and button presses on one display into per-window segments (thread inside).

    `start()` opens the connections and the recording thread (raises XInputUnavailable);
    `take()` returns and clears the pending segments; `stop()` disables the context from the
    control connection, joins the thread and closes everything. Safe to call stop() twice."""

    def __init__(self, display_name: str | None = None) -> None:
        self.display_name = display_name
        self.record_version: str | None = None
        #: set when the recording thread ended on its own (server gone): why
        self.lost: str | None = None
        self.totals: Counter[str] = Counter()
        self.segments_dropped = 0
        self._lock = threading.Lock()
        self._pending: list[Segment] = []
        self._ctl: Any = None
        self._rec: Any = None
        self._query: Any = None
        self._ctx: Any = None
        self._thread: threading.Thread | None = None
        self._resolver: WindowResolver | None = None
        self._ready = threading.Event()
        self._stopping = False

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        from Xlib import X
        from Xlib.ext import record

        try:
            self._ctl = _open_display(self.display_name)
            if not self._ctl.has_extension("RECORD"):
                raise XInputUnavailable(f"X display {self.display_name or '$DISPLAY'!r} has no RECORD extension")
            version = self._ctl.record_get_version(1, 13)
            self.record_version = f"{version.major_version}.{version.minor_version}"
            self._rec = _open_display(self.display_name)
            self._query = _open_display(self.display_name)
            for dpy in (self._ctl, self._rec, self._query):
                dpy.set_error_handler(lambda *_a: None)  # async errors of vanished windows: not news
            self._resolver = WindowResolver(self._query)
            self._ctx = self._ctl.record_create_context(0, [record.AllClients], [{
                "core_requests": (0, 0), "core_replies": (0, 0), "ext_requests": (0, 0, 0, 0),
                "ext_replies": (0, 0, 0, 0), "delivered_events": (0, 0),
                "device_events": (X.KeyPress, X.ButtonPress), "errors": (0, 0),
                "client_started": False, "client_died": False}])
            self._ctl.sync()  # the context must exist before the other connection enables it
        except XInputUnavailable:
            self._close_all()
            raise
        except Exception as exc:  # a protocol error at setup: unavailable, not a crash
            self._close_all()
            raise XInputUnavailable(f"X display {self.display_name or '$DISPLAY'!r}: RECORD setup failed: "
                                    f"{type(exc).__name__}: {exc}") from None
        self._thread = threading.Thread(target=self._run, name="x-input-record", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from Xlib.ext import record

        def on_reply(reply: Any) -> None:
            if reply.category == record.StartOfData:
                self._ready.set()
            elif reply.category == record.FromServer:
                self._handle(reply.data)

        try:
            self._rec.record_enable_context(self._ctx, on_reply)
            if not self._stopping:  # python-xlib returns quietly when the server closes the connection
                self.lost = "the X server ended the recording (display closed?)"
        except Exception as exc:  # the server went away or the context was freed under us
            if not self._stopping:
                self.lost = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        finally:
            self._ready.set()

    def wait_ready(self, timeout_s: float = 5.0) -> bool:
        """True once the server confirmed recording (input before this is not seen)."""
        return self._ready.wait(timeout_s) and self.lost is None

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stopping = True
        if self._thread is not None and self._ctl is not None and self._ctx is not None:
            with contextlib.suppress(Exception):
                self._ctl.record_disable_context(self._ctx)
                self._ctl.flush()
            self._thread.join(timeout_s)
            with contextlib.suppress(Exception):
                self._ctl.record_free_context(self._ctx)
                self._ctl.flush()
        self._thread = None
        self._close_all()

    def _close_all(self) -> None:
        for name in ("_query", "_rec", "_ctl"):
            dpy = getattr(self, name)
            if dpy is not None:
                with contextlib.suppress(Exception):
                    dpy.close()
            setattr(self, name, None)

    # -- recording thread -----------------------------------------------------------------------

    def _handle(self, data: bytes) -> None:
        """Parse the recorded core events (32 bytes each); key identity is never looked at."""
        from Xlib.protocol import rq

        field_ = rq.EventField(None)
        while len(data) >= 32:
            chunk, data = data[:32], data[32:]
            mono_ns = time.monotonic_ns()
            kind = chunk[0] & 0x7F
            if kind not in (_KEY_PRESS, _BUTTON_PRESS):
                continue
            assert self._resolver is not None
            button = None
            try:
                if kind == _KEY_PRESS:  # not parsed at all: the keycode never becomes a Python value
                    target = self._resolver.focused()
                else:
                    ev, _rest = field_.parse_binary_value(chunk, self._rec.display, None, None)
                    button = int(ev.detail)
                    target = self._resolver.at(ev.root_x, ev.root_y)
            except Exception:  # the query connection failed: still count the press
                target = WindowTarget(0, gone=True)
            self._add(target, kind, button, mono_ns)

    def _add(self, target: WindowTarget, kind: int, button: int | None, mono_ns: int) -> None:
        with self._lock:
            self.totals["key_presses" if kind == _KEY_PRESS else "button_presses"] += 1
            seg = self._pending[-1] if self._pending else None
            if seg is None or seg.target != target:
                seg = None
                if len(self._pending) >= MAX_PENDING_SEGMENTS:
                    seg = next((s for s in self._pending if s.target == target), None)
                    if seg is None:
                        self.segments_dropped += 1
                        return
                else:
                    seg = Segment(target, mono_ns, mono_ns)
                    self._pending.append(seg)
            seg.add(kind, button, mono_ns)

    def take(self) -> list[Segment]:
        with self._lock:
            out, self._pending = self._pending, []
        return out


class XInputComponent:
    """The recorder as a run component: emits `x11` events, flushing segments every `flush_s`.

    A display that cannot be recorded is not a failed component: it emits one
    `ui/input_unavailable` (and a log warning) and the run goes on; scorers then see that the
    input evidence is missing rather than that there was no input."""

    name = "x_input"

    def __init__(self, display_name: str | None, flush_s: float = 0.5) -> None:
        self.display_name, self.flush_s = display_name, flush_s
        self.recorder: XInputRecorder | None = None
        self._bus: EventBus | None = None
        self._task: asyncio.Task[None] | None = None
        self._lost_reported = False

    async def start(self, bus: EventBus) -> None:
        self._bus = bus
        recorder = XInputRecorder(self.display_name)
        try:
            await asyncio.to_thread(recorder.start)
            ready = await asyncio.to_thread(recorder.wait_ready, 5.0)
        except XInputUnavailable as exc:
            self._unavailable(str(exc))
            return
        if not ready:
            await asyncio.to_thread(recorder.stop)
            self._unavailable(f"X display {self.display_name!r}: recording did not start ({recorder.lost or 'timeout'})")
            return
        self.recorder = recorder
        started = ui.XInputStarted(self.display_name, recorder.record_version)
        bus.emit(started.SOURCE, started.KIND, started.to_payload())
        self._task = asyncio.get_running_loop().create_task(self._flush_loop(), name="x-input-flush")

    def _unavailable(self, reason: str, lost: bool = False) -> None:
        log.warning("x11 input recording unavailable: %s", reason)
        if self._bus is not None:
            ev = ui.XInputUnavailable(self.display_name, reason, lost)
            self._bus.emit(ev.SOURCE, ev.KIND, ev.to_payload())

    def flush(self) -> int:
        """Emit the pending segments now; returns how many."""
        if self.recorder is None or self._bus is None:
            return 0
        segs = self.recorder.take()
        for seg in segs:
            self._bus.emit(SOURCE, KIND_INPUT, ui.XInput.from_payload(seg.as_payload()).to_payload())
        if self.recorder.lost and not self._lost_reported:
            self._lost_reported = True
            self._unavailable(f"X display {self.display_name!r}: recording stopped: {self.recorder.lost}", lost=True)
        return len(segs)

    async def _flush_loop(self) -> None:
        while True:
            await asyncio.sleep(self.flush_s)
            self.flush()

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        self._task = None
        if self.recorder is None:
            return
        await asyncio.to_thread(self.recorder.stop)
        self.flush()
        if self._bus is not None:
            self._bus.emit(SOURCE, KIND_STOPPED, {"totals": dict(self.recorder.totals),
                                                  "segments_dropped": self.recorder.segments_dropped})
        self.recorder = None

    def describe(self) -> dict[str, Any]:
        return {"display": self.display_name}


def default_display(option: str | None, environ: dict[str, str] | None = None) -> str | None:
    """The display to record: the option when given ("" turns recording off), else $DISPLAY."""
    import os

    if option is not None:
        return option or None
    return (environ if environ is not None else os.environ).get("DISPLAY") or None

