"""R06.12.01.01-T01: build Starting Soon, Live and BRB in the GUI to a layout spec.

Work dir: bg/starting.png, bg/brb.png, overlay/frame.png; output obs-studio/basic/scenes/
Weekly_Stream.json (+ the active profile for the canvas). GT: gt/layout.json (native sizes).
"""

from __future__ import annotations

import copy

import numpy as np

from verifiers.base import Checks, ScoreContext, TaskVerifier
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.synthkit import obs_synth as O
from verifiers.tasks.streaming import weekly_stream as W
from verifiers.tasks.streaming.common import collection_rel, load_named_collection


@register
class WeeklyStreamGui(TaskVerifier):
    task_id = "R06.12.01.01-T01"

    def score(self, ctx: ScoreContext, checks: Checks) -> None:
        coll = load_named_collection(ctx, W.COLLECTION)
        s, ev, msg = W.scenes_sources(ctx, coll, checks.params("scenes_sources")["canvas_px"])
        checks.set("scenes_sources", s, ev, msg)
        p = checks.params("cam_geometry")
        checks.set("cam_geometry", *W.cam_geometry(ctx, coll, p["bounds_px"], p["pos_px"], p["tolerance_px"]))
        top, m1 = W.frame_topmost(coll)
        muted, m2 = W.brb_mic_muted(coll)
        checks.set("z_order_mute", (top + muted) / 2, {"frame_topmost": top, "brb_mic_muted": muted},
                   "; ".join(m for m in (m1, m2) if m))
        p = checks.params("transition")
        checks.set("transition", *W.transition(coll, p["transition"], p["duration_ms"]))

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        write_weekly_instance(inst, {
            "cam_4px_off": (["cam_geometry"], "Cam dragged 4 px right of its spot", _cam_off),
            "frame_under_cam": (["z_order_mute"], "overlay/frame.png sits under the webcam", _frame_under),
            "brb_mic_live": (["z_order_mute"], "BRB mic left unmuted", _mic_live),
            "fade_500ms": (["transition"], "Fade left at 500 ms", _fade_500),
            "no_countdown": (["scenes_sources"], "Starting Soon has no countdown text", _no_countdown),
            "canvas_720p": (["scenes_sources"], "canvas left at 1280x720", None),
            "cam_scaled_not_bounded": ([], "Cam sized by scale 0.375 instead of bounds: same rectangle",
                                       _cam_scaled),
        }, ["scenes_sources", "cam_geometry", "z_order_mute", "transition"])


def _cam_off(c: dict) -> None:
    O.find_item(c, "Live", W.CAM)["pos"]["x"] += 4


def _frame_under(c: dict) -> None:
    items = O.find_source(c, "Live")["settings"]["items"]
    items[1], items[2] = items[2], items[1]


def _mic_live(c: dict) -> None:
    O.find_source(c, "Mic")["muted"] = False


def _fade_500(c: dict) -> None:
    c["transition_duration"] = 500


def _no_countdown(c: dict) -> None:
    c["sources"] = [s for s in c["sources"] if s["name"] != "Countdown"]
    items = O.find_source(c, "Starting Soon")["settings"]["items"]
    items[:] = [it for it in items if it["name"] != "Countdown"]


def _cam_scaled(c: dict) -> None:
    it = O.find_item(c, "Live", W.CAM)
    it.update(bounds_type=0, bounds={"x": 0.0, "y": 0.0}, scale={"x": 0.375, "y": 0.375})


def write_weekly_instance(inst: InstanceWriter, mutants: dict, all_checks: list[str]) -> None:
    """Inputs, GT, oracle and mutants for a Weekly Stream task (T01 and T17 share them)."""
    W.write_inputs(inst.workdir)
    W.write_gt(inst.gt)
    good = W.build()
    W.write_solution(inst.oracle, good)
    for name, (lowers, why, edit) in mutants.items():
        folder = inst.mutant(name, lowers, why)
        c = copy.deepcopy(good)
        if edit is not None:
            edit(c)
        W.write_solution(folder, c, (1280, 720) if name == "canvas_720p" else (1920, 1080))
    bad = inst.mutant("truncated_collection", all_checks, "collection file cut off mid-write")
    W.write_solution(bad, good)
    path = bad / collection_rel(W.COLLECTION)
    path.write_bytes(path.read_bytes()[:500])
