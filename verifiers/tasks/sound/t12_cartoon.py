"""R06.07.01.03-T12: mickey-mouse a cartoon: actions (boing, slip, zip, pop) plus a slide whistle.

Work dir: fixtures/cartoon_30s.mov (24 fps; placeholder), fixtures/toon_sfx/<category>_k.wav and
slide_whistle.wav (a steady whistle the agent pitches). Output: output/cartoon_fx.wav.
GT: gt/events.json {fps, sample_rate_hz, events[{frame, sample, label, category}],
fall: {start_frame, end_frame, heights: [[frame, height], ...]}}.

Checks: action_sync (actions within ±1 frame AND the right category; >= 27 of 30, scaled),
categories (share of actions whose identified file has the GT category), pitch_follows_fall
(Pearson r between the whistle's log-f0 per video frame, YIN on the mix, and the GT height, >= 0.8).
The seed's "no clipping" has no share; the sample peak is reported in evidence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.evidence.base import Payload
from verifiers.gtfiles import gt_field
from verifiers.measure.yin import yin
from verifiers.params import NoParams
from verifiers.paramtypes.sound import PitchFollowsFall, PlacedSync
from verifiers.synth import InstanceWriter
from verifiers.synthcases import audio_cases
from verifiers.synthkit import sfx
from verifiers.tasks.sound._shared.event_sync import ANALYSIS_RATE_HZ, EventsFile
from verifiers.tasks.sound._shared.placed_events import (
    EventRow,
    analysed_render,
    category_of,
    k_of_n_for,
    required_of,
)
from verifiers.tasks.sound._shared.render_files import (
    RATE_HZ,
    truncate_file,
    write_every_sound_everywhere,
    write_sync_mutants,
    write_wav,
)

TASK = "R06.07.01.03-T12"
N = check_names(TASK)


@dataclass(frozen=True)
class Fall(Payload):
    """The character's fall, frame by frame."""

    start_frame: int = gt_field(doc="first frame of the fall")
    end_frame: int = gt_field(doc="last frame of the fall")
    heights: list[list[float]] = gt_field(doc="[frame, height] pairs; height 1 at the top, 0 on the ground")


class CartoonEvents(EventsFile, task=TASK):
    """gt/events.json of the cartoon: the shared keys and the fall the whistle must follow."""

    fall: Fall = gt_field(doc="the fall")

    def validate(self) -> None:
        super().validate()
        self.expect(all(len(p) == 2 for p in self.fall.heights) and bool(self.fall.heights),
                    "fall", "must list [frame, height] pairs")
OUTPUT = "output/cartoon_fx.wav"
LIBRARY = "fixtures/toon_sfx"
FPS = 24
CATEGORIES = ["boing", "slip", "zip", "pop"]
WHISTLE_RANGE_HZ = (250.0, 3000.0)
MIN_VOICED_SHARE = 0.5


def pitch_per_frame(mix: np.ndarray, fps: float, frames: list[int]) -> dict[int, float]:
    """Median YIN f0 of each listed video frame (voiced frames only)."""
    lo = max(0, round(min(frames) / fps * ANALYSIS_RATE_HZ))
    hi = min(len(mix), round((max(frames) + 1) / fps * ANALYSIS_RATE_HZ))
    if hi - lo < 4096:
        return {}
    tr = yin(mix[lo:hi], ANALYSIS_RATE_HZ, fmin_hz=WHISTLE_RANGE_HZ[0], fmax_hz=WHISTLE_RANGE_HZ[1])
    fr = np.floor((tr.times_s + lo / ANALYSIS_RATE_HZ) * fps).astype(int)
    out = {}
    for f in frames:
        sel = (fr == f) & tr.voiced()
        if sel.sum():
            out[f] = float(np.median(tr.f0_hz[sel]))
    return out


def fall_heights(gt: CartoonEvents) -> dict[int, float]:
    """GT height of the falling character per video frame."""
    return {int(f): h for f, h in gt.fall.heights}


class CartoonFX(CheckedTask):
    task_id = TASK

    placed = analysed_render(OUTPUT, LIBRARY, N.action_sync)

    @provides
    def heights(self) -> dict[int, float]:
        return fall_heights(self.ctx.gt_typed(CartoonEvents))

    @provides
    def rows(self) -> list[tuple[EventRow, str | None, str | None]]:
        """(row, wanted category, found category) per GT action."""
        self.heights  # noqa: B018  a GT without a usable fall cannot be judged at all, as before
        return [(r, r.gt.get("category") or category_of(r.gt["sample"], CATEGORIES), category_of(r.found, CATEGORIES))
                for r in self.placed.rows]

    @check(N.action_sync)
    def action_sync(self, p: PlacedSync, curve: Curve) -> Result:
        rows, n = self.rows, len(self.rows)
        good = sum(r.in_sync and want == got for r, want, got in rows)
        need = required_of(n, k=curve.k, of_count=p.events_count, min_pct=p.min_in_sync_pct)
        peak = float(np.max(np.abs(self.placed.audio.samples)))
        return Result(k_of_n_for(curve, need).count(good, n),
                      {"actions": [r.evidence() | {"category": want, "found_category": got} for r, want, got in rows],
                       "required": need, "sample_peak": round(peak, 4)},
                      f"{good}/{n} actions in sync with the right category (need {need})")

    @check(N.categories)
    def categories(self, p: NoParams, curve: Curve) -> Result:
        rows, n = self.rows, len(self.rows)
        right = sum(want == got for _r, want, got in rows)
        return Result(curve.count(right, n), {"wrong": [{"i": r.index, "want": w, "got": g} for r, w, g in rows if w != g]},
                      f"{right}/{n} actions in the right category")

    @check(N.pitch_follows_fall)
    def pitch_follows_fall(self, p: PitchFollowsFall, curve: Curve) -> Result:
        heights = self.heights
        frames = sorted(heights)
        f0 = pitch_per_frame(self.placed.mix, self.placed.fps, frames)
        need_r = p.min_correlation_ratio
        voiced = [f for f in frames if f in f0]
        if len(voiced) < MIN_VOICED_SHARE * len(frames) or len(voiced) < 5:
            return Result.fail(f"no whistle pitch during the fall ({len(voiced)}/{len(frames)} frames pitched)",
                               {"voiced_frames": len(voiced)})
        lf0 = np.log2([f0[f] for f in voiced])
        h = np.array([heights[f] for f in voiced])
        r = float(np.corrcoef(lf0, h)[0, 1]) if np.std(lf0) > 1e-9 and np.std(h) > 1e-9 else 0.0
        # max(nan, 0.0) stays nan (scored 0), as r / need did
        return Result(curve.score(max(need_r - r, 0.0)),
                      {"pearson_r": round(r, 3), "voiced_frames": len(voiced), "frames": len(frames),
                       "f0_hz_start_end": [round(f0[voiced[0]], 1), round(f0[voiced[-1]], 1)]},
                      f"whistle log-pitch vs height r = {r:.2f} (need {need_r:g})")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        library = {"boing_1.wav": sfx.boing(rng, 180), "boing_2.wav": sfx.boing(rng, 260),
                   "slip_1.wav": sfx.slip(rng), "zip_1.wav": sfx.zip_(rng), "zip_2.wav": sfx.zip_(rng, 0.22),
                   "pop_1.wav": sfx.pop(rng, 500), "pop_2.wav": sfx.pop(rng, 800),
                   "slide_whistle.wav": sfx.pitched_tone(np.full(RATE_HZ, 880.0))}
        for name, x in library.items():
            write_wav(inst.workdir / LIBRARY / name, x)
        (inst.workdir / "fixtures" / "cartoon_30s.mov").write_bytes(b"placeholder: cartoon, 24 fps\n")
        (inst.workdir / "output").mkdir(parents=True, exist_ok=True)
        picks = ["boing_1.wav", "zip_1.wav", "pop_1.wav", "slip_1.wav", "boing_2.wav", "pop_2.wav", "zip_2.wav",
                 "boing_1.wav", "pop_1.wav", "slip_1.wav"]
        frames, f = [], 12
        for k in range(len(picks)):
            f += int(rng.integers(16, 22)) + (60 if k == 6 else 0)  # room for the fall after action 6
            frames.append(f)
        fall_start, fall_end = frames[5] + 16, frames[5] + 16 + 40
        fall_frames = list(range(fall_start, fall_end + 1))
        u = (np.array(fall_frames) - fall_start) / (fall_end - fall_start)
        height = 1 - u ** 2  # free fall: height drops with t^2
        events = [{"frame": fr, "sample": s, "label": category_of(s, CATEGORIES), "category": category_of(s, CATEGORIES)}
                  for fr, s in zip(frames, picks, strict=True)]
        inst.write_json(inst.gt / "events.json", {
            "fps": FPS, "sample_rate_hz": RATE_HZ, "events": events,
            "fall": {"start_frame": fall_start, "end_frame": fall_end,
                     "heights": [[int(a), round(float(b), 4)] for a, b in zip(fall_frames, height, strict=True)]}})
        length = int((frames[-1] / FPS + 1.0) * RATE_HZ)

        def whistle(invert: bool = False) -> tuple[int, np.ndarray]:
            a0 = round(fall_start / FPS * RATE_HZ)
            n = round((fall_end + 1 - fall_start) / FPS * RATE_HZ)
            tt = np.arange(n) / n
            h = 1 - tt ** 2
            if invert:
                h = 1 - h
            return a0, sfx.pitched_tone(500 * 2 ** (1.5 * h))  # 500 Hz at the ground, 1.4 kHz at the top

        def render(evts: list[dict], invert: bool = False) -> np.ndarray:
            items = [(round(e["frame"] / FPS * RATE_HZ), library[e["sample"]]) for e in evts]
            return sfx.place(length, 2, [*items, whistle(invert)])

        write_wav(inst.oracle / OUTPUT, render(events))
        audio_cases(inst, OUTPUT, envelope=False, other=("R06.07.01.03-T02", "output/passby.wav"))
        write_sync_mutants(inst, events, (0, 3, 8), N.action_sync, "action", render, OUTPUT)
        write_every_sound_everywhere(inst, events, sorted(library), render, OUTPUT)
        wrong = [dict(e) for e in events]
        wrong[2]["sample"] = "zip_2.wav"
        write_wav(inst.mutant("zip_for_pop", [N.categories], "one pop replaced by a zip") / OUTPUT, render(wrong))
        write_wav(inst.mutant("whistle_rises", [N.pitch_follows_fall], "slide whistle rises while he falls")
                  / OUTPUT, render(events, invert=True))
        truncate_file(write_wav(inst.mutant("truncated_wav", list(N),
                                            "render cut off") / OUTPUT, render(events)))
