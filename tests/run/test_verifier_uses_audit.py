"""The audit's `write` records reach a verifier: T04 fails the recording share of a scene JSON rewritten by
`cp` (not OBS)."""

from __future__ import annotations

import asyncio
import subprocess

from monitor.run.session import RunConfig, RunSession
from verifiers.synth import overlay, synth_instance

TASK = "R06.12.01.01-T04"  # live: obs, audit; OBS must be the only writer of obs-studio/


async def test_outside_writer_of_the_scene_json_is_caught(tmp_path):
    inst = synth_instance(TASK, tmp_path / "inst")
    work = tmp_path / "work"
    overlay(inst / "workdir", inst / "oracle", work)
    scenes = sorted((work / "obs-studio" / "basic" / "scenes").glob("*.json"))
    assert scenes, "the oracle has a scene collection"
    session = RunSession(RunConfig(task_id=TASK, workdir=work, gt=inst / "gt", bundle_dir=tmp_path / "b",
                                   timeout_s=60, install_signals=False))
    running = asyncio.get_running_loop().create_task(session.execute())
    await asyncio.wait_for(session.started.wait(), 20)
    backup = tmp_path / "scene.json"
    backup.write_bytes(scenes[0].read_bytes())
    await asyncio.to_thread(subprocess.run, ["cp", str(backup), str(scenes[0])], check=True)  # same bytes
    await asyncio.sleep(0.3)
    session.done.finish("test")
    result = await asyncio.wait_for(running, 60)

    recording = next(c for c in result.report["checks"] if c["name"] == "recording")
    outsiders = recording["evidence"]["outside_writers"]
    assert [o["process"] for o in outsiders] == ["cp"], recording
    # a gate (issue 21): the scene JSON written by another program fails the whole recording share, since
    # "nobody else wrote it" as one item among several would pay for doing nothing
    assert recording["status"] == "fail" and recording["score"] == 0, recording
    assert "another process than OBS" in recording["message"]
    rel = str(scenes[0].relative_to(work))
    assert result.report["run"]["artifacts"] and any(
        a["path"] == rel and (a["writer_exe"] or "").endswith("/cp") for a in result.report["run"]["artifacts"])
