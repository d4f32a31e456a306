"""R06.07.01.03-T14: place nine library effects at given frames by script, render 48 kHz.

Work dir: fixtures/sfx_lib/*.wav (library), notes/events_frames.csv (label, frame).
Output: output/hallway_fx_cli.wav. GT: gt/events.json (which library file belongs to each event).
The scene, library and mutants are T01's (verifiers.tasks.sound._shared.hallway_scene): this is its control pair.
"""

from __future__ import annotations

import csv
import io

import numpy as np

from verifiers.checks import Result, check, check_names
from verifiers.curves import Curve
from verifiers.paramtypes.sound import RenderRate
from verifiers.synth import InstanceWriter
from verifiers.tasks.sound._shared import event_sync as E
from verifiers.tasks.sound._shared.hallway_scene import HallwayPlacement, write_scene, write_solutions

TASK = "R06.07.01.03-T14"
N = check_names(TASK)
OUTPUT = "output/hallway_fx_cli.wav"


class CueSheetPlacement(HallwayPlacement):
    task_id = TASK
    output = OUTPUT

    @check(N.render_spec)
    def render_spec(self, p: RenderRate, curve: Curve) -> Result:
        return Result(*E.spec_result(self.placed, p.sample_rate_hz, curve))

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        scene = write_scene(inst, rng)
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["event", "frame"])
        writer.writerows((e["label"], e["frame"]) for e in scene.events)
        (inst.workdir / "notes").mkdir(parents=True, exist_ok=True)
        (inst.workdir / "notes" / "events_frames.csv").write_text(buf.getvalue())
        write_solutions(inst, scene, OUTPUT, late_index=3, late_frames=3, wrong_index=0,
                        wrong_sample="body_fall.wav", extra_sample="glass_clink.wav", n=N)
