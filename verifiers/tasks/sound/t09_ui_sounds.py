"""R06.07.01.03-T09: sync UI sounds (tap, toggle_on, toggle_off, swipe) to a motion-graphics promo.

Work dir: fixtures/app_promo.mov (30 fps; a placeholder here, the GT holds its length),
fixtures/ui_sfx/<type>[_k].wav. Output: output/ui_sounds.wav.
GT: gt/events.json {fps, sample_rate_hz, video_frames, events[{frame, sample, label, type}]}:
`frame` is where the UI element reacts, `type` one of tap/toggle_on/toggle_off/swipe.

Checks: sync (scaled per event, ±1 frame), correct_sound (type of the identified file), render_spec
(no extra library sounds; render length equals the video within one frame).
"""

from __future__ import annotations

import numpy as np

from verifiers.checks import CheckedTask, Result, check, check_names
from verifiers.curves import Curve
from verifiers.evidence import AuditWrite
from verifiers.gtfiles import gt_field
from verifiers.params import NoParams
from verifiers.paramtypes.sound import UISync
from verifiers.synth import InstanceWriter
from verifiers.synthcases import audio_cases
from verifiers.synthkit import sfx
from verifiers.tasks.sound._shared.event_sync import EventsFile
from verifiers.tasks.sound._shared.placed_events import analysed_render, category_of
from verifiers.tasks.sound._shared.render_files import (
    RATE_HZ,
    truncate_file,
    write_every_sound_everywhere,
    write_wav,
)

TASK = "R06.07.01.03-T09"
N = check_names(TASK)


class UiEvents(EventsFile, task=TASK):
    """gt/events.json of the UI clip: the shared keys and the clip's length."""

    video_frames: int = gt_field(doc="the clip's length")

    def validate(self) -> None:
        super().validate()
        self.expect(self.video_frames > 0, "video_frames", "must be > 0")
OUTPUT = "output/ui_sounds.wav"
LIBRARY = "fixtures/ui_sfx"
FPS = 30
TYPES = ["tap", "toggle_on", "toggle_off", "swipe"]


class UISounds(CheckedTask):
    task_id = TASK

    placed = analysed_render(OUTPUT, LIBRARY, N.sync, one_file_per_event=True)

    @check(N.sync)
    def sync(self, p: UISync, curve: Curve) -> Result:
        a = self.placed
        n, ok = len(a.rows), a.in_sync_count()
        return Result(curve.count(ok, n), {"events": [r.evidence() for r in a.rows]},
                      f"{ok}/{n} UI sounds within ±{p.tolerance_frames:g} frame")

    @check(N.correct_sound)
    def correct_sound(self, p: NoParams, curve: Curve) -> Result:
        a = self.placed
        n = len(a.rows)
        wrong = []
        for r in a.rows:
            want = r.gt.get("type") or category_of(r.gt["sample"], TYPES)
            got = category_of(r.found, TYPES)
            if got != want:
                wrong.append({"i": r.index, "want": want, "got": got})
        return Result(curve.count(n - len(wrong), n), {"wrong": wrong},
                      f"{n - len(wrong)}/{n} events carry the right sound type")

    @check(N.render_spec)
    def render_spec(self, p: NoParams, curve: Curve) -> Result:
        a = self.placed
        video_s = self.ctx.gt_typed(UiEvents).video_frames / a.fps
        length_ok = abs(a.audio.duration_s - video_s) <= 1.0 / a.fps + 1e-9
        extras = [{"onset_s": round(o.time_s, 3), "sample": m.name} for o, m in a.extras]
        # pays in proportion to the UI sounds placed at all (issue 21: silence of the right length kept it)
        placed = sum(r.found is not None for r in a.rows) / max(len(a.rows), 1)
        score = placed * (0.5 * curve.part("length").passes(length_ok)
                          + 0.5 * curve.part("extras").penalty(1.0, len(extras)))
        return Result(score, {"events_placed_share": round(placed, 3), "render_s": round(a.audio.duration_s, 4), "video_s": round(video_s, 4), "extras": extras},
                      f"render {a.audio.duration_s:.3f} s vs video {video_s:.3f} s; {len(extras)} extra sound(s)")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        library = {
            "tap.wav": sfx.click(rng, freq_hz=1400, dur_s=0.08),
            "tap_2.wav": sfx.click(rng, freq_hz=1900, dur_s=0.08),
            "toggle_on.wav": sfx.chirp_tick(rng, 700, 2400),
            "toggle_off.wav": sfx.chirp_tick(rng, 2400, 700),
            "swipe.wav": sfx.whoosh(rng, 0.25, 500, 6000, swell=False),
        }
        for name, data in library.items():
            write_wav(inst.workdir / LIBRARY / name, data)
        (inst.workdir / "fixtures" / "app_promo.mov").write_bytes(b"placeholder: promo video, 30 fps\n")
        (inst.workdir / "output").mkdir(parents=True, exist_ok=True)
        frames, f = [], 15
        for _ in range(8):
            f += int(rng.integers(12, 20))
            frames.append(f)
        picks = ["tap.wav", "toggle_on.wav", "swipe.wav", "tap_2.wav", "toggle_off.wav", "tap.wav",
                 "swipe.wav", "toggle_on.wav"]
        events = [{"frame": fr, "sample": s, "label": category_of(s, TYPES), "type": category_of(s, TYPES)}
                  for fr, s in zip(frames, picks, strict=True)]
        video_frames = frames[-1] + 30
        inst.write_json(inst.gt / "events.json", {"fps": FPS, "sample_rate_hz": RATE_HZ,
                                                  "video_frames": video_frames, "events": events})

        def render(evts: list[dict], frames_total: int = video_frames) -> np.ndarray:
            length = round(frames_total / FPS * RATE_HZ)
            return sfx.place(length, 2, [(round(e["frame"] / FPS * RATE_HZ), library[e["sample"]]) for e in evts])

        write_wav(inst.oracle / OUTPUT, render(events))
        audio_cases(inst, OUTPUT, envelope=False, other=("R06.07.01.03-T02", "output/passby.wav"))
        write_every_sound_everywhere(inst, events, sorted(library), render, OUTPUT)
        late = [dict(e) for e in events]
        late[2]["frame"] += 2
        write_wav(inst.mutant("swipe_2_frames_late", [N.sync], "a swipe 2 frames late") / OUTPUT, render(late))
        # near misses at the seed's ±1 frame: the same swipe 0.75 frame off (inside: lowers nothing) and 1.25
        # (outside); a quarter frame is ~10 ms, ten times the onset detector's refinement
        for d, lowers in ((0.75, []), (1.25, [N.sync])):
            near = [dict(e) for e in events]
            for i, sgn in ((2, 1),):
                near[i]["frame"] += sgn * d
            write_wav(inst.mutant(f"swipe_{d:g}_frames_off".replace(".", "_"), lowers,
                                  f"the swipe {d:g} frame off (seed ±1)") / OUTPUT, render(near))
        wrong = [dict(e) for e in events]
        wrong[1]["sample"] = "toggle_off.wav"
        write_wav(inst.mutant("toggle_off_for_on", [N.correct_sound], "toggle_off used where it switches on")
                  / OUTPUT, render(wrong))
        extra = [*events, {"frame": frames[-1] + 14, "sample": "tap.wav"}]
        write_wav(inst.mutant("extra_tap", [N.render_spec], "a tap with no UI event") / OUTPUT, render(extra))
        write_wav(inst.mutant("render_too_long", [N.render_spec], "render runs 1 s past the video") / OUTPUT,
                  render(events, video_frames + FPS))
        outside = inst.mutant("rendered_by_ffmpeg", list(N),
                              "the render was written by ffmpeg, not the DAW (audit)")
        write_wav(outside / OUTPUT, render(events))
        inst.write_events(outside, [AuditWrite(OUTPUT, process="ffmpeg", exe="/usr/bin/ffmpeg").event()])
        truncate_file(write_wav(inst.mutant("truncated_wav", list(N),
                                            "render cut off") / OUTPUT, render(events), subtype="FLOAT"))
