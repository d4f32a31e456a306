"""Self-test cases every grading instance carries (issue 21): realistic exports of the oracle and
gaming baselines (unedited, black, still frame, another task's oracle)."""

from __future__ import annotations

from typing import Any

from verifiers.tasks.grading._shared.shot import SOURCE

#: another grading task whose oracle is the "someone else's work" baseline: the next video task
GRADING_IDS = [f"R06.04.02.02-T{k:02d}" for k in range(1, 21)]
EXR_TASKS = {"R06.04.02.02-T14"}


def other_task(task_id: str) -> str:
    video = [t for t in GRADING_IDS if t not in EXR_TASKS]
    i = video.index(task_id) if task_id in video else 0
    return video[(i + 1) % len(video)]


def register_cases(inst: Any, task_id: str, output: str) -> None:
    """Exports of the oracle (H.264 CRF 18 and 23; ProRes 422 for .mov renders, which Resolve, Final
    Cut and the harness write) that must score ≥ 95, and gaming baselines that must score ≤ 5: the
    unedited source as it is and exported, black of the right length, its first frame repeated,
    another grading task's oracle."""
    from verifiers.registry import verifier_class

    if not output:
        return
    src = "gt/" + SOURCE
    inst.export_case("h264_crf18", [(output, f"export:h264_crf18:oracle/{output}")], why="oracle as an H.264 delivery")
    inst.export_case("h264_crf23", [(output, f"export:h264_crf23:oracle/{output}")], why="oracle as an H.264 web export")
    if output.endswith(".mov"):
        inst.export_case("prores422", [(output, f"export:prores422:oracle/{output}")], why="oracle as ProRes 422")
    inst.baseline_case("unedited_copy", [(output, f"copy:{src}")], why="the source handed back")
    inst.baseline_case("unedited_h264", [(output, f"export:h264_crf18:{src}")], why="the source exported, no grade")
    inst.baseline_case("black", [(output, f"black:{src}")], why="black frames, right size and length")
    inst.baseline_case("still_frame", [(output, f"still:{src}")], why="the first frame repeated")
    other = other_task(task_id)
    other_out = getattr(verifier_class(other), "output", "")
    if other_out:
        inst.baseline_case("other_task_oracle", [(output, f"other_oracle:{other}:{other_out}")],
                           why=f"{other}'s correct render handed in instead")
