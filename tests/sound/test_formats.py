"""Scorers accept 44.1/48 kHz and 16/24-bit PCM or 32-bit float where the task leaves the format
free, and name the format in the message where the task fixes it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import soundfile as sf

from verifiers.measure.audio_io import load_audio
from verifiers.scoring import score_task
from verifiers.synth import overlay, synth_instance
from verifiers.tasks.sound._shared.render_files import write_wav

pytestmark = pytest.mark.slow  # six scorings of synthetic instances: ~1 min on a loaded 2-core machine

FREE = [("R06.07.01.03-T04", "output/footsteps.wav"), ("R06.07.01.03-T20", "output/reel4_fx_v2.wav")]


def _reformat(src: Path, dst: Path, rate: int, subtype: str) -> None:
    a = load_audio(src, sample_rate_hz=48_000)
    write_wav(dst, a.samples * 0.99, rate=rate, subtype=subtype)


@pytest.mark.parametrize("task_id, rel", FREE)
@pytest.mark.parametrize("rate, subtype", [(44_100, "PCM_16"), (48_000, "FLOAT")])
def test_free_format_scores_like_the_oracle(tmp_path, task_id, rel, rate, subtype):
    inst = synth_instance(task_id, tmp_path / "inst", seed=5)
    work = tmp_path / "work"
    overlay(inst / "workdir", inst / "oracle", work)
    _reformat(inst / "oracle" / rel, work / rel, rate, subtype)
    assert sf.info(str(work / rel)).samplerate == rate
    rep = score_task(task_id, work, inst / "gt").to_dict()
    assert rep["score"] >= 99, [(c["name"], c["score"], c["message"]) for c in rep["checks"]]


def test_fixed_rate_is_named(tmp_path):
    task_id, rel = "R06.07.01.03-T01", "output/hallway_fx.wav"
    inst = synth_instance(task_id, tmp_path / "inst", seed=5)
    work = tmp_path / "work"
    overlay(inst / "workdir", inst / "oracle", work)
    _reformat(inst / "oracle" / rel, work / rel, 44_100, "FLOAT")
    rep = {c["name"]: c for c in score_task(task_id, work, inst / "gt").to_dict()["checks"]}
    assert rep["sync"]["score"] == 1 and rep["correct_sound"]["score"] == 1
    assert rep["render_spec"]["score"] < 1 and "44100" in rep["render_spec"]["message"]


def test_wrong_channel_count_is_a_clear_failure(tmp_path):
    task_id, rel = "R06.07.01.03-T18", "output/forest_51.wav"
    inst = synth_instance(task_id, tmp_path / "inst", seed=5)
    work = tmp_path / "work"
    overlay(inst / "workdir", inst / "oracle", work)
    a = load_audio(inst / "oracle" / rel)
    write_wav(work / rel, a.samples[:, :2])
    rep = score_task(task_id, work, inst / "gt").to_dict()
    assert rep["score"] == 0 and not rep["errors"]
    assert all("6-channel" in c["message"] and "2 ch" in c["message"] for c in rep["checks"])
    shutil.rmtree(tmp_path / "inst")
