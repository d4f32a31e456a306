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
#: tasks that OCR several exports per scoring or whose miniature is larger than 1/6 scale (the CBR
#: profile's 170 kb/s is the platform rate for 1/36 of 1080x1920's pixels) take the CRF 23 export only
ONE_EXPORT = ("h264_crf23_aac",)
#: added where the seed does not pin the frame rate (all but T19's 30 fps and T20's 60 fps): the
#: oracle delivered at 29.97 (NTSC rate, frames resampled by ffmpeg's fps filter)
AT_2997 = ("h264_2997_aac",)


def register_video_cases(inst: InstanceWriter, output: str | tuple[str, ...], unedited: str | None, *,
                         other: tuple[str, str] = DUET, profiles: tuple[str, ...] = AV_PROFILES,
                         oracle_output: str | tuple[str, ...] | None = None,
                         keeps: dict[str, tuple[float, str]] | None = None,
                         baselines: tuple[str, ...] = BASELINES,
                         extra: tuple[tuple[str, str], ...] = ()) -> None:
    """`output`: where the solution's export goes (several: a task with one export per version,
    each treated alike); `unedited`: an input (work-dir relative) handed back as every export;
    `oracle_output`: the oracle's file(s) when their names differ from `output`; `keeps`: baseline
    name → (the score it may keep, why) where a share is rightly earned; `baselines`: the ones
    registered (a task leaves out one its scorer cannot yet refuse, and docs/shortform.md says
    which); `extra`: (path, recipe) steps added to every baseline (what a harness exports whatever
    the agent did, e.g. an account's activity feed, as the oracle has it)."""
    keeps = keeps or {}
    outs = (output,) if isinstance(output, str) else output
    srcs = outs if oracle_output is None else ((oracle_output,) if isinstance(oracle_output, str) else oracle_output)

    def bound(name: str) -> dict:
        return {"max_score": keeps[name][0], "why": keeps[name][1]} if name in keeps else {}

    for profile in profiles:
        inst.export_case(f"oracle_{profile}", [(o, f"avexport:{profile}:oracle/{s}") for o, s in zip(outs, srcs, strict=True)])
    recipes = {"black_silent": "avblack:oracle/{src}", "still_with_sound": "avstill:oracle/{src}",
               "unedited_input": f"copy:workdir/{unedited}", "other_task_oracle": f"other_oracle:{other[0]}:{other[1]}"}
    for name in baselines:
        steps = [(o, recipes[name].format(src=s)) for o, s in zip(outs, srcs, strict=True)]
        inst.baseline_case(name, [*steps, *extra], **bound(name))
