"""Bad exports fail cleanly; OCR reads burned captions; run-on OCR words re-split honestly."""

from __future__ import annotations

import numpy as np

from verifiers.measure.ocr import error_rate, frame_text, normalise, resplit
from verifiers.scoring import score_task
from verifiers.synth import synth_instance
from verifiers.synthkit.shortform_video import burn_text, clip_frames


def test_garbage_export_fails_every_check_with_a_message(tmp_path):
    inst = synth_instance("R06.04.01.04-T02", tmp_path / "t02", seed=1)
    out = inst / "workdir/device/DCIM/recap.mp4"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(np.random.default_rng(0).integers(0, 255, 4000, dtype=np.uint8)))
    rep = score_task("R06.04.01.04-T02", inst / "workdir", inst / "gt").to_dict()
    assert rep["score"] == 0
    assert all(c["status"] == "fail" and "recap.mp4" in c["message"] for c in rep["checks"])


def test_truncated_export_is_the_agents_failure_not_a_crash(tmp_path):
    inst = synth_instance("R06.04.01.04-T02", tmp_path / "t02", seed=2)
    good = (inst / "oracle/device/DCIM/recap.mp4").read_bytes()
    out = inst / "workdir/device/DCIM/recap.mp4"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(good[: len(good) // 3])
    rep = score_task("R06.04.01.04-T02", inst / "workdir", inst / "gt").to_dict()
    assert not any("crashed" in c["message"] for c in rep["checks"])
    assert rep["score"] < 60


def test_ocr_reads_a_burned_caption_and_not_a_blank_frame():
    frame = clip_frames(3, 1, 180, 320)[0]
    assert normalise("Summit day") in normalise(frame_text(burn_text(frame, "Summit day", y_px=200, scale=0.55,
                                                                      thickness=1)))
    assert normalise(frame_text(np.full((320, 180, 3), 90, np.uint8))) == ""


def test_resplit_recovers_words_but_keeps_misreadings_wrong():
    vocab = {"stir", "it", "gently"}
    assert resplit(["stiritgently"], vocab) == ["stir", "it", "gently"]
    assert resplit(["stirxtgently"], vocab) == ["stirxtgently"]
    assert error_rate(resplit(["stirxtgently"], vocab), ["stir", "it", "gently"]) == 1.0


def test_template_checks_are_errors_without_the_harness_listing(tmp_path):
    """T12: a perfect preview but no exported template list: listing checks cannot be judged."""
    import shutil

    from verifiers.synth import overlay

    inst = synth_instance("R06.04.01.04-T12", tmp_path / "t12", seed=0)
    work = tmp_path / "work"
    overlay(inst / "workdir", inst / "oracle", work)
    shutil.rmtree(work / "state")
    rep = {c["name"]: c for c in score_task("R06.04.01.04-T12", work, inst / "gt").to_dict()["checks"]}
    assert all(c["status"] == "error" and "not available" in c["message"] for c in rep.values())
