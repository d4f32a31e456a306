"""`tally run` of a vMix task against the vMix emulator: the observer's events land in the bundle."""

from __future__ import annotations

import asyncio

from monitor.bundle import read_events
from monitor.emulators.vmix import VmixEmulator, script_from_dict
from monitor.run.session import RunConfig, RunSession

TASK = "R06.12.01.01-T10"  # live: vmix
SCRIPT = {"inputs": [{"title": "CAM1"}, {"title": "CAM2"}], "initial": {"program": "CAM1", "preview": "CAM2"},
          "timeline": [{"at_s": 0.8, "cut": "CAM2"}]}


async def test_vmix_observer_events_recorded_read_only(tmp_path):
    work, gt = tmp_path / "work", tmp_path / "gt"
    work.mkdir()
    gt.mkdir()
    emu = VmixEmulator(script_from_dict(SCRIPT), http=("127.0.0.1", 0), tcp=("127.0.0.1", 0))
    async with emu:
        url = f"http://127.0.0.1:{emu.http_port}?tcp={emu.tcp_port}"
        session = RunSession(RunConfig(task_id=TASK, workdir=work, gt=gt, bundle_dir=tmp_path / "b",
                                       vmix_url=url, timeout_s=30, install_signals=False))
        running = asyncio.get_running_loop().create_task(session.execute())
        await asyncio.wait_for(session.started.wait(), 20)
        await asyncio.sleep(2.0)  # the cut happens at 0.8 s
        session.done.finish("test")
        result = await asyncio.wait_for(running, 30)
    assert emu.function_calls == [], "the observer never writes"
    events = read_events(tmp_path / "b" / "events.jsonl").events
    vmix = [e for e in events if e.source == "vmix"]
    programs = [e.payload["input"]["title"] for e in vmix if e.kind == "program"]
    assert "CAM2" in programs, sorted({e.kind for e in vmix})
    assert result.report["run"]["components"]["started"] == ["audit", "vmix"]
    assert result.report["run"]["components"]["never_stopped"] == []
