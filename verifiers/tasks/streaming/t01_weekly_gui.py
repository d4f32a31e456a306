"""R06.12.01.01-T01: build Starting Soon, Live and BRB in the GUI to a layout spec.

Work dir: bg/starting.png, bg/brb.png, overlay/frame.png; output obs-studio/basic/scenes/
Weekly_Stream.json (+ the active profile for the canvas). GT: gt/layout.json (native sizes).
The measurements are shared with T17 (weekly_stream); curves and params are the catalog's.
"""

from __future__ import annotations

import numpy as np

from verifiers.checks import Result, check, check_names
from verifiers.curves import Curve
from verifiers.params import NoParams
from verifiers.paramtypes.streaming import CamGeometry, ScenesSources, Transition
from verifiers.synth import InstanceWriter
from verifiers.tasks.streaming._shared import weekly_stream as W
from verifiers.tasks.streaming._shared.obs_task import ObsTask

TASK = "R06.12.01.01-T01"
N = check_names(TASK)


class WeeklyStreamGui(ObsTask):
    task_id = TASK
    collection_name = W.COLLECTION

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
        W.write_weekly_instance(inst, W.weekly_mutants(
            geometry=N.cam_geometry, order_mute=N.z_order_mute, scenes=N.scenes_sources, transition=N.transition,
            cam_how="dragged", frame_how="sits under", fade_how="Fade left at 500 ms"), list(N))
