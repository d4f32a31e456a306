"""Broken renders are the agent's failure with a one-line reason, never a verifier crash."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from verifiers.scoring import score_task
from verifiers.synth import overlay, synth_instance
from verifiers.synthkit import grading as g

TASK = "R06.04.02.02-T05"
OUTPUT = "out/office_wall.mov"


@pytest.fixture(scope="module")
def inst(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synth_instance(TASK, tmp_path_factory.mktemp("g") / TASK, seed=3)


def _score(inst: Path, tmp: Path, mutate) -> dict:
    work = tmp / "work"
    overlay(inst / "workdir", inst / "oracle", work)
    mutate(work / OUTPUT)
    return score_task(TASK, work, inst / "gt").to_dict()


def _assert_failed_cleanly(rep: dict, needle: str) -> None:
    assert rep["score"] == 0
    for c in rep["checks"]:
        assert c["status"] == "fail", c
        assert needle in c["message"], c["message"]
        assert "crashed" not in c["message"]


def test_truncated_render(inst: Path, tmp_path: Path) -> None:
    def cut(p: Path) -> None:
        p.write_bytes(p.read_bytes()[: p.stat().st_size // 3])

    _assert_failed_cleanly(_score(inst, tmp_path, cut), "office_wall.mov")


def test_garbage_render(inst: Path, tmp_path: Path) -> None:
    _assert_failed_cleanly(_score(inst, tmp_path, lambda p: p.write_bytes(b"not a movie" * 100)), "unusable")


def test_render_with_wrong_frame_count(inst: Path, tmp_path: Path) -> None:
    def shorten(p: Path) -> None:
        from verifiers.measure.frames import iter_frames

        frames = np.stack([f.rgb for f in iter_frames(p)])[:-5]
        p.unlink()
        g.write_video(p, frames)

    _assert_failed_cleanly(_score(inst, tmp_path, shorten), "frames")


def test_missing_gt_is_could_not_judge(inst: Path, tmp_path: Path) -> None:
    gt = tmp_path / "gt"
    shutil.copytree(inst / "gt", gt)
    (gt / "masks.npz").unlink()
    work = tmp_path / "work"
    overlay(inst / "workdir", inst / "oracle", work)
    rep = score_task(TASK, work, gt).to_dict()
    assert all(c["status"] == "error" and "masks.npz" in c["message"] for c in rep["checks"])
