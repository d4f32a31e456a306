"""The XRECORD input recorder against a real Xvfb: two client windows (a terminal, "obs"), real
XTEST input from xdotool, and the `x11` events it emits (which window, how many presses, no key
identity). Both with openbox (reparented frames: the client is found through WM_STATE) and without
a window manager (the top-level window is the client). Plus the unavailable path."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from typing import Any

import pytest

from monitor.bus import EventBus
from monitor.events import Event
from monitor.observers.x_input import (
    KIND_INPUT,
    KIND_STARTED,
    KIND_STOPPED,
    KIND_UNAVAILABLE,
    SOURCE,
    XInputComponent,
    XInputRecorder,
    XInputUnavailable,
    default_display,
)
from tests.scenarios.xserver import xvfb_openbox
from tests.x11.xhelpers import geometry_origin, plain_xvfb, two_windows, xdotool, xvfb_process

pytestmark = [pytest.mark.timeout(60),
              pytest.mark.skipif(any(shutil.which(b) is None for b in ("Xvfb", "xdotool", "openbox")),
                                 reason="needs Xvfb, xdotool and openbox (the Makefile installs them)")]

#: typed into the terminal window: must never appear in any event, in any form
SECRET = "hunter2pw"
PAYLOAD_KEYS = {"window", "key_presses", "button_presses", "buttons", "first_mono_ns", "last_mono_ns"}
WINDOW_KEYS = {"window_id", "wm_instance", "wm_class", "pid", "title"}


async def record_session(display: str) -> tuple[list[Event], dict[str, Any]]:
    bus = EventBus()
    events: list[Event] = []
    bus.add_sink(events.append)
    comp = XInputComponent(display, flush_s=0.2)
    with two_windows(display) as wins:
        term, obs = wins["term"].id, wins["obs"].id
        await comp.start(bus)
        assert comp.recorder is not None, [e.payload for e in events]
        # keys into the terminal, then clicks into OBS (2 left, 1 right), then 3 keys into the terminal again
        await asyncio.to_thread(xdotool, display, "windowfocus", "--sync", str(term))
        await asyncio.to_thread(xdotool, display, "type", "--delay", "5", SECRET)
        ox, oy = await asyncio.to_thread(geometry_origin, display, obs)
        await asyncio.to_thread(xdotool, display, "mousemove", "--sync", str(ox + 200), str(oy + 150))
        await asyncio.to_thread(xdotool, display, "click", "--repeat", "2", "--delay", "20", "1")
        await asyncio.to_thread(xdotool, display, "click", "3")
        await asyncio.to_thread(xdotool, display, "windowfocus", "--sync", str(term))
        await asyncio.sleep(0.3)  # a flush in between: the terminal's second burst is its own event
        await asyncio.to_thread(xdotool, display, "key", "--delay", "5", "a", "b", "c")
        await asyncio.sleep(0.1)
        await comp.stop()
    return events, {"term": term, "obs": obs}


def _inputs(events: list[Event]) -> list[dict[str, Any]]:
    return [e.payload for e in events if e.source == SOURCE and e.kind == KIND_INPUT]


def _runs(inputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive events for the same window summed (a flush may split one burst in two)."""
    runs: list[dict[str, Any]] = []
    for p in inputs:
        if runs and runs[-1]["window"] == p["window"]:
            last = runs[-1]
            last["key_presses"] += p["key_presses"]
            last["button_presses"] += p["button_presses"]
            for b, n in p["buttons"].items():
                last["buttons"][b] = last["buttons"].get(b, 0) + n
        else:
            runs.append({**p, "buttons": dict(p["buttons"])})
    return runs


def _check_session(events: list[Event], wins: dict[str, Any]) -> None:
    kinds = [e.kind for e in events]
    assert kinds[0] == KIND_STARTED and kinds[-1] == KIND_STOPPED, kinds
    inputs = _inputs(events)
    runs = _runs(inputs)
    # the focus changes by xdotool windowfocus are not presses: three runs of input, in order
    assert [(r["window"]["wm_class"], r["key_presses"], r["button_presses"]) for r in runs] == [
        ("XTerm", len(SECRET), 0), ("obs", 0, 3), ("XTerm", 3, 0)], json.dumps(inputs)
    assert runs[1]["buttons"] == {"1": 2, "3": 1}
    assert len(inputs) <= 6  # a run is split only at a flush (every 0.2 s here)
    assert inputs[0]["window"]["window_id"] == f"0x{wins['term']:x}"
    assert inputs[1]["window"]["window_id"] == f"0x{wins['obs']:x}"
    assert inputs[1]["window"]["wm_instance"] == "obs" and inputs[1]["window"]["title"].startswith("OBS 29")
    assert all(p["window"]["pid"] == os.getpid() for p in inputs)
    for p in inputs:
        assert set(p) == PAYLOAD_KEYS and set(p["window"]) == WINDOW_KEYS
        assert p["first_mono_ns"] <= p["last_mono_ns"]
    stopped = events[-1].payload
    assert stopped["totals"] == {"key_presses": len(SECRET) + 3, "button_presses": 3}
    assert stopped["segments_dropped"] == 0
    text = json.dumps([e.payload for e in events])
    assert SECRET not in text and "keycode" not in text and "keysym" not in text and "detail" not in text


async def test_records_windows_and_counts_without_a_window_manager() -> None:
    with plain_xvfb() as display:
        events, wins = await record_session(display)
    _check_session(events, wins)


async def test_records_client_windows_behind_openbox_frames() -> None:
    """openbox reparents each client into a frame: the pointer hits the frame, WM_STATE names the client."""
    with xvfb_openbox() as display:
        events, wins = await record_session(display)
    _check_session(events, wins)


async def test_unreachable_display_is_one_clear_event_not_a_traceback(caplog: pytest.LogCaptureFixture) -> None:
    bus = EventBus()
    events: list[Event] = []
    bus.add_sink(events.append)
    comp = XInputComponent(":4999")  # nothing listens there
    await comp.start(bus)
    await comp.stop()
    assert [(e.source, e.kind) for e in events] == [(SOURCE, KIND_UNAVAILABLE)]
    assert "cannot open X display ':4999'" in events[0].payload["reason"]
    assert "Traceback" not in caplog.text and "cannot open X display" in caplog.text
    with pytest.raises(XInputUnavailable, match="cannot open X display"):
        XInputRecorder(":4999").start()


async def test_x_server_exiting_mid_run_is_reported_once_as_lost() -> None:
    bus = EventBus()
    events: list[Event] = []
    bus.add_sink(events.append)
    with xvfb_process() as (display, proc):
        comp = XInputComponent(display, flush_s=0.05)
        await comp.start(bus)
        proc.terminate()
        await asyncio.to_thread(proc.wait, 5)
        for _ in range(100):  # the flush loop reports it
            if any(e.kind == KIND_UNAVAILABLE for e in events):
                break
            await asyncio.sleep(0.05)
        await comp.stop()
    assert [e.kind for e in events] == [KIND_STARTED, KIND_UNAVAILABLE, KIND_STOPPED]
    assert events[1].payload["lost"] is True and "recording stopped" in events[1].payload["reason"]


def test_default_display_option_overrides_environment() -> None:
    assert default_display(None, {"DISPLAY": ":3"}) == ":3"
    assert default_display(":7", {"DISPLAY": ":3"}) == ":7"
    assert default_display("", {"DISPLAY": ":3"}) is None
    assert default_display(None, {}) is None
