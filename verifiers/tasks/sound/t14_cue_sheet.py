"""R06.07.01.03-T14: place nine library effects at given frames by script, render 48 kHz.

Work dir: fixtures/sfx_lib/*.wav (library), notes/events_frames.csv (label, frame).
Output: output/hallway_fx_cli.wav. GT: gt/events.json (which library file belongs to each event).
"""

from __future__ import annotations

import csv
import io

import numpy as np
import soundfile as sf

from verifiers.base import Checks, ScoreContext, TaskVerifier
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.synthkit import sfx
from verifiers.tasks.sound.eventsync import score_event_sync

OUTPUT = "output/hallway_fx_cli.wav"
LIBRARY = "fixtures/sfx_lib"
FPS = 24
RATE_HZ = 48_000

#: (label, library file, generator) — the nine events of the hallway scene, plus two decoys.
_EVENTS = [
    ("door slam", "door_slam.wav", lambda r: sfx.impact(r, body_hz=70)),
    ("keys dropped", "keys_drop.wav", lambda r: sfx.jingle(r)),
    ("footstep 1", "step_heel_1.wav", lambda r: sfx.footstep(r, "wood")),
    ("footstep 2", "step_heel_2.wav", lambda r: sfx.footstep(r, "wood")),
    ("footstep 3", "step_heel_3.wav", lambda r: sfx.footstep(r, "wood")),
    ("footstep 4", "step_heel_4.wav", lambda r: sfx.footstep(r, "wood")),
    ("light switch", "light_switch.wav", lambda r: sfx.click(r, freq_hz=3200)),
    ("drawer", "drawer_open.wav", lambda r: sfx.slide(r)),
    ("phone set down", "phone_down.wav", lambda r: sfx.thud(r)),
]
_DECOYS = [("glass_clink.wav", lambda r: sfx.click(r, freq_hz=5200, dur_s=0.3)),
           ("body_fall.wav", lambda r: sfx.impact(r, body_hz=45, dur_s=0.8))]


def _write_wav(path, data: np.ndarray, rate: int = RATE_HZ, subtype: str = "PCM_24") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), data, rate, subtype=subtype)


@register
class CueSheetPlacement(TaskVerifier):
    task_id = "R06.07.01.03-T14"

    def score(self, ctx: ScoreContext, checks: Checks) -> None:
        score_event_sync(ctx, checks, OUTPUT, LIBRARY)

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        library = {name: gen(rng) for _label, name, gen in _EVENTS}
        library.update({name: gen(rng) for name, gen in _DECOYS})
        for name, data in library.items():
            _write_wav(inst.workdir / LIBRARY / name, data)
        # Frames 0.7–1.1 s apart so each effect's decay is over before the next one lands.
        frames, frame = [], 24
        for _ in _EVENTS:
            frame += int(rng.integers(17, 27))
            frames.append(frame)
        events = [{"frame": f, "sample": name, "label": label} for f, (label, name, _g) in zip(frames, _EVENTS, strict=True)]
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["event", "frame"])
        w.writerows((e["label"], e["frame"]) for e in events)
        (inst.workdir / "notes").mkdir(parents=True, exist_ok=True)
        (inst.workdir / "notes" / "events_frames.csv").write_text(buf.getvalue())
        (inst.workdir / "output").mkdir(exist_ok=True)
        inst.write_json(inst.gt / "events.json", {"fps": FPS, "sample_rate_hz": RATE_HZ, "events": events})

        length = int((frames[-1] / FPS + 2.0) * RATE_HZ)

        def render(evts: list[dict], rate: int = RATE_HZ) -> np.ndarray:
            items = [(round(e["frame"] / FPS * RATE_HZ), library[e["sample"]]) for e in evts]
            mix = sfx.place(length, 2, items)
            if rate != RATE_HZ:
                from verifiers.measure.audio_io import resample

                mix = resample(mix, RATE_HZ, rate)
            return mix

        _write_wav(inst.oracle / OUTPUT, render(events))

        late = [dict(e) for e in events]
        late[3]["frame"] += 3
        _write_wav(inst.mutant("late_3_frames", ["sync"], "footstep 2 lands 3 frames late") / OUTPUT, render(late))

        wrong = [dict(e) for e in events]
        wrong[0]["sample"] = "body_fall.wav"
        _write_wav(inst.mutant("wrong_sample", ["correct_sound"], "door slam uses the body-fall sample") / OUTPUT,
                   render(wrong))

        extra = [*events, {"frame": frames[-1] + 20, "sample": "glass_clink.wav", "label": "extra"}]
        _write_wav(inst.mutant("extra_event", ["render_spec"], "a tenth effect nobody asked for") / OUTPUT,
                   render(extra))

        _write_wav(inst.mutant("rate_44k1", ["render_spec"], "rendered at 44.1 kHz") / OUTPUT,
                   render(events, 44_100), rate=44_100)

        full = render(events)
        truncated_path = inst.mutant("truncated_wav", ["sync", "correct_sound", "render_spec"],
                                     "render cut off mid-file (header claims more data)") / OUTPUT
        _write_wav(truncated_path, full)
        raw = truncated_path.read_bytes()
        truncated_path.write_bytes(raw[: len(raw) // 2])
