"""R06.07.01.03-T11: sync layered punches and impacts (whoosh + impact) for a fight scene.

Work dir: fixtures/fight_sc7.ptx (closed; placeholder), fixtures/fight_lib/{punch,body,fall}_k.wav
(impacts) and whoosh_k.wav. Output: output/fight_fx.wav.
GT: gt/events.json {fps, sample_rate_hz, events[{frame, sample, label, category}]}: `frame` is the
contact, `sample` the impact file of the reference solution, `category` punch/body/fall.

Impacts are located by NCC against the impact files (the whoosh before each contact would capture
an onset detector). Checks: contact_sync (K-of-N within ±1 frame), whoosh_layering (the 6 frames
before each located impact hold a rising, audible ramp), categories (accuracy >= 85%), variation
(no impact file twice in a row).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verifiers.base import ScoreContext
from verifiers.checks import CheckedTask, Result, check, check_names, loads
from verifiers.curves import Curve
from verifiers.gtfiles import gt_field
from verifiers.params import NoParams
from verifiers.paramtypes.sound import MinAccuracy, PlacedSync, WhooshLayering
from verifiers.synth import InstanceWriter
from verifiers.synthcases import audio_cases
from verifiers.synthkit import sfx
from verifiers.tasks.sound._shared.event_sync import ANALYSIS_RATE_HZ, EventEntry, EventsFile, load_library
from verifiers.tasks.sound._shared.placed_events import (
    Located,
    category_of,
    consecutive_variety,
    frame_levels_db,
    k_of_n_for,
    locate_events,
    required_of,
)
from verifiers.tasks.sound._shared.render_files import (
    RATE_HZ,
    load_output,
    truncate_file,
    write_every_sound_everywhere,
    write_sync_mutants,
    write_wav,
)

TASK = "R06.07.01.03-T11"
N = check_names(TASK)


@dataclass(frozen=True, kw_only=True)
class FightEvent(EventEntry):
    """A contact of the fight and its kind."""

    category: str | None = gt_field(doc="the contact's kind (default: from the sample's name)", default=None)


class FightEvents(EventsFile, task=TASK):
    """gt/events.json of the fight: the contacts (`frame` is the impact) with their kinds."""

    events: list[FightEvent] = gt_field(doc="the contacts, in time order")
OUTPUT = "output/fight_fx.wav"
LIBRARY = "fixtures/fight_lib"
FPS = 24
CATEGORIES = ["punch", "body", "fall"]
#: A ramp: last of the prior frames this much above the first, and audible.
RAMP_RISE_DB = 6.0
RAMP_MIN_DBFS = -45.0


def _is_ramp(levels: list[float]) -> bool:
    if len(levels) < 2 or levels[-1] < RAMP_MIN_DBFS:
        return False
    slope = np.polyfit(np.arange(len(levels)), levels, 1)[0]
    return levels[-1] - levels[0] >= RAMP_RISE_DB and slope > 0


@dataclass(frozen=True)
class Contacts:
    fps: float
    mix: np.ndarray  # mono at ANALYSIS_RATE_HZ
    loc: list[Located]  # each GT contact's impact as located by NCC


def locate_contacts(ctx: ScoreContext) -> Contacts:
    gt = ctx.gt_typed(FightEvents)  # a missing key, a wrong type or a broken rule: GTError naming it
    raw = [e.to_payload() for e in gt.events]
    library = load_library(ctx.input(LIBRARY))
    impacts = {k: v for k, v in library.items() if category_of(k, CATEGORIES)}
    _audio, samples = load_output(ctx, OUTPUT, ANALYSIS_RATE_HZ)
    mix = samples.mean(axis=1)
    return Contacts(gt.fps, mix, locate_events(mix, raw, gt.fps, impacts))


class FightContacts(CheckedTask):
    task_id = TASK

    contacts = loads(locate_contacts)

    @check(N.contact_sync)
    def contact_sync(self, p: PlacedSync, curve: Curve) -> Result:
        loc, tol = self.contacts.loc, p.tolerance_frames
        n = len(loc)
        in_sync = [x for x in loc if x.error_frames is not None and abs(x.error_frames) <= tol + 1e-9]
        need = required_of(n, k=curve.k, of_count=p.events_count, min_pct=p.min_in_sync_pct)
        ev = [{"i": x.index, "gt_frame": x.gt["frame"], "found": x.found, "ncc": round(x.ncc, 3),
               "error_frames": None if x.error_frames is None else round(x.error_frames, 2)} for x in loc]
        return Result(k_of_n_for(curve, need).count(len(in_sync), n), {"contacts": ev, "required": need},
                      f"{len(in_sync)}/{n} impacts within ±{tol:g} frame (need {need})")

    @check(N.whoosh_layering)
    def whoosh_layering(self, p: WhooshLayering, curve: Curve) -> Result:
        c = self.contacts
        ramps = []
        for x in c.loc:
            at = x.time_s if x.time_s is not None else x.gt_time_s
            levels = frame_levels_db(c.mix, at, c.fps, p.ramp_frames)
            # a whoosh precedes an impact only where an impact of the library is there (issue 21: a pile of
            # every library sound at every contact is one long rise with no impact identified in it)
            ramps.append({"i": x.index, "levels_db": [round(v, 1) for v in levels], "ramp": _is_ramp(levels),
                          "impact_found": x.found is not None})
        ok = sum(r["ramp"] and r["impact_found"] for r in ramps)
        return Result(curve.count(ok, len(c.loc)), {"events": ramps, "rise_db": RAMP_RISE_DB},
                      f"{ok}/{len(c.loc)} impacts preceded by a rising whoosh over {p.ramp_frames} frames")

    @check(N.categories)
    def categories(self, p: MinAccuracy, curve: Curve) -> Result:
        loc = self.contacts.loc
        n = len(loc)
        right = sum(category_of(x.found, CATEGORIES) == (x.gt.get("category") or category_of(x.gt["sample"], CATEGORIES))
                    for x in loc)
        need_c = required_of(n, min_pct=p.min_accuracy_pct)
        return Result(k_of_n_for(curve, need_c).count(right, n), {"correct": right, "required": need_c},
                      f"{right}/{n} impact categories right (need {p.min_accuracy_pct:g}%)")

    @check(N.variation)
    def variation(self, p: NoParams, curve: Curve) -> Result:
        return consecutive_variety([x.found for x in self.contacts.loc], curve,
                                   "pairs use two different impact files", "repeat(s)")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        library = {
            "punch_1.wav": sfx.impact(rng, dur_s=0.3, body_hz=150), "punch_2.wav": sfx.impact(rng, dur_s=0.3, body_hz=190),
            "punch_3.wav": sfx.impact(rng, dur_s=0.3, body_hz=235),
            "body_1.wav": sfx.impact(rng, dur_s=0.35, body_hz=95), "body_2.wav": sfx.impact(rng, dur_s=0.35, body_hz=115),
            "fall_1.wav": sfx.impact(rng, dur_s=0.6, body_hz=48), "fall_2.wav": sfx.impact(rng, dur_s=0.6, body_hz=60),
            "whoosh_1.wav": sfx.whoosh(rng, 0.22, 400, 4000), "whoosh_2.wav": sfx.whoosh(rng, 0.22, 300, 5000),
        }
        for name, data in library.items():
            write_wav(inst.workdir / LIBRARY / name, data)
        (inst.workdir / "fixtures" / "fight_sc7.ptx").write_bytes(b"PTX placeholder: closed Pro Tools session\n")
        (inst.workdir / "output").mkdir(parents=True, exist_ok=True)
        picks = ["punch_1.wav", "punch_2.wav", "body_1.wav", "punch_3.wav", "body_2.wav", "punch_1.wav",
                 "fall_1.wav", "punch_2.wav", "body_1.wav", "fall_2.wav"]
        frames, f = [], 18
        for _ in picks:
            f += int(rng.integers(17, 24))
            frames.append(f)
        events = [{"frame": fr, "sample": s, "label": category_of(s, CATEGORIES), "category": category_of(s, CATEGORIES)}
                  for fr, s in zip(frames, picks, strict=True)]
        inst.write_json(inst.gt / "events.json", {"fps": FPS, "sample_rate_hz": RATE_HZ, "events": events})
        length = int((frames[-1] / FPS + 1.0) * RATE_HZ)

        def render(evts: list[dict], whoosh: set[int] | None = None) -> np.ndarray:
            items = []
            for k, e in enumerate(evts):
                at = round(e["frame"] / FPS * RATE_HZ)
                items.append((at, library[e["sample"]]))
                if whoosh is None or k in whoosh:
                    w = library[f"whoosh_{1 + k % 2}.wav"]
                    items.append((at - len(w), w))  # the whoosh ends on the contact sample
            return sfx.place(length, 2, items)

        write_wav(inst.oracle / OUTPUT, render(events))
        audio_cases(inst, OUTPUT, envelope=False, other=("R06.07.01.03-T02", "output/passby.wav"))
        write_sync_mutants(inst, events, (1, 5, 8), N.contact_sync, "contact", render, OUTPUT)
        write_every_sound_everywhere(inst, events, sorted(library), render, OUTPUT)
        write_wav(inst.mutant("no_whoosh_on_three", [N.whoosh_layering], "three impacts have no whoosh layer")
                  / OUTPUT, render(events, whoosh=set(range(len(events))) - {0, 4, 7}))
        cats = [dict(e) for e in events]
        cats[0]["sample"], cats[3]["sample"] = "fall_2.wav", "fall_1.wav"  # punches cut as falls
        write_wav(inst.mutant("punches_as_falls", [N.categories], "two punches use fall impacts") / OUTPUT,
                  render(cats))
        rep = [dict(e) for e in events]
        rep[1]["sample"] = "punch_1.wav"
        write_wav(inst.mutant("same_impact_twice", [N.variation], "contact 2 reuses contact 1's punch") / OUTPUT,
                  render(rep))
        truncate_file(write_wav(inst.mutant("truncated_wav", list(N), "bounce cut off") / OUTPUT,
                                render(events)))
