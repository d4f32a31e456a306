"""Stand-in for Advanced Scene Switcher: switch to a privacy scene when a matching window is focused.

Advanced Scene Switcher is not packaged for Debian's OBS, so T20's live behaviour is exercised with
this responder: it watches _NET_ACTIVE_WINDOW (PropertyNotify on the root, no polling), and after a
configurable delay switches the program scene through obs-websocket (and mutes an input); when
focus leaves matching windows it returns to the previous scene after `return_delay_ms` and unmutes.
A test tool, not an observer: it writes to OBS on purpose.

    python -m scenarios.responder --obs ws://127.0.0.1:4455 --display :5 --delay-ms 100 \
        --pattern 'Password|Bank' --scene Privacy --mute Mic
"""

from __future__ import annotations

import argparse
import heapq
import logging
import os
import re
import select
import sys
import threading
import time
from typing import Any
from urllib.parse import urlparse

from Xlib import X, Xatom, display


class FocusResponder:
    """Runs on its own thread with its own X connection and obs-websocket client."""

    def __init__(self, *, display_name: str | None, ws_url: str, password: str = "",
                 pattern: str = "Password|Bank", privacy_scene: str = "Privacy", mute_input: str | None = "Mic",
                 delay_ms: float = 100.0, return_delay_ms: float = 2000.0) -> None:
        self.display_name = display_name
        u = urlparse(ws_url)  # ws://host:port (the responder plays the agent's macro: it writes to OBS)
        self.host, self.port = u.hostname or "127.0.0.1", u.port or 4455
        self._password = password
        self.pattern = re.compile(pattern)
        self.privacy_scene = privacy_scene
        self.mute_input = mute_input
        self.delay_ms = delay_ms
        self.return_delay_ms = return_delay_ms
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self.error: str | None = None
        #: (what, focus_seen_ns, request_sent_ns, title) for each switch it made; for benchmarks
        self.log: list[tuple[str, int, int, str]] = []
        #: how long OBS took to answer each scene switch (ms), beside `log`: a test tells a machine
        #: too busy to keep time (late wake-up, slow OBS) from a wrong measurement by these
        self.reply_ms: list[float] = []

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="focus-responder", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError(f"responder did not start: {self.error or 'timeout'}")
        if self.error:
            raise RuntimeError(f"responder did not start: {self.error}")

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> FocusResponder:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        try:
            import obsws_python as obs
            for name in ("obsws_python", "obsws_python.baseclient", "obsws_python.baseclient.ObsClient"):
                logging.getLogger(name).setLevel(logging.WARNING)
            client = obs.ReqClient(host=self.host, port=self.port, password=self._password, timeout=5)
            dpy = display.Display(self.display_name)
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"
            self._ready.set()
            return
        try:
            self._loop(dpy, client)
        finally:
            dpy.close()
            client.disconnect()

    def _loop(self, dpy: Any, client: Any) -> None:
        root = dpy.screen().root
        net_active = dpy.intern_atom("_NET_ACTIVE_WINDOW")
        net_name, utf8 = dpy.intern_atom("_NET_WM_NAME"), dpy.intern_atom("UTF8_STRING")
        root.change_attributes(event_mask=X.PropertyChangeMask)
        dpy.sync()
        self._ready.set()
        timers: list[tuple[int, int, str, int]] = []   # (due_ns, seq, what, focus_ns that armed it)
        seq = 0
        in_privacy = False
        previous_scene: str | None = None
        focus_ns = 0
        title = ""

        def active_title() -> str:
            prop = root.get_full_property(net_active, Xatom.WINDOW)
            if prop is None or not prop.value or not prop.value[0]:
                return ""
            win = dpy.create_resource_object("window", int(prop.value[0]))
            try:
                p = win.get_full_property(net_name, utf8) or win.get_full_property(Xatom.WM_NAME, X.AnyPropertyType)
            except Exception:
                return ""
            if p is None:
                return ""
            return p.value.decode("utf-8", "replace") if isinstance(p.value, bytes) else str(p.value)

        fd = dpy.fileno()
        while not self._stop.is_set():
            now = time.monotonic_ns()
            while timers and timers[0][0] <= now:
                _due, _s, what, armed_ns = heapq.heappop(timers)
                try:
                    in_privacy, previous_scene = self._act(client, what, in_privacy, previous_scene,
                                                           armed_ns, title)
                except Exception as exc:  # OBS said no (missing scene/input): note it, keep watching
                    self.error = f"{what}: {type(exc).__name__}: {exc}"
                now = time.monotonic_ns()
            wait_s = 0.2 if not timers else max(0.0, (timers[0][0] - now) / 1e9)
            if dpy.pending_events() == 0:
                select.select([fd], [], [], min(wait_s, 0.2))
            for _ in range(dpy.pending_events()):
                ev = dpy.next_event()
                if ev.type != X.PropertyNotify or ev.atom != net_active:
                    continue
                focus_ns = time.monotonic_ns()
                title = active_title()
                if self.pattern.search(title):
                    timers = [t for t in timers if t[2] != "return"]
                    heapq.heapify(timers)
                    if not in_privacy and not any(t[2] == "privacy" for t in timers):
                        # ask for the scene to return to now, so the timer only has to switch
                        try:
                            previous_scene = client.get_current_program_scene().current_program_scene_name
                        except Exception as exc:
                            self.error = f"GetCurrentProgramScene: {type(exc).__name__}: {exc}"
                        seq += 1
                        heapq.heappush(timers, (focus_ns + int(self.delay_ms * 1e6), seq, "privacy", focus_ns))
                else:
                    timers = [t for t in timers if t[2] != "privacy"]
                    heapq.heapify(timers)
                    if in_privacy and not any(t[2] == "return" for t in timers):
                        seq += 1
                        heapq.heappush(timers, (focus_ns + int(self.return_delay_ms * 1e6), seq, "return", focus_ns))


    def _act(self, client: Any, what: str, in_privacy: bool, previous_scene: str | None, focus_ns: int,
             title: str) -> tuple[bool, str | None]:
        if what == "privacy" and not in_privacy:
            sent_ns = time.monotonic_ns()
            client.set_current_program_scene(self.privacy_scene)
            self.reply_ms.append((time.monotonic_ns() - sent_ns) / 1e6)
            in_privacy = True
            self.log.append(("privacy", focus_ns, sent_ns, title))
            if self.mute_input:
                client.set_input_mute(self.mute_input, True)
        elif what == "return" and in_privacy:
            sent_ns = time.monotonic_ns()
            if previous_scene:
                client.set_current_program_scene(previous_scene)
                self.reply_ms.append((time.monotonic_ns() - sent_ns) / 1e6)
            in_privacy = False
            self.log.append(("return", focus_ns, sent_ns, title))
            if self.mute_input:
                client.set_input_mute(self.mute_input, False)
        return in_privacy, previous_scene


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="focus-driven privacy scene switcher (test stand-in)")
    ap.add_argument("--obs", default="ws://127.0.0.1:4455")
    ap.add_argument("--display", default=os.environ.get("DISPLAY"))
    ap.add_argument("--pattern", default="Password|Bank")
    ap.add_argument("--scene", default="Privacy")
    ap.add_argument("--mute", default="Mic")
    ap.add_argument("--delay-ms", type=float, default=100.0)
    ap.add_argument("--return-delay-ms", type=float, default=2000.0)
    args = ap.parse_args(argv)
    resp = FocusResponder(display_name=args.display, ws_url=args.obs,
                          password=os.environ.get("TALLY_OBS_PASSWORD", ""), pattern=args.pattern,
                          privacy_scene=args.scene, mute_input=args.mute or None, delay_ms=args.delay_ms,
                          return_delay_ms=args.return_delay_ms)
    try:
        resp.start()
    except (RuntimeError, ValueError) as exc:
        print(f"responder: {exc}", file=sys.stderr)
        return 2
    try:
        while resp._thread is not None and resp._thread.is_alive():
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        resp.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
