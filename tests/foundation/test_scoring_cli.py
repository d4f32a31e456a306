"""Scoring semantics and the CLI's exit codes, on the first real verifier (R06.07.01.03-T14)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from verifiers.registry import verifier_class
from verifiers.scoring import score_task
from verifiers.synth import INSTANCE_CACHE_ENV, overlay, synth_instance

T14 = "R06.07.01.03-T14"


@pytest.fixture(scope="module")
def inst(tmp_path_factory) -> Path:
    return synth_instance(T14, tmp_path_factory.mktemp("t14") / "inst", seed=3)


def tally(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "monitor.cli", *args], capture_output=True, text=True, timeout=120)


def test_missing_output_is_an_agent_failure_not_an_error(inst):
    rep = score_task(T14, inst / "workdir", inst / "gt").to_dict()
    assert rep["score"] == 0 and rep["complete"] and not rep["errors"]
    assert {c["status"] for c in rep["checks"]} == {"fail"}
    assert all(c["message"] == "artifact missing: output/hallway_fx_cli.wav" for c in rep["checks"])


def test_missing_gt_file_is_an_error_and_the_score_says_incomplete(inst, tmp_path):
    work, gt = tmp_path / "w", tmp_path / "gt"
    overlay(inst / "workdir", inst / "oracle", work)
    gt.mkdir()
    rep = score_task(T14, work, gt).to_dict()
    assert rep["status"] == "incomplete" and not rep["complete"]
    assert rep["unjudged_weight"] == 100 and rep["score_of_judged_pct"] is None
    assert all(e["message"].startswith("ground truth missing") for e in rep["errors"])


def test_verifier_crash_is_error_not_zero(inst, tmp_path, monkeypatch):
    cls = verifier_class(T14)

    def boom(self, ctx, checks):
        checks.set("sync", 1.0)
        raise RuntimeError("kaboom")

    monkeypatch.setattr(cls, "score", boom)
    rep = score_task(T14, inst / "workdir", inst / "gt").to_dict()
    assert rep["score"] == 60 and rep["unjudged_weight"] == 40
    assert {e["check"] for e in rep["errors"]} == {"correct_sound", "render_spec"}
    assert "verifier crashed: RuntimeError: kaboom" in rep["errors"][0]["message"]


def test_truncated_wav_is_a_clear_failed_check(inst, tmp_path):
    work = tmp_path / "w"
    overlay(inst / "workdir", inst / "mutants" / "truncated_wav", work)
    rep = score_task(T14, work, inst / "gt").to_dict()
    assert rep["score"] == 0 and not rep["errors"]
    msg = rep["checks"][0]["message"]
    assert msg.startswith("output/hallway_fx_cli.wav unusable:") and "truncat" in msg


def test_cli_exit_codes_and_one_line_errors(inst, tmp_path):
    r = tally("score", T14, "--workdir", str(inst / "workdir"), "--gt", str(tmp_path / "no-gt"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "GT dir" in r.stderr and "Traceback" not in r.stderr
    r = tally("score", "R06.99.99.99-T99", "--workdir", str(inst / "workdir"), "--gt", str(inst / "gt"))
    assert r.returncode == 2 and "unknown task" in r.stderr
    r = tally("score", T14, "--workdir", str(tmp_path / "nowhere"), "--gt", str(inst / "gt"))
    assert r.returncode == 2 and "work dir" in r.stderr
    work = tmp_path / "w"
    overlay(inst / "workdir", inst / "oracle", work)
    r = tally("score", T14, "--workdir", str(work), "--gt", str(inst / "gt"), "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["schema"] == "tally.report/1" and rep["score"] >= 99


def test_same_seed_same_bytes_and_scores(tmp_path, monkeypatch):
    monkeypatch.delenv(INSTANCE_CACHE_ENV, raising=False)  # really synthesise each time, never copy
    a = synth_instance(T14, tmp_path / "a", seed=7)
    b = synth_instance(T14, tmp_path / "b", seed=7)
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files_a == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for rel in files_a:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel
    c = synth_instance(T14, tmp_path / "c", seed=8)
    assert (c / "gt/events.json").read_bytes() != (a / "gt/events.json").read_bytes()
    shutil.rmtree(c)


@pytest.mark.slow
def test_selftest_cli_passes_for_t14():
    r = tally("selftest", "--task", T14, "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads(r.stdout)["results"][0]
    assert res["ok"] and res["oracle"] >= 99 and res["nothing"] <= 5
    assert set(res["mutants"]) >= {"late_3_frames", "wrong_sample", "extra_event", "rate_44k1"}
