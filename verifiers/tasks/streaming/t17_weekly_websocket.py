"""R06.12.01.01-T17: the Weekly Stream scenes built by a script over obs-websocket (control of T01).

Same collection checks as T01, grouped as the seed groups them: scenes/sources (with z-order and
the BRB mic mute), the Cam transform, the Fade 300 ms transition. The seed's gate (websocket log
shows the script's requests, no UI interaction) is recorded in the catalog's `required`.
"""

from __future__ import annotations

import numpy as np

from verifiers.base import Checks, ScoreContext, TaskVerifier
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.tasks.streaming import weekly_stream as W
from verifiers.tasks.streaming.common import load_named_collection
from verifiers.tasks.streaming.t01_weekly_gui import (
    _cam_off,
    _cam_scaled,
    _fade_500,
    _frame_under,
    _mic_live,
    _no_countdown,
    write_weekly_instance,
)


@register
class WeeklyStreamWebsocket(TaskVerifier):
    task_id = "R06.12.01.01-T17"

    def score(self, ctx: ScoreContext, checks: Checks) -> None:
        coll = load_named_collection(ctx, W.COLLECTION)
        s, ev, msg = W.scenes_sources(ctx, coll, checks.params("scenes_sources")["canvas_px"])
        top, m1 = W.frame_topmost(coll)
        muted, m2 = W.brb_mic_muted(coll)
        n = ev["of"] + 2
        score = (s * ev["of"] + top + muted) / n
        ev.update(frame_topmost=top, brb_mic_muted=muted)
        checks.set("scenes_sources", score, ev, "; ".join(m for m in (msg, m1, m2) if m))
        p = checks.params("transforms")
        checks.set("transforms", *W.cam_geometry(ctx, coll, p["bounds_px"], p["pos_px"], p["tolerance_px"]))
        p = checks.params("transition")
        checks.set("transition", *W.transition(coll, p["transition"], p["duration_ms"]))

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        write_weekly_instance(inst, {
            "cam_4px_off": (["transforms"], "Cam placed 4 px right of its spot", _cam_off),
            "frame_under_cam": (["scenes_sources"], "overlay/frame.png created before the webcam", _frame_under),
            "brb_mic_live": (["scenes_sources"], "BRB mic left unmuted", _mic_live),
            "fade_500ms": (["transition"], "SetCurrentSceneTransitionDuration 500", _fade_500),
            "no_countdown": (["scenes_sources"], "Starting Soon has no countdown text", _no_countdown),
            "canvas_720p": (["scenes_sources"], "canvas left at 1280x720", None),
            "cam_scaled_not_bounded": ([], "Cam sized by scale 0.375 instead of bounds: same rectangle",
                                       _cam_scaled),
        }, ["scenes_sources", "transforms", "transition"])
