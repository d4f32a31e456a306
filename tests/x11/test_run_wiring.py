"""The input recorder inside `tally run`: added when the run has an X display, its events land in
the bundle, and T17's scorer reads them (clicks into the "obs" window are UI interaction)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from monitor.bundle import read_events
from monitor.observers.x_input import XInputComponent
from monitor.run.session import RunConfig, RunSession
from monitor.run.wiring import LiveOptions, build_components
from tests.x11.xhelpers import geometry_origin, plain_xvfb, two_windows, xdotool
from verifiers.catalog import load_catalog
from verifiers.tasks.streaming.t17_weekly_websocket import InputLog

T17 = "R06.12.01.01-T17"


def _x_inputs(tmp_path: Path, x_display: str | None) -> list[XInputComponent]:
    comps, _missing = build_components(load_catalog().get(T17),
                                       LiveOptions(workdir=tmp_path, bundle_dir=tmp_path / "b", x_display=x_display))
    return [c for c in comps if isinstance(c, XInputComponent)]


def test_recorder_is_added_when_the_run_has_a_display(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    assert _x_inputs(tmp_path, None) == []
    assert [c.display_name for c in _x_inputs(tmp_path, ":5")] == [":5"]
    monkeypatch.setenv("DISPLAY", ":6")
    assert [c.display_name for c in _x_inputs(tmp_path, None)] == [":6"]
    assert _x_inputs(tmp_path, "") == [], "an empty option turns recording off"


@pytest.mark.timeout(60)
@pytest.mark.skipif(shutil.which("Xvfb") is None or shutil.which("xdotool") is None, reason="needs Xvfb and xdotool")
async def test_run_bundle_holds_clicks_into_obs_and_t17_sees_them(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    work, gt = tmp_path / "work", tmp_path / "gt"
    work.mkdir()
    gt.mkdir()
    with plain_xvfb() as display, two_windows(display) as wins:
        monkeypatch.delenv("DISPLAY", raising=False)     # the display comes from the run config (--x-display)
        session = RunSession(RunConfig(task_id=T17, workdir=work, gt=gt, bundle_dir=tmp_path / "b",
                                       timeout_s=30, install_signals=False, x_display=display))
        running = asyncio.get_running_loop().create_task(session.execute())
        await asyncio.wait_for(session.started.wait(), 20)
        ox, oy = await asyncio.to_thread(geometry_origin, display, wins["obs"].id)
        await asyncio.to_thread(xdotool, display, "mousemove", "--sync", str(ox + 10), str(oy + 10))
        await asyncio.to_thread(xdotool, display, "click", "--repeat", "2", "--delay", "20", "1")
        await asyncio.to_thread(xdotool, display, "windowfocus", "--sync", str(wins["term"].id))
        await asyncio.to_thread(xdotool, display, "type", "--delay", "5", "python3")
        await asyncio.sleep(0.2)
        session.done.finish("test")
        result = await asyncio.wait_for(running, 30)
    assert "x_input" in result.report["run"]["components"]["started"]
    events = read_events(tmp_path / "b" / "events.jsonl").events
    kinds = [e.kind for e in events if e.source == "x11"]
    assert kinds[0] == "ui/input_started" and kinds[-1] == "ui/input_stopped", kinds
    log = InputLog([e.to_dict() for e in events])
    assert log.recorded
    assert [label.split(" ")[0] for label in log.obs_windows] == ["obs/obs"]
    counts = {label.split(" ")[0]: dict(c) for label, c in log.per_window.items()}
    assert counts == {"obs/obs": {"key_presses": 0, "button_presses": 2},
                      "xterm/XTerm": {"key_presses": 7, "button_presses": 0}}
