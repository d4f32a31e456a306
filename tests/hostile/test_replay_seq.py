"""Issue 20 item 6: a bundle whose event log lost its first line (seq 0) is not `clean` on replay,
and `tally replay` names the missing seq (the gap check used to ignore a missing first seq)."""

from __future__ import annotations

import asyncio

from monitor.cli import main as cli_main
from monitor.run.rescore import score_bundle
from monitor.run.session import RunConfig, RunSession

TASK = "R06.04.01.04-T01"


async def test_a_lost_first_event_is_reported(tmp_path, capsys):
    work, gt = tmp_path / "work", tmp_path / "gt"
    work.mkdir()
    gt.mkdir()
    session = RunSession(RunConfig(task_id=TASK, workdir=work, gt=gt, bundle_dir=tmp_path / "b", timeout_s=30,
                                   install_signals=False, audit_mode="inotify"))
    running = asyncio.get_running_loop().create_task(session.execute())
    await asyncio.wait_for(session.started.wait(), 30)
    session.done.finish("test")
    await asyncio.wait_for(running, 60)
    intact = score_bundle(tmp_path / "b")
    assert intact["run"]["clean"], intact["run"]["missing"]

    events = tmp_path / "b" / "events.jsonl"
    lines = events.read_bytes().split(b"\n")
    assert b'"seq":0' in lines[0]
    events.write_bytes(b"\n".join(lines[1:]))  # seq 0 gone, as when run/started could not be encoded
    damaged = score_bundle(tmp_path / "b")
    assert not damaged["run"]["clean"]
    assert any("seq 0..0" in m for m in damaged["run"]["missing"]), damaged["run"]["missing"]
    assert cli_main(["replay", str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "clean=False" in out and "seq 0..0" in out
