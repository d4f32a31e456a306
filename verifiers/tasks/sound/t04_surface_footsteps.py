"""R06.07.01.03-T04: cut footsteps to a walk that changes surface (gravel, then wood).

Work dir: fixtures/walk_scene.ptx (closed format; placeholder), fixtures/foley/gravel_*.wav and
wood_*.wav. Output: output/footsteps.wav.
GT: gt/events.json {fps, sample_rate_hz, change_frame, events[{frame, sample, label, surface}]}:
`frame` is the heel strike, `surface` "gravel" before change_frame and "wood" from it on.

Checks: sync (>= 44 of 48 within ±1 frame, scaled to the instance's step count), surface_switch
(the identified file's surface is the GT one for every step), no_repeats (no file twice in a row),
level_consistency (CV of step peaks <= 25%).
"""

from __future__ import annotations

import numpy as np

from verifiers.checks import CheckedTask, Result, check, check_names
from verifiers.curves import Curve
from verifiers.gtfiles import gt_field
from verifiers.params import NoParams
from verifiers.paramtypes.sound import LevelConsistency, PlacedSync, SurfaceSwitch
from verifiers.synth import InstanceWriter
from verifiers.synthcases import audio_cases
from verifiers.synthkit import sfx
from verifiers.tasks.sound._shared.event_sync import EventsFile
from verifiers.tasks.sound._shared.placed_events import (
    analysed_render,
    category_of,
    consecutive_variety,
    cv_pct,
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

TASK = "R06.07.01.03-T04"
N = check_names(TASK)


class FootstepEvents(EventsFile, task=TASK):
    """gt/events.json of the footsteps: the shared keys and the frame the surface changes."""

    change_frame: int = gt_field(doc="first frame on wood (gravel before it)")

    def validate(self) -> None:
        super().validate()
        self.expect(self.change_frame > 0, "change_frame", "must be > 0")
OUTPUT = "output/footsteps.wav"
LIBRARY = "fixtures/foley"
FPS = 24
SURFACES = ["gravel", "wood"]


class SurfaceFootsteps(CheckedTask):
    task_id = TASK

    placed = analysed_render(OUTPUT, LIBRARY, N.sync, one_file_per_event=True)

    @check(N.sync)
    def sync(self, p: PlacedSync, curve: Curve) -> Result:
        a = self.placed
        n = len(a.rows)
        need = required_of(n, k=curve.k, of_count=p.events_count, min_pct=p.min_in_sync_pct)
        ok = a.in_sync_count()
        return Result(k_of_n_for(curve, need).count(ok, n), {"steps": [r.evidence() for r in a.rows], "required": need},
                      f"{ok}/{n} heel strikes within ±{p.tolerance_frames:g} frame (need {need})")

    @check(N.surface_switch)
    def surface_switch(self, p: SurfaceSwitch, curve: Curve) -> Result:
        a = self.placed
        change = self.ctx.gt_typed(FootstepEvents).change_frame
        n = len(a.rows)
        errors = []
        for r in a.rows:
            want = "gravel" if r.gt["frame"] < change else "wood"
            got = category_of(r.found, SURFACES)
            if got != want:
                errors.append({"i": r.index, "gt_frame": r.gt["frame"], "want": want, "got": got})
        max_err = p.max_errors_count
        return Result(1.0 if len(errors) <= max_err else curve.count(n - len(errors), n),
                      {"change_frame": change, "errors": errors},
                      f"{len(errors)} step(s) on the wrong surface (allowed {max_err})")

    @check(N.no_repeats)
    def no_repeats(self, p: NoParams, curve: Curve) -> Result:
        return consecutive_variety([r.found for r in self.placed.rows], curve,
                                   "steps use different files", "reuse the previous")

    @check(N.level_consistency)
    def level_consistency(self, p: LevelConsistency, curve: Curve) -> Result:
        # the steps that carry a library file (issue 21: a pile of every file at every step is "consistent")
        peaks = [r.peak for r in self.placed.rows if r.peak is not None and r.found is not None]
        cv = cv_pct(peaks)
        max_cv = p.max_peak_cv_pct
        ev = {"peak_cv_pct": round(cv, 1), "max_peak_cv_pct": max_cv, "steps_measured": len(peaks)}
        if len(peaks) < 2:
            return Result.fail("fewer than 2 steps found", ev)
        return Result(curve.score(cv, max_cv), ev, f"step peak CV {cv:.1f}% (max {max_cv:g}%)")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        library = {f"{s}_{k}.wav": sfx.footstep(rng, s) for s in SURFACES for k in range(1, 5)}
        for name, data in library.items():
            write_wav(inst.workdir / LIBRARY / name, data)
        (inst.workdir / "fixtures" / "walk_scene.ptx").write_bytes(b"PTX placeholder: closed Pro Tools session\n")
        (inst.workdir / "output").mkdir(parents=True, exist_ok=True)
        n_steps = 12
        frames = [12 + 12 * k + int(rng.integers(-1, 2)) for k in range(n_steps)]  # ~2 steps/s
        change = (frames[5] + frames[6]) // 2
        events, prev = [], None
        for f in frames:
            surface = "gravel" if f < change else "wood"
            choices = [n for n in library if n.startswith(surface) and n != prev]
            prev = choices[int(rng.integers(len(choices)))]
            events.append({"frame": f, "sample": prev, "label": f"step {surface}", "surface": surface})
        inst.write_json(inst.gt / "events.json", {"fps": FPS, "sample_rate_hz": RATE_HZ, "change_frame": change,
                                                  "events": events})
        length = int((frames[-1] / FPS + 1.0) * RATE_HZ)

        def render(evts: list[dict], gains: list[float] | None = None) -> np.ndarray:
            g = gains or [1.0] * len(evts)
            return sfx.place(length, 2, [(round(e["frame"] / FPS * RATE_HZ), library[e["sample"]] * gk)
                                         for e, gk in zip(evts, g, strict=True)])

        write_wav(inst.oracle / OUTPUT, render(events))
        audio_cases(inst, OUTPUT, envelope=False, other=("R06.07.01.03-T02", "output/passby.wav"))
        write_sync_mutants(inst, events, (1, 4, 8), N.sync, "step", render, OUTPUT)
        write_every_sound_everywhere(inst, events, sorted(library), render, OUTPUT)
        # The switch comes one step late: the first wood step is cut from gravel.
        late_switch = [dict(e) for e in events]
        gravel_prev = late_switch[5]["sample"]
        late_switch[6]["sample"] = next(n for n in library if n.startswith("gravel") and n != gravel_prev
                                        and n != late_switch[7]["sample"])
        write_wav(inst.mutant("switch_one_step_late", [N.surface_switch], "first wood step still on gravel")
                  / OUTPUT, render(late_switch))
        rep = [dict(e) for e in events]
        rep[9]["sample"] = rep[8]["sample"]
        if rep[10]["sample"] == rep[9]["sample"]:
            rep[10]["sample"] = next(n for n in library if n.startswith("wood") and n != rep[9]["sample"]
                                     and n != rep[11]["sample"])
        write_wav(inst.mutant("repeated_sample", [N.no_repeats], "step 10 reuses step 9's file") / OUTPUT,
                  render(rep))
        gains = [1.0 if k % 2 == 0 else 0.35 for k in range(n_steps)]
        write_wav(inst.mutant("uneven_levels", [N.level_consistency], "every other step 9 dB down") / OUTPUT,
                  render(events, gains))
        truncate_file(write_wav(inst.mutant("truncated_wav", list(N), "bounce cut off") / OUTPUT,
                                render(events)))
