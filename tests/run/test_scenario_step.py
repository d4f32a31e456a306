"""The task's scenario inside a run: played after `done`, its events in the bundle; absent pieces recorded."""

from __future__ import annotations

import asyncio
import json

from monitor.bundle import read_events
from monitor.run import scenario_step
from monitor.run.session import RunConfig, RunSession

TASK = "R06.12.01.01-T06"  # live: obs, scenario

MARKS_ONLY = """
name: marks only
task: R06.12.01.01-T06
steps:
  - {id: a, at_ms: 50, mark: "first"}
  - {id: b, after: a, delay_ms: 100, mark: "second"}
"""


async def _run(tmp_path, monkeypatch, scenario_text: str | None, display: str | None):
    work, gt = tmp_path / "work", tmp_path / "gt"
    work.mkdir()
    gt.mkdir()
    if scenario_text is not None:
        path = tmp_path / "sc.yaml"
        path.write_text(scenario_text)
        monkeypatch.setattr(scenario_step, "scenario_file", lambda _task: path)
    if display is None:
        monkeypatch.delenv("DISPLAY", raising=False)
    session = RunSession(RunConfig(task_id=TASK, workdir=work, gt=gt, bundle_dir=tmp_path / "b",
                                   timeout_s=30, install_signals=False))
    running = asyncio.get_running_loop().create_task(session.execute())
    await asyncio.wait_for(session.started.wait(), 20)
    session.done.finish("test")
    result = await asyncio.wait_for(running, 30)
    return result, read_events(tmp_path / "b" / "events.jsonl").events


async def test_scenario_plays_after_done(tmp_path, monkeypatch):
    result, events = await _run(tmp_path, monkeypatch, MARKS_ONLY, display=None)
    kinds = [(e.source, e.kind) for e in events]
    done_at = kinds.index(("run", "done"))
    actions = [i for i, k in enumerate(kinds) if k == ("scenario", "action")]
    assert len(actions) == 2 and min(actions) > done_at
    assert ("run", "scenario_finished") in kinds
    assert kinds.index(("run", "scenario_finished")) < kinds.index(("run", "ended"))
    assert result.report["run"]["components"]["unavailable"] == {"obs": "no --obs URL given (ws://host:4455)"}


async def test_x11_scenario_without_display_is_recorded_not_fatal(tmp_path, monkeypatch):
    result, events = await _run(tmp_path, monkeypatch, None, display=None)
    unavailable = {e.payload["need"]: e.payload["reason"] for e in events if e.kind == "component_unavailable"}
    assert "DISPLAY" in unavailable["scenario"]
    assert result.end_reason == "test"
    assert any("scenario" in n for n in result.report["notes"]), json.dumps(result.report["notes"])
