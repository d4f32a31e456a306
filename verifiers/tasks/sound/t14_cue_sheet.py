"""R06.07.01.03-T14: place nine library effects at given frames by script, render 48 kHz.

Work dir: fixtures/sfx_lib/*.wav (library), notes/events_frames.csv (label, frame).
Output: output/hallway_fx_cli.wav. GT: gt/events.json (which library file belongs to each event).
The scene, library and mutants are T01's (verifiers.tasks.sound._shared.hallway_scene): this is its control pair.
"""

from __future__ import annotations

import csv
import io

import numpy as np

from verifiers.base import Checks, ScoreContext, TaskVerifier
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.tasks.sound._shared.event_sync import score_event_sync
from verifiers.tasks.sound._shared.hallway_scene import LIBRARY, write_scene, write_solutions

OUTPUT = "output/hallway_fx_cli.wav"


@register
class CueSheetPlacement(TaskVerifier):
    task_id = "R06.07.01.03-T14"

    def score(self, ctx: ScoreContext, checks: Checks) -> None:
        score_event_sync(ctx, checks, OUTPUT, LIBRARY)

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        scene = write_scene(inst, rng)
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["event", "frame"])
        writer.writerows((e["label"], e["frame"]) for e in scene.events)
        (inst.workdir / "notes").mkdir(parents=True, exist_ok=True)
        (inst.workdir / "notes" / "events_frames.csv").write_text(buf.getvalue())
        write_solutions(inst, scene, OUTPUT, late_index=3, late_frames=3, wrong_index=0,
                        wrong_sample="body_fall.wav", extra_sample="glass_clink.wav")
