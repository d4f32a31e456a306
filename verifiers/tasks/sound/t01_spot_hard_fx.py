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
from verifiers.synthkit import sfx
from verifiers.tasks.sound.common import RATE_HZ, truncate_file, write_wav
from verifiers.tasks.sound.eventsync import score_event_sync
from verifiers.tasks.sound.t14_cue_sheet import _DECOYS, _EVENTS

OUTPUT = "output/hallway_fx.wav"
LIBRARY = "fixtures/sfx_lib"
FPS = 24


@register
class SpotHardEffects(TaskVerifier):
    task_id = "R06.07.01.03-T01"

    def score(self, ctx: ScoreContext, checks: Checks) -> None:
        score_event_sync(ctx, checks, OUTPUT, LIBRARY)

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        library = {name: gen(rng) for _label, name, gen in _EVENTS}
        library.update({name: gen(rng) for name, gen in _DECOYS})
        for name, data in library.items():
            write_wav(inst.workdir / LIBRARY / name, data)
        frames, frame = [], 24
        for _ in _EVENTS:
            frame += int(rng.integers(17, 27))
            frames.append(frame)
        events = [{"frame": f, "sample": name, "label": label}
                  for f, (label, name, _g) in zip(frames, _EVENTS, strict=True)]
        notes = inst.workdir / "notes"
        notes.mkdir(parents=True, exist_ok=True)
        # Descriptions only, in screen order: the agent has to find the frames in the picture.
        (notes / "events.txt").write_text("".join(f"- {e['label']}\n" for e in events))
        (inst.workdir / "fixtures" / "hallway_scene.ptx").write_bytes(b"PTX placeholder: closed Pro Tools session\n")
        (inst.workdir / "output").mkdir(exist_ok=True)
        inst.write_json(inst.gt / "events.json", {"fps": FPS, "sample_rate_hz": RATE_HZ, "events": events})
        length = int((frames[-1] / FPS + 2.0) * RATE_HZ)

        def render(evts: list[dict]) -> np.ndarray:
            return sfx.place(length, 2, [(round(e["frame"] / FPS * RATE_HZ), library[e["sample"]]) for e in evts])

        write_wav(inst.oracle / OUTPUT, render(events))
        late = [dict(e) for e in events]
        late[0]["frame"] += 2
        write_wav(inst.mutant("door_2_frames_late", ["sync"], "door slam lands 2 frames late") / OUTPUT,
                  render(late))
        wrong = [dict(e) for e in events]
        wrong[6]["sample"] = "glass_clink.wav"
        write_wav(inst.mutant("wrong_sample", ["correct_sound"], "light switch uses the glass clink") / OUTPUT,
                  render(wrong))
        extra = [*events, {"frame": frames[-1] + 22, "sample": "body_fall.wav", "label": "extra"}]
        write_wav(inst.mutant("extra_event", ["render_spec"], "a tenth effect nobody asked for") / OUTPUT,
                  render(extra))
        write_wav(inst.mutant("rate_44k1", ["render_spec"], "bounced at 44.1 kHz") / OUTPUT, render(events),
                  rate=44_100)
        truncate_file(write_wav(inst.mutant("truncated_wav", ["sync", "correct_sound", "render_spec"],
                                            "bounce cut off mid-file") / OUTPUT, render(events)))
