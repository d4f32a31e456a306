"""R06.07.01.03-T01: spot nine hard effects to picture sync points (Pro Tools/Fairlight, by eye).

Work dir: fixtures/hallway_scene.ptx (closed format; a placeholder here), fixtures/sfx_lib/*.wav,
notes/events.txt (descriptions only, no frames). Output: output/hallway_fx.wav.
GT: gt/events.json {fps, sample_rate_hz, events[frame, sample, label]} — the hidden contact frames.

T14 is the control pair: same library, same checks, the same measurement (_shared/event_sync). The
.ptx session edit list and the timing-pattern review are unavailable (see the catalog's `emulated`).
"""

from __future__ import annotations

import numpy as np

from verifiers.checks import Result, check, check_names
from verifiers.curves import Curve
from verifiers.params import NoParams
from verifiers.synth import InstanceWriter
from verifiers.tasks.sound._shared import event_sync as E
from verifiers.tasks.sound._shared.hallway_scene import HallwayPlacement, write_scene, write_solutions

TASK = "R06.07.01.03-T01"
N = check_names(TASK)
OUTPUT = "output/hallway_fx.wav"


class SpotHardEffects(HallwayPlacement):
    task_id = TASK
    output = OUTPUT

    @check(N.render_spec)
    def render_spec(self, p: NoParams, curve: Curve) -> Result:
        return Result(*E.spec_result(self.placed, None, curve))

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        scene = write_scene(inst, rng)
        notes = inst.workdir / "notes"
        notes.mkdir(parents=True, exist_ok=True)
        # Descriptions only, in screen order: the agent has to find the frames in the picture.
        (notes / "events.txt").write_text("".join(f"- {e['label']}\n" for e in scene.events))
        (inst.workdir / "fixtures" / "hallway_scene.ptx").write_bytes(b"PTX placeholder: closed Pro Tools session\n")
        write_solutions(inst, scene, OUTPUT, late_index=0, late_frames=2, wrong_index=6,
                        wrong_sample="glass_clink.wav", extra_sample="body_fall.wav", n=N)
