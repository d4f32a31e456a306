"""The input recorder against a real OBS 29 under Xvfb + openbox: a click into OBS's main window is
attributed to WM_CLASS obs/obs with OBS's pid, which is what T17's gate matches on."""

from __future__ import annotations

import asyncio
import shutil

import pytest

from monitor.bus import EventBus
from monitor.events import Event
from monitor.obs import ObsInstance
from monitor.observers.x_input import KIND_INPUT, SOURCE, XInputComponent
from tests.x11.xhelpers import xdotool
from verifiers.evidence.ui import XWindow
from verifiers.tasks.streaming.t17_weekly_websocket import InputLog, is_obs_window

pytestmark = [pytest.mark.obs, pytest.mark.timeout(120),
              pytest.mark.skipif(any(shutil.which(b) is None for b in ("obs", "Xvfb", "openbox", "xdotool")),
                                 reason="needs obs-studio, Xvfb, openbox and xdotool")]


async def test_click_into_real_obs_main_window_is_obs_input() -> None:
    async with ObsInstance(window_manager=True) as inst:
        assert inst.display is not None
        bus = EventBus()
        events: list[Event] = []
        bus.add_sink(events.append)
        comp = XInputComponent(inst.display, flush_s=0.2)
        await comp.start(bus)
        try:
            # the main window (the one titled "OBS <version> ..."), clicked in its middle
            await asyncio.to_thread(xdotool, inst.display, "search", "--sync", "--onlyvisible", "--name",
                                    "^OBS 29", "windowactivate", "--sync", "mousemove", "--window", "%1",
                                    "--sync", "300", "300", "click", "1")
        finally:
            await comp.stop()
    inputs = [e.payload for e in events if e.source == SOURCE and e.kind == KIND_INPUT]
    assert sum(p["button_presses"] for p in inputs) == 1, inputs
    (window,) = {tuple(sorted(p["window"].items())) for p in inputs}
    target = dict(window)
    assert (target["wm_instance"], target["wm_class"]) == ("obs", "obs")
    assert target["title"].startswith("OBS 29") and target["pid"] == inst.pid
    assert is_obs_window(XWindow.from_payload(target))
    log = InputLog([e.to_dict() for e in events])
    assert log.recorded and len(log.obs_windows) == 1
