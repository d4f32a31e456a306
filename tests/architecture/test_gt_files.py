"""Typed ground-truth files (verifiers/gtfiles.py): strict loading and the documented schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifiers.base import GTError, ScoreContext
from verifiers.gtfiles import DOC, render
from verifiers.tasks.sound.t19_robot_short import RobotEvent, RobotGTFile


def _ctx(tmp_path: Path, robot: object) -> ScoreContext:
    gt = tmp_path / "gt"
    gt.mkdir(parents=True)
    (gt / RobotGTFile.FILE).write_text(json.dumps(robot), encoding="utf-8")
    return ScoreContext(task=None, workdir=tmp_path, gt=gt)  # type: ignore[arg-type]  # gt_typed needs no task


def test_a_gt_file_round_trips_and_a_bad_one_names_its_key(tmp_path: Path) -> None:
    good = RobotGTFile(24.0, [10, 26], [RobotEvent(47, "clank")], [160])
    assert _ctx(tmp_path / "a", good.to_payload()).gt_typed(RobotGTFile) == good
    bad = {k: v for k, v in good.to_payload().items() if k != "cuts"}
    with pytest.raises(GTError, match=r"robot\.json: missing key 'cuts'"):
        _ctx(tmp_path / "b", bad).gt_typed(RobotGTFile)
    wrong = {**good.to_payload(), "events": [{"frame": "47", "category": "clank"}]}
    with pytest.raises(GTError, match=r"events\[0\]\.frame"):
        _ctx(tmp_path / "c", wrong).gt_typed(RobotGTFile)


def test_gt_schema_document_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), "docs/gt.schema.json is stale: python -m verifiers.gtfiles"
