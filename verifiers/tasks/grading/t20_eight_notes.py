"""R06.04.02.02-T20: execute eight secondary-grade notes on a ten-shot commercial.

Work dir: input/secondary_notes.md (the notes as the client wrote them). Render: out/perfume_sec.mov
(the ten shots). GT: gt/source.mov (v1), gt/masks.npz {note_1 … note_8}, gt/notes.json: per note
the shot's frame range and a predicate on its mask — `hue` (signed mean-hue change, degrees),
`stop` (median log2 linear-Y gain) or `chroma` (mean C*ab change, percent) within [min, max].
A note passes when its predicate holds on ≥ 95 % of its shot's frames. Untouched: every frame,
everything outside the note masks (less a 3 px guard) stays within 1.5 mean ΔE2000 of v1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verifiers.base import GTError
from verifiers.checks import Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.evidence.base import Payload
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.colour import hue_difference_deg
from verifiers.params import NoParams
from verifiers.paramtypes.grading import MaxDeltaE
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.gain import per_frame_gain
from verifiers.tasks.grading._shared.near_miss import render_writer, untouched_pair
from verifiers.tasks.grading._shared.preservation import GradingTask
from verifiers.tasks.grading._shared.regions import (
    chroma_of,
    circular_mean_hue,
    floor_de,
    frame_share,
    masked_mean,
    outside,
    per_frame_de,
)
from verifiers.tasks.grading._shared.shot import Shot, guarded

OUTPUT = "out/perfume_sec.mov"
NOTES_MD = "input/secondary_notes.md"
SHOTS = 10
FRAMES_PER_SHOT = 3
GUARD_PX = 3

#: (shot, region colour Lab, predicate kind, [min, max], oracle grade, wording)
_NOTES = [
    (1, (70, -5, -30), "hue", [-20, -10], {"hue_deg": -15}, "Shot 1: sky a touch more teal (10–20°)."),
    (2, (60, 15, 20), "stop", [0.2, 0.4], {"stops": 0.3}, "Shot 2: lift her face +1/3 stop."),
    (3, (55, 50, 30), "chroma", [-50, -30], {"chroma_scale": 0.6}, "Shot 3: tame the red awning (−30 to −50 % sat)."),
    (4, (65, 10, 45), "hue", [10, 20], {"hue_deg": 15}, "Shot 4: bottle liquid warmer gold → amber (+10–20°)."),
    (5, (45, 5, 10), "stop", [-0.6, -0.4], {"stops": -0.5}, "Shot 5: darken the back wall half a stop."),
    (6, (50, -35, 30), "chroma", [-50, -30], {"chroma_scale": 0.6}, "Shot 6: the green plant is too loud (−30 to −50 %)."),
    (7, (40, 20, -45), "hue", [10, 20], {"hue_deg": 15}, "Shot 7: push the dress from blue toward violet (+10–20°)."),
    (8, (62, 14, 18), "stop", [0.15, 0.35], {"stops": 0.25}, "Shot 8: a little eye-light on the model (+1/4 stop)."),
]


def make_scene(rng: np.random.Generator):
    n = SHOTS * FRAMES_PER_SHOT
    lab = g.flat(n, (50, 3, 8))
    lab[..., 0] += 10 * g.texture(rng, n, sigma_px=5, pan_px_per_frame=0.5)
    masks = {}
    notes = []
    for k, (shot, col, kind, rng_, _grade, text) in enumerate(_NOTES, start=1):
        a, b = (shot - 1) * FRAMES_PER_SHOT, shot * FRAMES_PER_SHOT
        m = np.zeros((n, g.HEIGHT_PX, g.WIDTH_PX), dtype=bool)
        cx = 60 + 16 * k
        m[a:b] = g.ellipse(b - a, g.path_linear(b - a, (cx, 70), (cx + 6, 68)), (34, 28))
        lab[m] = col
        lab[..., 0][m] += 5 * g.texture(rng, n, sigma_px=2)[m]
        masks[f"note_{k}"] = m
        notes.append({"note": k, "shot": shot, "frames": [a, b], "kind": kind, "min": rng_[0], "max": rng_[1],
                      "text": text})
    return g.to_rgb8(lab), masks, notes


def apply_note(frames: np.ndarray, mask: np.ndarray, grade: dict) -> np.ndarray:
    if "stops" in grade:
        return g.grade_gain(frames, np.clip(mask.astype(float), 0, 1), grade["stops"])
    return g.grade_lab(frames, mask, **grade)


TASK = "R06.04.02.02-T20"
N = check_names(TASK)
#: predicate kind -> the unit of its [min, max] range
NOTE_UNITS = {"hue": "deg", "stop": "stop", "chroma": "pct"}


@dataclass(frozen=True)
class Note(Payload):
    """One secondary note: its shot's frames and the predicate its region's change must meet."""

    note: int = gt_field(doc="note number 1..8 (mask note_<n>)")
    frames: list[int] = gt_field(doc="[first, end) frames of the note's shot")
    kind: str = gt_field(doc="predicate: hue (shift, °), stop (gain, stops) or chroma (change, %)")
    lo_in_kind_unit: float = gt_field("min", "lowest allowed change, in the kind's unit")
    hi_in_kind_unit: float = gt_field("max", "highest allowed change, in the kind's unit")
    shot: int | None = gt_field(doc="shot number (informative)", default=None)
    text: str | None = gt_field(doc="the note as the colourist wrote it (informative)", default=None)


class NotesFile(GTFile, file="notes.json", task=TASK, root="notes"):
    """gt/notes.json: the eight secondary notes, one predicate each."""

    notes: list[Note] = gt_field(doc="the eight notes")

    def validate(self) -> None:
        self.expect(sorted(n.note for n in self.notes) == list(range(1, 9)), "notes", "must list notes 1 to 8 once each")
        self.expect(all(n.kind in NOTE_UNITS for n in self.notes), "notes",
                    f"every note's kind must be one of {sorted(NOTE_UNITS)}")
        self.expect(all(len(n.frames) == 2 and 0 <= n.frames[0] < n.frames[1] for n in self.notes), "notes",
                    "every note's frames are [first, end) with first < end")


def note_values(shot: Shot, note: Note, mask: np.ndarray, gmap: np.ndarray | None) -> tuple[np.ndarray, str]:
    """(per frame of the note's shot: the measured change, its unit) for the note's predicate kind."""
    a, b = note.frames
    if note.kind == "hue":
        return np.array([hue_difference_deg(circular_mean_hue(shot.lab("src")[i], mask[i]),
                                            circular_mean_hue(shot.lab("out")[i], mask[i])) for i in range(a, b)]), "deg"
    if note.kind == "stop" and gmap is not None:
        return per_frame_gain(gmap[a:b], mask[a:b]), "stop"
    if note.kind == "chroma":
        return 100 * (masked_mean(chroma_of(shot, "out")[a:b], mask[a:b])
                      / masked_mean(chroma_of(shot, "src")[a:b], mask[a:b]) - 1), "pct"
    raise GTError(f"note {note.note}: no measure for predicate {note.kind!r}")


class EightNotes(GradingTask):
    task_id = TASK
    output = OUTPUT
    preserves = (N.untouched_regions,)

    def primary_region(self, shot: Shot) -> np.ndarray:
        return np.any([shot.masks[k] for k in shot.masks if k.startswith("note_")], axis=0)

    @provides
    def notes(self) -> dict[int, Note]:
        return {n.note: n for n in self.ctx.gt_typed(NotesFile).notes}

    def judge_note(self, k: int, curve: Curve) -> Result:
        """Note k's predicate (hue shift °, stop change, chroma %) on the frames of its shot, in its mask."""
        note = self.notes[k]
        shot, mask = self.shot, self.shot.mask(f"note_{k}")
        v, unit = note_values(shot, note, mask, self.gmap if note.kind == "stop" else None)
        lo_, hi_ = note.lo_in_kind_unit, note.hi_in_kind_unit
        sc, pct = frame_share(curve, (v >= lo_) & (v <= hi_))
        return Result(sc, {"kind": note.kind, "measured": [float(np.nanmin(v)), float(np.nanmax(v))],
                           "range": [lo_, hi_], "unit": unit, "frames": note.frames, "frames_ok_pct": pct},
                      "" if sc == 1 else f"note {k} ({note.kind}): measured {np.nanmean(v):+.2f} {unit}, "
                                         f"wanted {lo_}..{hi_}")

    @check(N.note_1)
    def note_1(self, p: NoParams, curve: Curve) -> Result:
        return self.judge_note(1, curve)

    @check(N.note_2)
    def note_2(self, p: NoParams, curve: Curve) -> Result:
        return self.judge_note(2, curve)

    @check(N.note_3)
    def note_3(self, p: NoParams, curve: Curve) -> Result:
        return self.judge_note(3, curve)

    @check(N.note_4)
    def note_4(self, p: NoParams, curve: Curve) -> Result:
        return self.judge_note(4, curve)

    @check(N.note_5)
    def note_5(self, p: NoParams, curve: Curve) -> Result:
        return self.judge_note(5, curve)

    @check(N.note_6)
    def note_6(self, p: NoParams, curve: Curve) -> Result:
        return self.judge_note(6, curve)

    @check(N.note_7)
    def note_7(self, p: NoParams, curve: Curve) -> Result:
        return self.judge_note(7, curve)

    @check(N.note_8)
    def note_8(self, p: NoParams, curve: Curve) -> Result:
        return self.judge_note(8, curve)

    @check(N.untouched_regions)
    def untouched_regions(self, p: MaxDeltaE, curve: Curve) -> Result:
        shot = self.shot
        union = np.any([shot.mask(f"note_{k}") for k in self.notes], axis=0)
        rest, thin = guarded(shot, outside(union, GUARD_PX))
        de = np.maximum(per_frame_de(shot, rest, luma_only=thin) - floor_de(shot, rest, luma_only=thin), 0.0)
        sc, pct = frame_share(curve, de <= p.max_de2000)
        return Result(sc, {"worst_frame_mean_delta_e2000": float(de.max()), "worst_frame": int(np.argmax(de)),
                           "guard_px": GUARD_PX, "frames_ok_pct": pct,
                           "statistic": "mean ΔE2000 above the export floor", **shot.floor_info()},
                      "" if sc == 1 else f"outside the notes changed {de.max():.2f} ΔE2000 on frame {int(np.argmax(de))}")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        src, masks, notes = make_scene(rng)
        g.write_video(inst.gt / "source.mov", src)
        g.write_masks(inst.gt / "masks.npz", masks)
        inst.write_json(inst.gt / "notes.json", notes)
        (inst.workdir / "input").mkdir(parents=True, exist_ok=True)
        (inst.workdir / NOTES_MD).write_text("# Perfume_30 secondary notes (v1 → v2)\n\n"
                                             + "\n".join(f"{i}. {n[5]}" for i, n in enumerate(_NOTES, start=1)) + "\n")
        (inst.workdir / "out").mkdir(parents=True, exist_ok=True)

        def render(skip: int | None = None, override: dict | None = None, leak: int | None = None) -> np.ndarray:
            out = src.copy()
            for k, (_shot, _c, _kind, _r, grade, _t) in enumerate(_NOTES, start=1):
                if k == skip:
                    continue
                mask = masks[f"note_{k}"]
                if k == leak:
                    a, b = notes[k - 1]["frames"]
                    mask = np.zeros_like(mask)
                    mask[a:b] = True
                out = apply_note(out, mask, (override or {}).get(k, grade))
            return out

        g.write_video(inst.oracle / OUTPUT, render())
        m = inst.mutant("note_3_skipped", [N.note_3, N.untouched_regions],
                        "the awning note was missed (untouched regions credited for the 7 notes done of 8)")
        g.write_video(m / OUTPUT, render(skip=3))
        m = inst.mutant("note_5_wrong_way", [N.note_5], "the back wall brightened instead of darkened")
        g.write_video(m / OUTPUT, render(override={5: {"stops": 0.5}}))
        m = inst.mutant("note_7_too_far", [N.note_7], "the dress pushed 35° to magenta")
        g.write_video(m / OUTPUT, render(override={7: {"hue_deg": 35}}))
        m = inst.mutant("note_2_whole_frame", [N.untouched_regions], "face lift done as a global exposure change")
        g.write_video(m / OUTPUT, render(leak=2))
        undone = {"hue": {"hue_deg": 0.0}, "stop": {"stops": 0.0}, "chroma": {"chroma_scale": 1.0}}
        m = inst.mutant("note_1_not_done", [N.note_1, N.untouched_regions], "the sky note left undone")
        g.write_video(m / OUTPUT, render(override={1: undone["hue"]}))
        even = (2, 4, 6, 8)
        m = inst.mutant("even_notes_not_done", [*(getattr(N, f"note_{k}") for k in even), N.untouched_regions], "notes 2, 4, 6 and 8 left undone")
        g.write_video(m / OUTPUT, render(override={k: undone[_NOTES[k - 1][2]] for k in even}))

        # near misses at note 1's line (−20 … −10°): −18° passes in full, −22° fails every frame of its shot
        m = inst.mutant("near_miss_note_1_inside", [], "sky note at −18°: just inside the −20° edge")
        g.write_video(m / OUTPUT, render(override={1: {"hue_deg": -18}}))
        m = inst.mutant("near_miss_note_1_outside", [N.note_1], "sky note at −22°: just outside the −20° edge")
        g.write_video(m / OUTPUT, render(override={1: {"hue_deg": -22}}))

        # near misses at notes 2–8's lines: all seven just inside in one render (lowers nothing), then each
        # note alone just outside its nearer edge (lowers that note only)
        inside = {2: {"stops": 0.37}, 3: {"chroma_scale": 0.67}, 4: {"hue_deg": 18}, 5: {"stops": -0.43},
                  6: {"chroma_scale": 0.67}, 7: {"hue_deg": 18}, 8: {"stops": 0.32}}
        outside_ = {2: {"stops": 0.43}, 3: {"chroma_scale": 0.73}, 4: {"hue_deg": 22}, 5: {"stops": -0.37},
                    6: {"chroma_scale": 0.73}, 7: {"hue_deg": 22}, 8: {"stops": 0.38}}
        m = inst.mutant("near_miss_notes_2_8_inside", [], "notes 2–8 each just inside its range (+0.37, −33 %, +18°, "
                        "−0.43, −33 %, +18°, +0.32)")
        g.write_video(m / OUTPUT, render(override=inside))
        for k, grade in outside_.items():
            m = inst.mutant(f"near_miss_note_{k}_outside", [getattr(N, f"note_{k}")],
                            f"note {k} just outside its range ({next(iter(grade.values()))})")
            g.write_video(m / OUTPUT, render(override={k: grade}))

        write = render_writer(OUTPUT)

        rest = outside(np.any(list(masks.values()), axis=0), GUARD_PX)
        untouched_pair(inst, N.untouched_regions, render(), src, [rest], 1.5, write, "untouched_regions")
