"""Garbage and truncated outputs give clear failed checks (never a verifier crash), and the same seed
gives the same instance bytes."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from verifiers.catalog import load_catalog
from verifiers.scoring import score_task
from verifiers.synth import INSTANCE_CACHE_ENV, overlay, synth_instance


def _audio_tasks() -> list[tuple[str, str]]:
    """(task, its first audio deliverable) for every sound task whose scorer reads a single render."""
    out = []
    for t in load_catalog().family("sound"):
        audio = [a.path for a in t.artifacts if a.kind == "audio"]
        if audio and t.id != "R06.07.01.03-T17":  # T17 delivers eight files, judged one by one
            out.append((t.id, audio[0]))
    return sorted(out)


@pytest.mark.slow
@pytest.mark.parametrize("task_id, rel", _audio_tasks())
def test_garbage_render_is_a_clear_failure(tmp_path, task_id, rel):
    inst = synth_instance(task_id, tmp_path / "inst", seed=11)
    work = tmp_path / "work"
    overlay(inst / "workdir", inst / "oracle", work)
    (work / rel).write_bytes(b"RIFF\x00\x00\x00\x00this is not audio at all" * 10)
    rep = score_task(task_id, work, inst / "gt").to_dict()
    failed = [c for c in rep["checks"] if c["status"] == "fail"]
    assert failed and all("crashed" not in c["message"] for c in rep["checks"])
    assert any(rel in c["message"] for c in failed), [c["message"] for c in rep["checks"]]
    assert rep["score"] == 0


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


@pytest.mark.slow
@pytest.mark.parametrize("task_id", ["R06.07.01.03-T02", "R06.07.01.03-T13", "R06.07.01.03-T19"])
def test_same_seed_same_bytes(tmp_path, task_id, monkeypatch):
    monkeypatch.delenv(INSTANCE_CACHE_ENV, raising=False)  # really synthesise each time, never copy
    a = _digest(synth_instance(task_id, tmp_path / "a", seed=3))
    b = _digest(synth_instance(task_id, tmp_path / "b", seed=3))
    c = _digest(synth_instance(task_id, tmp_path / "c", seed=4))
    assert a == b != c
