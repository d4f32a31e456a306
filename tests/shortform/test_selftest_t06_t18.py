"""T06 (15-s brand ad) and T18 (60-s explainer, proven on a time-scaled miniature) prove themselves:
oracle >= 99, do-nothing <= 5, each mutant lowers exactly the checks it names; the same seed writes
the same bytes; a garbage export fails the checks with a message (no traceback, no "error")."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from verifiers.synth import INSTANCE_CACHE_ENV, score_solution, selftest_task, synth_instance

TASKS = ["R06.04.01.04-T06", "R06.04.01.04-T18"]
EXPORT = {"R06.04.01.04-T06": "out/ad15.mp4", "R06.04.01.04-T18": "out/explainer.mp4"}


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
@pytest.mark.parametrize("task_id", TASKS)
def test_selftest_passes(task_id):
    res = selftest_task(task_id)
    assert res.ok, res.problems
    assert res.oracle >= 99 and res.nothing <= 5
    assert len(res.mutants) >= 5 and all(m["ok"] for m in res.mutants.values())
    # every mutant really costs points (a mutant lowering nothing would not be "ok" either)
    assert all(m["score"] < res.oracle for m in res.mutants.values())


@pytest.mark.slow
@pytest.mark.parametrize("task_id", TASKS)
def test_same_seed_same_bytes_and_garbage_export_fails(task_id, tmp_path, monkeypatch):
    monkeypatch.delenv(INSTANCE_CACHE_ENV, raising=False)  # really synthesise twice, never copy
    a = synth_instance(task_id, tmp_path / "a", seed=7)
    b = synth_instance(task_id, tmp_path / "b", seed=7)
    da, db = _digests(a), _digests(b)
    assert da == db and len(da) > 10

    bad = a / "mutants" / "garbage"
    (bad / "out").mkdir(parents=True)
    (bad / EXPORT[task_id]).write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 4)
    (bad / "expect.json").write_text(json.dumps({"lowers": []}))
    rep = score_solution(task_id, a, bad)
    assert rep["score"] == 0
    assert all(c["status"] == "fail" and c["message"] for c in rep["checks"]), rep["checks"]
