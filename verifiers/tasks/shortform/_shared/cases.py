"""Self-test cases every short-form synth registers (issue 21): the oracle exported the ways phones
and CapCut deliver (H.264 + AAC at CRF 18/23, a platform CBR, 29.97 fps), each ≥ 95; gaming
baselines (black + silence, the oracle's first frame held with its sound, an unedited input
handed back, another task's oracle), each ≤ 5 unless a share is declared."""

from __future__ import annotations

from verifiers.synth import InstanceWriter

AV_PROFILES = ("h264_crf18_aac", "h264_crf23_aac", "h264_cbr_aac", "h264_2997_aac")
DUET = ("R06.04.01.04-T17", "device/Photos/duet.mp4")  # another task's oracle, cheap to synthesise
REACTION = ("R06.04.01.04-T16", "out/reaction.mp4")
BASELINES = ("black_silent", "still_with_sound", "unedited_input", "other_task_oracle")
#: the OCR-heavy tasks (their every scoring OCRs frames: 2-5 s CPU each) take two exports, a
#: CapCut-like CRF 23 and the platform CBR, and three baselines
CHEAP_EXPORTS = ("h264_crf23_aac", "h264_cbr_aac")
CHEAP_BASELINES = ("black_silent", "still_with_sound", "unedited_input")


def register_video_cases(inst: InstanceWriter, output: str, unedited: str, *,
                         other: tuple[str, str] = DUET, profiles: tuple[str, ...] = AV_PROFILES,
                         oracle_output: str | None = None, keeps: dict[str, tuple[float, str]] | None = None,
                         baselines: tuple[str, ...] = BASELINES) -> None:
    """`output`: where the solution's export goes; `unedited`: an input (work-dir relative) handed
    back as the export; `oracle_output`: the oracle's file when its name differs from `output`;
    `keeps`: baseline name → (the score it may keep, why) where a share is rightly earned;
    `baselines`: the ones registered (a task leaves out one its scorer cannot yet refuse, and
    docs/shortform.md says which)."""
    keeps = keeps or {}

    def bound(name: str) -> dict:
        return {"max_score": keeps[name][0], "why": keeps[name][1]} if name in keeps else {}

    src = f"oracle/{oracle_output or output}"
    for profile in profiles:
        inst.export_case(f"oracle_{profile}", [(output, f"avexport:{profile}:{src}")])
    recipes = {"black_silent": f"avblack:{src}", "still_with_sound": f"avstill:{src}",
               "unedited_input": f"copy:workdir/{unedited}", "other_task_oracle": f"other_oracle:{other[0]}:{other[1]}"}
    for name in baselines:
        inst.baseline_case(name, [(output, recipes[name])], **bound(name))
