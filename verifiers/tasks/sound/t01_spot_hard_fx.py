"""R06.07.01.03-T01: spot nine hard effects to picture sync points (Pro Tools/Fairlight, by eye).

Work dir: fixtures/hallway_scene.ptx (closed format; a placeholder here), fixtures/sfx_lib/*.wav,
notes/events.txt (descriptions only, no frames). Output: output/hallway_fx.wav.
GT: gt/events.json {fps, sample_rate_hz, events[frame, sample, label]} — the hidden contact frames.

T14 is the control pair: same library, same checks, so the scoring is eventsync's, unchanged. The
.ptx session edit list and the timing-pattern review are unavailable (see the catalog's `emulated`).
"""

from __future__ import annotations

import numpy as np

from verifiers.base import Checks, ScoreContext, TaskVerifier
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.tasks.sound._shared.event_sync import score_event_sync
from verifiers.tasks.sound._shared.hallway_scene import LIBRARY, write_scene, write_solutions

OUTPUT = "output/hallway_fx.wav"


@register
class SpotHardEffects(TaskVerifier):
    task_id = "R06.07.01.03-T01"

    def score(self, ctx: ScoreContext, checks: Checks) -> None:
        score_event_sync(ctx, checks, OUTPUT, LIBRARY)

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        scene = write_scene(inst, rng)
        notes = inst.workdir / "notes"
        notes.mkdir(parents=True, exist_ok=True)
        # Descriptions only, in screen order: the agent has to find the frames in the picture.
        (notes / "events.txt").write_text("".join(f"- {e['label']}\n" for e in scene.events))
        (inst.workdir / "fixtures" / "hallway_scene.ptx").write_bytes(b"PTX placeholder: closed Pro Tools session\n")
        write_solutions(inst, scene, OUTPUT, late_index=0, late_frames=2, wrong_index=6,
                        wrong_sample="glass_clink.wav", extra_sample="body_fall.wav")
