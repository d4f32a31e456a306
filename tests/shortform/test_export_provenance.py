"""The seeds' provenance gate for short-form exports: a file the audit saw written by ffmpeg is not
the app's export (verifiers/provenance.py), whatever it shows; another writer is not refused."""

from __future__ import annotations

import pytest

from verifiers.scoring import score_task
from verifiers.synth import overlay, synth_instance


def _score(task_id: str, tmp_path, writes: dict[str, str]) -> dict:
    inst = synth_instance(task_id, tmp_path / "inst", seed=0)
    work = tmp_path / "work"
    overlay(inst / "workdir", inst / "oracle", work)
    events = [{"source": "audit", "kind": "write", "payload": {"path": rel, "process": proc, "pid": 4242}}
              for rel, proc in writes.items()]
    return score_task(task_id, work, inst / "gt", events).to_dict()


def test_export_written_by_ffmpeg_fails_every_check(tmp_path):
    report = _score("R06.04.01.04-T02", tmp_path, {"device/DCIM/recap.mp4": "ffmpeg"})
    assert report["score"] == 0
    for check in report["checks"]:
        assert check["status"] == "fail"
        assert "written by ffmpeg" in check["message"], check


def test_export_written_by_the_app_is_scored(tmp_path):
    report = _score("R06.04.01.04-T02", tmp_path, {"device/DCIM/recap.mp4": "Edits"})
    assert report["score"] >= 99, report


@pytest.mark.slow
def test_one_version_written_by_ffmpeg_costs_only_its_checks(tmp_path):
    report = _score("R06.04.01.04-T13", tmp_path, {"out/tips_es.mp4": "ffmpeg"})
    by_name = {c["name"]: c for c in report["checks"]}
    assert "written by ffmpeg" in by_name["spanish"]["message"]
    assert by_name["spanish"]["score"] == 0
    assert by_name["english_unchanged"]["score"] == 1 and by_name["japanese"]["score"] == 1
