"""`tally sweep score` over 200 items: killed with SIGKILL midway and resumed, every item is scored
once and the results equal an uninterrupted sweep's; a changed scorer re-scores only its task."""

from __future__ import annotations

import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import monitor
import verifiers
from monitor.cli import main
from monitor.sweep.results import latest_rows, read_rows, stable
from tests.sweep.conftest import N_ITEMS
from verifiers.registry import verifier_class


def _stable_by_key(sweep: Path) -> dict[str, dict]:
    return {r["key_id"]: stable(r) for r in latest_rows(read_rows(sweep / "results.jsonl"))}


def _cli(log: Path, *args: str, env: dict | None = None, **kw) -> subprocess.Popen:
    """The CLI in its own interpreter, output to a file (a full pipe would stall it)."""
    with open(log, "w") as fh:
        return subprocess.Popen([sys.executable, "-m", "monitor.cli", "sweep", *args], env=env,
                                stdout=fh, stderr=subprocess.STDOUT, **kw)


def test_uninterrupted_sweep_scores_every_item_once(items_and_reference):
    jsonl, ref = items_and_reference
    rows = read_rows(ref / "results.jsonl")
    assert len(rows) == N_ITEMS == len({r["key_id"] for r in rows})
    assert all(r["status"] == "scored" for r in rows)
    assert {r["labels"]["solution"] for r in rows if r["score"] >= 99} >= {"oracle"}
    assert len(list((ref / "reports").glob("*.json"))) == N_ITEMS
    # a second run finds nothing to do
    assert main(["sweep", "score", str(jsonl), "--out", str(ref), "--workers", "2"]) == 0
    assert len(read_rows(ref / "results.jsonl")) == N_ITEMS


def test_sigkill_midway_then_resume_gives_the_same_results(items_and_reference, tmp_path):
    jsonl, ref = items_and_reference
    out = tmp_path / "killed"
    proc = _cli(tmp_path / "log", "score", str(jsonl), "--out", str(out), "--workers", "2", start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            path = out / "results.jsonl"
            if path.is_file() and path.read_bytes().count(b"\n") >= N_ITEMS // 3:
                break
            assert proc.poll() is None, (tmp_path / "log").read_text()[-3000:]
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its pool workers
    finally:
        proc.wait()
    before = read_rows(out / "results.jsonl")
    assert N_ITEMS // 3 <= len(before) < N_ITEMS
    assert main(["sweep", "score", str(jsonl), "--out", str(out), "--workers", "2"]) == 0
    rows = read_rows(out / "results.jsonl")
    counts = collections.Counter(r["key_id"] for r in rows if r["status"] == "scored")
    assert len(counts) == N_ITEMS and set(counts.values()) == {1}
    assert _stable_by_key(out) == _stable_by_key(ref)


def test_changed_scorer_rescores_only_its_task(items_and_reference, tmp_path):
    """A copy of the verifiers package with one task's module edited shadows the installed one."""
    jsonl, ref = items_and_reference
    out = tmp_path / "rescored"
    shutil.copytree(ref, out)
    task = "R06.12.01.01-T12"
    shadow = tmp_path / "shadow"
    shutil.copytree(Path(verifiers.__file__).parent, shadow / "verifiers",
                    ignore=shutil.ignore_patterns("__pycache__"))
    module = verifier_class(task).__module__
    src = shadow / Path(*module.split(".")).with_suffix(".py")
    src.write_text(src.read_text() + "\n# a fix that changes nothing but the source\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow), str(Path(monitor.__file__).parent.parent)])}
    # cwd elsewhere: `python -m` puts the cwd first on sys.path, which would beat PYTHONPATH
    proc = _cli(tmp_path / "log", "score", str(jsonl), "--out", str(out), "--workers", "2", env=env, cwd=tmp_path)
    assert proc.wait(timeout=240) == 0, (tmp_path / "log").read_text()[-3000:]
    new = read_rows(out / "results.jsonl")[N_ITEMS:]
    expected = sum(1 for line in jsonl.read_text().splitlines() if json.loads(line)["task"] == task)
    assert expected > 0 and len(new) == expected and {r["task"] for r in new} == {task}
    old = {r["item"]: r for r in read_rows(ref / "results.jsonl") if r["task"] == task}
    assert all(r["score"] == old[r["item"]]["score"] and r["key"]["scorer"] != old[r["item"]]["key"]["scorer"]
               for r in new)
