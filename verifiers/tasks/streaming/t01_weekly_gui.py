"""R06.12.01.01-T01: build Starting Soon, Live and BRB in the GUI to a layout spec.

Work dir: bg/starting.png, bg/brb.png, overlay/frame.png; output obs-studio/basic/scenes/
Weekly_Stream.json (+ the active profile for the canvas). GT: gt/layout.json (native sizes).
The measurements are shared with T17 (weekly_stream); curves and params are the catalog's.
"""

from __future__ import annotations

import numpy as np

from verifiers.apps.obs.collection import Collection
from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.params import NoParams
from verifiers.paramtypes.streaming import CamGeometry, ScenesSources, Transition
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.tasks.streaming._shared import weekly_stream as W
from verifiers.tasks.streaming._shared.obs_config import load_named_collection

TASK = "R06.12.01.01-T01"
N = check_names(TASK)


@register
class WeeklyStreamGui(CheckedTask):
    task_id = TASK

    @provides
    def coll(self) -> Collection:
        return load_named_collection(self.ctx, W.COLLECTION)

    @check(N.scenes_sources)
    def scenes_sources(self, p: ScenesSources, curve: Curve) -> Result:
        return Result(*W.scenes_sources(self.ctx, self.coll, p.canvas_px, curve))

    @check(N.cam_geometry)
    def cam_geometry(self, p: CamGeometry, curve: Curve) -> Result:
        return Result(*W.cam_geometry(self.ctx, self.coll, p.bounds_px, p.pos_px, p.tolerance_px, curve))

    @check(N.z_order_mute)
    def z_order_mute(self, p: NoParams, curve: Curve) -> Result:
        top, m1 = W.frame_topmost(self.coll)
        muted, m2 = W.brb_mic_muted(self.coll)
        return Result(curve.count(top + muted, 2), {"frame_topmost": top, "brb_mic_muted": muted},
                      "; ".join(m for m in (m1, m2) if m))

    @check(N.transition)
    def transition(self, p: Transition, curve: Curve) -> Result:
        return Result(*W.transition(self.coll, p.transition, p.duration_ms, curve))

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        W.write_weekly_instance(inst, {
            "cam_4px_off": ([N.cam_geometry], "Cam dragged 4 px right of its spot", W.cam_off),
            "cam_2px_off_inside": ([], "Cam 2 px right: on the seed's +-2 px pass line, full marks", W.cam_off_by(2)),
            "cam_3px_off_outside": ([N.cam_geometry], "Cam 3 px right: past the +-2 px pass line, the whole share lost",
                                    W.cam_off_by(3)),
            "frame_under_cam": ([N.z_order_mute], "overlay/frame.png sits under the webcam", W.frame_under),
            "brb_mic_live": ([N.z_order_mute], "BRB mic left unmuted", W.mic_live),
            "fade_500ms": ([N.transition], "Fade left at 500 ms", W.fade_500),
            "no_countdown": ([N.scenes_sources, N.transition], "Starting Soon has no countdown text (the default Fade is "
                             "paid for 6 of the 7 scene-content items)", W.no_countdown),
            "canvas_720p": ([N.scenes_sources], "canvas left at 1280x720", None),
            "cam_scaled_not_bounded": ([], "Cam sized by scale 0.375 instead of bounds: same rectangle",
                                       W.cam_scaled),
        }, list(N))
