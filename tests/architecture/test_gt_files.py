"""Typed ground-truth files (verifiers/gtfiles.py): strict loading and the documented schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifiers.base import GTError, ScoreContext
from verifiers.gtfiles import DOC, DOC_MD, GT_FILES, GTFile, render, render_md
from verifiers.registry import implemented_ids, import_all
from verifiers.tasks.grading.t12_brand_blue import BrandShotFacts
from verifiers.tasks.grading.t20_eight_notes import Note, NotesFile
from verifiers.tasks.sound.t19_robot_short import RobotEvent, RobotGTFile


def _ctx(tmp_path: Path, robot: object, file: type[GTFile] = RobotGTFile) -> ScoreContext:
    gt = tmp_path / "gt"
    gt.mkdir(parents=True)
    (gt / file.FILE).write_text(json.dumps(robot), encoding="utf-8")
    return ScoreContext(task=None, workdir=tmp_path, gt=gt)  # type: ignore[arg-type]  # gt_typed needs no task


def test_a_gt_file_round_trips_and_a_bad_one_names_its_key(tmp_path: Path) -> None:
    good = RobotGTFile(fps=24.0, footsteps=[10, 26], events=[RobotEvent(47, "clank")], cuts=[160])
    assert _ctx(tmp_path / "a", good.to_payload()).gt_typed(RobotGTFile) == good
    bad = {k: v for k, v in good.to_payload().items() if k != "cuts"}
    with pytest.raises(GTError, match=r"robot\.json: missing key 'cuts'"):
        _ctx(tmp_path / "b", bad).gt_typed(RobotGTFile)
    wrong = {**good.to_payload(), "events": [{"frame": "47", "category": "clank"}]}
    with pytest.raises(GTError, match=r"events\[0\]\.frame"):
        _ctx(tmp_path / "c", wrong).gt_typed(RobotGTFile)


def test_gt_schema_document_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), "docs/gt.schema.json is stale: python -m verifiers.gtfiles"


def test_gt_markdown_document_is_current() -> None:
    assert DOC_MD.read_text(encoding="utf-8") == render_md(), "docs/gt.md is stale: python -m verifiers.gtfiles"


def test_a_unit_carrying_field_reads_the_files_own_key_and_writes_it_back(tmp_path: Path) -> None:
    facts = BrandShotFacts(fps=24.0, shot_frames=[[0, 4], [4, 8], [8, 12], [12, 16], [16, 20], [20, 24]])
    raw = facts.to_json()
    assert "shots" in raw and "shot_frames" not in raw  # the seed's key, not the field's name
    assert _ctx(tmp_path, raw, BrandShotFacts).gt_typed(BrandShotFacts) == facts


def test_a_rule_the_types_cannot_say_is_a_gt_error_naming_file_and_key(tmp_path: Path) -> None:
    five = {"fps": 24.0, "shots": [[0, 4], [4, 8], [8, 12], [12, 16], [16, 20]]}
    with pytest.raises(GTError, match=r"shot\.json\.shots: must list the 6 shots"):
        _ctx(tmp_path / "a", five, BrandShotFacts).gt_typed(BrandShotFacts)
    backwards = {"fps": 24.0, "shots": [[0, 4], [4, 8], [8, 12], [12, 16], [16, 20], [24, 20]]}
    with pytest.raises(GTError, match=r"first < end"):
        _ctx(tmp_path / "b", backwards, BrandShotFacts).gt_typed(BrandShotFacts)


def test_a_list_rooted_gt_file_round_trips_and_names_a_bad_item(tmp_path: Path) -> None:
    notes = NotesFile(notes=[Note(k, [0, 3], "hue", -20.0, -10.0) for k in range(1, 9)])
    raw = notes.to_json()
    assert isinstance(raw, list) and raw[0]["min"] == -20.0
    assert _ctx(tmp_path / "a", raw, NotesFile).gt_typed(NotesFile) == notes
    with pytest.raises(GTError, match=r"notes\[2\]\.max"):
        _ctx(tmp_path / "b", [*raw[:2], {**raw[2], "max": "10"}, *raw[3:]], NotesFile).gt_typed(NotesFile)
    with pytest.raises(GTError, match=r"kind must be one of"):
        _ctx(tmp_path / "c", [*raw[:7], {**raw[7], "kind": "sat"}], NotesFile).gt_typed(NotesFile)


def test_every_gt_file_type_names_a_task_a_file_and_a_known_family() -> None:
    import_all()
    assert len(GT_FILES) >= 6
    for key, cls in GT_FILES.items():
        assert key.rsplit("/", 1)[0] in implemented_ids(), f"{key}: no such task"
        assert key in {f"{t}/{cls.FILE}" for t in cls.TASKS or (cls.TASK,)}
        assert cls.__module__.split(".")[2] in {"grading", "streaming", "sound", "shortform"}, cls


#: task modules that still read a GT JSON by hand (`ctx.gt_json`): others were being edited in
#: parallel when the typed loaders came; placed_events keeps each event's raw row for its evidence.
#: This list may only shrink: a new hand reader fails here (declare a GTFile, read it by ctx.gt_typed).
HAND_READERS = {
    "sound/_shared/placed_events.py",
}


def test_no_new_task_module_reads_ground_truth_json_by_hand() -> None:
    tasks = Path(__file__).resolve().parents[2] / "verifiers" / "tasks"
    readers = {p.relative_to(tasks).as_posix() for p in tasks.rglob("*.py") if "gt_json(" in p.read_text(encoding="utf-8")}
    assert readers <= HAND_READERS, f"read these GT files through a typed GTFile: {sorted(readers - HAND_READERS)}"
