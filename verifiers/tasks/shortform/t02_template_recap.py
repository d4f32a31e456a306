"""R06.04.01.04-T02: fill CapCut mobile's 'Weekend Recap 6' template with clip1–clip6 in order.

Work dir: fixtures/recap/clip1..6.mp4, input/moments.csv (clip, moment_s: the moment each slot must
contain). Output: device/DCIM/recap.mp4 (pulled from the phone). GT: gt/template.json = slot start/end
times of the template (seconds in the export); gt/render.json = instance scale (synthetic only).
"""

from __future__ import annotations

import csv
import io
import itertools
from dataclasses import dataclass

import numpy as np

from verifiers.base import GTError
from verifiers.checks import Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.gtfiles import GTFile, gt_field
from verifiers.params import NoParams
from verifiers.paramtypes.shortform import ShortSide, SlotCount
from verifiers.synth import InstanceWriter
from verifiers.synthkit.shortform_video import clip_frames, resize, write_video
from verifiers.tasks.shortform._shared.cases import register_video_cases
from verifiers.tasks.shortform._shared.clips import ClipMatcher, Labelled, sources_in
from verifiers.tasks.shortform._shared.export import ExportTask, instance_scale, short_side
from verifiers.tasks.shortform._shared.slots import TimeSlot, slots_ordered

TASK = "R06.04.01.04-T02"
N = check_names(TASK)


class TemplateFile(GTFile, file="template.json", task=TASK):
    """gt/template.json: the template's name and its slots' times in the export."""

    slots: list[TimeSlot] = gt_field(doc="the slots in order")
    template: str | None = gt_field(doc="the template's name (informative)", default=None)

    def validate(self) -> None:
        self.expect(slots_ordered(self.slots), "slots", "must be non-empty, starting in order, each ending after it starts")
MIN_PLAY_SHARE = 0.25  # a slot's clip must advance at least this share of the slot's length (a freeze does not)
OUTPUT = "device/DCIM/recap.mp4"
FPS = 24.0
SCALE = 1 / 6  # 320x180 miniature of 1920x1080


def read_moments(text: str) -> dict[str, float]:
    rows = list(csv.DictReader(io.StringIO(text)))
    try:
        return {r["clip"].strip(): float(r["moment_s"]) for r in rows}
    except (KeyError, ValueError, AttributeError) as exc:
        raise GTError(f"input/moments.csv: needs clip,moment_s columns ({exc})") from None


@dataclass(frozen=True)
class SlotReport:
    """Per template slot: which clip it shows and whether it contains the listed moment."""

    per_slot: list[dict]
    in_order: int
    with_moment: int


def judge_slots(labelled: list[Labelled], slots: list[TimeSlot], moments: dict[str, float], frame_s: float) -> SlotReport:
    order_ok, moment_ok, per_slot = 0, 0, []
    for k, slot in enumerate(slots, start=1):
        want = f"clip{k}"
        inside = [x for x in labelled if slot.start_s + frame_s <= x.t_s < slot.end_s - frame_s]
        shown = [x.label for x in inside]
        top = max(set(shown), key=shown.count) if shown else None
        own = [x.src_t_s for x in inside if x.label == want]
        # the clip plays in its slot (a frozen frame of it is no segment of the clip)
        plays = bool(own) and max(own) - min(own) >= MIN_PLAY_SHARE * (slot.end_s - slot.start_s)
        ok = top == want and shown.count(want) >= 0.9 * len(shown) and plays
        order_ok += ok
        m = moments.get(want)
        has_moment = bool(ok and own and m is not None and min(own) - frame_s <= m <= max(own) + frame_s)
        moment_ok += has_moment
        per_slot.append({"slot": k, "shows": top, "src_range_s": [min(own), max(own)] if own else None,
                         "moment_s": m, "in_order": ok, "has_moment": has_moment})
    return SlotReport(per_slot, order_ok, moment_ok)


class TemplateRecap(ExportTask, output=OUTPUT):
    task_id = TASK

    @provides
    def slots(self) -> list[TimeSlot]:
        return self.ctx.gt_typed(TemplateFile).slots

    @provides
    def report(self) -> SlotReport:
        moments = read_moments(self.ctx.input("input/moments.csv").read_text(encoding="utf-8"))
        matcher = ClipMatcher(sources_in(self.ctx.input("fixtures/recap")))
        frame_s = 1.0 / (self.export.facts["fps"] or FPS)
        return judge_slots(matcher.label_video(self.export.path), self.slots, moments, frame_s)

    @check(N.clips_in_order)
    def clips_in_order(self, p: SlotCount, curve: Curve) -> Result:
        r, n = self.report, len(self.slots)
        return Result(curve.count(r.in_order, n), {"slots": r.per_slot}, f"{r.in_order}/{n} slots show the right clip")

    @check(N.segments_moments)
    def segments_moments(self, p: NoParams, curve: Curve) -> Result:
        r, n = self.report, len(self.slots)
        return Result(curve.count(r.with_moment, n), {"slots": r.per_slot},
                      f"{r.with_moment}/{n} slots contain their moment")

    @check(N.export_spec)
    def export_spec(self, p: ShortSide, curve: Curve) -> Result:
        score, ev, msg = short_side(self.export.facts, p.height_px, instance_scale(self.ctx), curve)
        r, n = self.report, len(self.slots)
        if r.in_order < n / 2:  # the render spec describes a filled template: baseline-relative (issue 21)
            return Result(0.0, {**ev, "slots_in_order": r.in_order},
                          f"only {r.in_order}/{n} slots show their clip: no filled template to judge the export of")
        return Result(score, ev, msg)

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        w, h = 320, 180
        clip_n = int(4 * FPS)
        clips = {f"clip{k}": clip_frames(int(rng.integers(1 << 30)), clip_n, w, h, FPS) for k in range(1, 7)}
        for name, frames in clips.items():
            write_video(inst.workdir / "fixtures/recap" / f"{name}.mp4", frames, FPS)
        slot_frames = [int(rng.integers(20, 30)) for _ in range(6)]
        moments = {}
        starts_src = {}
        for k, n in enumerate(slot_frames, start=1):
            s0 = int(rng.integers(0, clip_n - n))
            starts_src[f"clip{k}"] = s0
            moments[f"clip{k}"] = round((s0 + n // 2) / FPS, 3)
        buf = io.StringIO()
        wr = csv.writer(buf, lineterminator="\n")
        wr.writerow(["clip", "moment_s"])
        wr.writerows(moments.items())
        (inst.workdir / "input").mkdir(parents=True, exist_ok=True)
        (inst.workdir / "input/moments.csv").write_text(buf.getvalue())
        edges = np.concatenate([[0], np.cumsum(slot_frames)]) / FPS
        inst.write_json(inst.gt / "template.json", {"template": "Weekend Recap 6", "slots": [
            {"start_s": round(float(a), 4), "end_s": round(float(b), 4)} for a, b in itertools.pairwise(edges)]})
        inst.write_json(inst.gt / "render.json", {"scale": SCALE})

        def render(order: list[int], starts: dict[str, int], size: tuple[int, int] = (w, h)) -> list[np.ndarray]:
            out = []
            for slot, k in enumerate(order):
                name = f"clip{k}"
                s0 = starts[name]
                out += [resize(f, *size) for f in clips[name][s0:s0 + slot_frames[slot]]]
            return out

        write_video(inst.oracle / OUTPUT, render([1, 2, 3, 4, 5, 6], starts_src), FPS)
        register_video_cases(inst, OUTPUT, "fixtures/recap/clip1.mp4", keeps={"unedited_input": (
            6.67, "clip1 handed back fills slot 1 as the template would: 1/6 of clips_in_order")})
        write_video(inst.mutant("swapped_slots", [N.clips_in_order, N.segments_moments],
                                "clips 3 and 4 dropped into each other's slot") / OUTPUT,
                    render([1, 2, 4, 3, 5, 6], starts_src), FPS)
        missed = dict(starts_src)
        n5 = slot_frames[4]
        missed["clip5"] = (starts_src["clip5"] + n5 + 4) if starts_src["clip5"] + 2 * n5 + 4 <= clip_n else max(0, starts_src["clip5"] - n5 - 4)
        write_video(inst.mutant("moment_missed", [N.segments_moments],
                                "slot 5 uses the default in-point, the listed moment is trimmed away") / OUTPUT,
                    render([1, 2, 3, 4, 5, 6], missed), FPS)
        write_video(inst.mutant("exported_720p", [N.export_spec], "exported at 720p") / OUTPUT,
                    render([1, 2, 3, 4, 5, 6], starts_src, (214, 120)), FPS)
