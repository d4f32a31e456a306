"""R06.07.01.03-T20: re-conform spotted effects after a picture change (EDL of the v2 cut).

Work dir: fixtures/reel4_v2_changes.edl (CMX3600: v2 events, source = v1 reel timeline),
fixtures/reel4_fx_v1.ptx (closed; placeholder), fixtures/reel4_media/fx_NN.wav (the session's
effects) and bg_*.wav. Output: output/reel4_fx_v2.wav.
GT: gt/events.json {fps, sample_rate_hz, v2_frames, cut_frames: [...], events: [retained events at
their v2 frames], removed: [{v1_frame, sample, label}]}.

Checks: retained_sync (>= 90% of retained events within ±1 frame, identified by NCC), removed_gone
(no removed event's sample anywhere in the bounce, outside spots where a retained event uses the same
sample), bg_continuity (around each v2 cut no run of more than 2 frames where the BG drops 20 dB
under its median), length (bounce length equals the v2 picture within one frame). The last three
pay in proportion to the retained events whose sound is in the bounce (issue 21: silence of the
right length earned 50).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verifiers.apps.edl import EDLEvent, write_edl
from verifiers.base import GTError, ScoreContext
from verifiers.checks import CheckedTask, Result, check, check_names, loads, provides
from verifiers.curves import Curve
from verifiers.evidence.base import Payload
from verifiers.gtfiles import gt_field
from verifiers.measure.identify import match_at
from verifiers.measure.levels import frame_rms_dbfs
from verifiers.params import NoParams
from verifiers.paramtypes.sound import BGContinuity, PlacedSync
from verifiers.synth import InstanceWriter
from verifiers.synthcases import audio_cases
from verifiers.synthkit import sfx
from verifiers.tasks.sound._shared.event_sync import ANALYSIS_RATE_HZ, EventsFile
from verifiers.tasks.sound._shared.placed_events import (
    Analysis,
    analysed_render,
    k_of_n_for,
    required_of,
)
from verifiers.tasks.sound._shared.render_files import (
    RATE_HZ,
    truncate_file,
    write_every_sound_everywhere,
    write_wav,
)

TASK = "R06.07.01.03-T20"
N = check_names(TASK)


@dataclass(frozen=True)
class RemovedEvent(Payload):
    """An event of a shot the v2 cut removed: its sound must be gone."""

    v1_frame: int = gt_field(doc="its frame in v1")
    sample: str = gt_field(doc="its library file")
    label: str = gt_field(doc="what it was", default="")


class ConformEvents(EventsFile, task=TASK):
    """gt/events.json of the reconform: the shared keys (events at their v2 frames), the v2 cut and what it removed."""

    v2_frames: int = gt_field(doc="v2's length")
    cut_frames: list[int] = gt_field(doc="v2's cut points")
    removed: list[RemovedEvent] = gt_field(doc="events of the removed shots")

    def validate(self) -> None:
        super().validate()
        self.expect(self.v2_frames > 0, "v2_frames", "must be > 0")
OUTPUT = "output/reel4_fx_v2.wav"
MEDIA = "fixtures/reel4_media"
FPS = 24
HOUR = 86400  # 01:00:00:00 at 24 fps
GAP_DROP_DB = 20.0


LENGTH_TOL_FRAMES = 1.0


@dataclass(frozen=True)
class ConformGT:
    v2_frames: int
    cuts: list[int]  # the new cut points
    removed: list[dict]  # events of removed shots: {sample, label}


def load_conform_gt(ctx: ScoreContext) -> ConformGT:
    gt = ctx.gt_typed(ConformEvents)  # a missing key, a wrong type or a broken rule: GTError naming it
    return ConformGT(gt.v2_frames, gt.cut_frames, [r.to_payload() for r in gt.removed])


def still_present(a: Analysis, removed: list[dict]) -> list[dict]:
    """Removed events whose sound is anywhere in the bounce (one NCC scan over the whole mix per sample)."""
    fx = {k: v for k, v in a.library.items() if k.startswith("fx_")}
    mid_s = len(a.mix) / ANALYSIS_RATE_HZ / 2
    still = []
    for ev in removed:
        name = ev["sample"]
        if name not in fx:
            raise GTError(f"removed event sample {name} not in {MEDIA}")
        m = match_at(a.mix, ANALYSIS_RATE_HZ, {name: fx[name]}, mid_s, search_s=mid_s + 0.5, length_s=0.3)[0]
        explained = any(r.gt["sample"] == name and r.onset_s is not None and abs(r.onset_s - m.offset_s) < 0.1
                        for r in a.rows)
        if m.ncc >= 0.6 and not explained:
            still.append({"sample": name, "label": ev.get("label", ""), "at_s": round(m.offset_s, 3), "ncc": round(m.ncc, 3)})
    return still


def longest_gap_frames(lv: np.ndarray, c: int, floor_db: float) -> int:
    """Longest run of frames below floor_db within 6 frames of cut c."""
    run = best = 0
    for v in lv[max(0, c - 6): min(len(lv), c + 6)]:
        run = run + 1 if v < floor_db else 0
        best = max(best, run)
    return best


class Reconform(CheckedTask):
    task_id = TASK

    placed = analysed_render(OUTPUT, MEDIA, N.retained_sync)

    gt = loads(load_conform_gt, after=("placed",))  # as before: the analysis first (its errors come first)

    @provides
    def retained(self) -> float:
        """Share of the retained events whose sound is in the bounce at all: the conform itself. The
        'leave it alone' shares (nothing removed left in, BG without gaps, length) pay in proportion
        (issue 21: silence of the v2 length earned 50)."""
        rows = self.placed.rows
        return sum(r.found is not None for r in rows) / max(len(rows), 1)

    @check(N.retained_sync)
    def retained_sync(self, p: PlacedSync, curve: Curve) -> Result:
        self.gt  # noqa: B018  a GT without the v2 fields cannot be judged at all, as before
        a = self.placed
        n, ok = len(a.rows), a.in_sync_count()
        need = required_of(n, k=curve.k, of_count=p.events_count, min_pct=p.min_in_sync_pct)
        return Result(k_of_n_for(curve, need).count(ok, n), {"events": [r.evidence() for r in a.rows], "required": need},
                      f"{ok}/{n} retained events within ±{p.tolerance_frames:g} frame (need {need})")

    @check(N.removed_gone)
    def removed_gone(self, p: NoParams, curve: Curve) -> Result:
        removed = self.gt.removed
        still = still_present(self.placed, removed)
        total = max(len(removed), 1)
        return Result(self.retained * curve.count(total - len(still), total),
                      {"still_present": still, "retained_share": round(self.retained, 3)},
                      f"{len(still)}/{len(removed)} removed events still audible; {self.retained:.0%} of the "
                      "retained events in the bounce")

    @check(N.bg_continuity)
    def bg_continuity(self, p: BGContinuity, curve: Curve) -> Result:
        a, cuts = self.placed, self.gt.cuts
        lv = frame_rms_dbfs(a.mix, ANALYSIS_RATE_HZ, a.fps)
        floor = float(np.median(lv)) - GAP_DROP_DB
        per_cut = []
        for c in cuts:
            best = longest_gap_frames(lv, c, floor)
            per_cut.append({"cut_frame": c, "gap_frames": best, "ok": best <= p.max_gap_frames})
        good = sum(x["ok"] for x in per_cut)
        return Result(self.retained * curve.count(good, max(len(cuts), 1)),
                      {"cuts": per_cut, "gap_below_dbfs": round(floor, 1), "retained_share": round(self.retained, 3)},
                      f"{good}/{len(cuts)} cut points with BG continuous (gaps <= {p.max_gap_frames} frames); "
                      f"{self.retained:.0%} of the retained events in the bounce")

    @check(N.length)
    def length(self, p: NoParams, curve: Curve) -> Result:
        a = self.placed
        want_s = self.gt.v2_frames / a.fps
        diff_frames = (a.audio.duration_s - want_s) * a.fps
        return Result(self.retained * curve.score(diff_frames, LENGTH_TOL_FRAMES + 1e-9),
                      {"bounce_s": round(a.audio.duration_s, 4), "v2_picture_s": round(want_s, 4),
                       "retained_share": round(self.retained, 3)},
                      f"bounce is {diff_frames:+.1f} frames against the v2 picture; {self.retained:.0%} of the "
                      "retained events in the bounce")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        shot_frames = 48
        n_shots = 7
        fx = sfx.distinct_set(rng, 2 * n_shots)
        media = {f"fx_{k:02d}.wav": x for k, x in enumerate(fx)}
        bgs = {f"bg_{k}.wav": sfx.bed(rng, RATE_HZ * 3, 150 + 100 * k, 5000, -32, tilt_db_oct=-3 + k) for k in range(2)}
        for name, x in {**media, **bgs}.items():
            write_wav(inst.workdir / MEDIA / name, x)
        (inst.workdir / "fixtures" / "reel4_fx_v1.ptx").write_bytes(b"PTX placeholder: closed Pro Tools session\n")
        (inst.workdir / "output").mkdir(parents=True, exist_ok=True)
        # v1: event k of shot s at frame s*48 + offset; v2: drop shots 2 and 5, trim shot 1's head by
        # 12 frames, swap shots 3 and 4.
        v1_events = []
        names = list(media)
        for s in range(n_shots):
            for j, off in enumerate((14 + int(rng.integers(0, 4)), 32 + int(rng.integers(0, 4)))):
                v1_events.append({"shot": s, "v1_frame": s * shot_frames + off, "sample": names[2 * s + j],
                                  "label": f"shot {s + 1} fx {j + 1}"})
        order = [(0, 0), (1, 12), (4, 0), (3, 0), (6, 0)]  # (v1 shot, head trim frames)
        edl, rec, events, cuts = [], 0, [], []
        for num, (s, trim) in enumerate(order, 1):
            src_in = s * shot_frames + trim
            length = shot_frames - trim
            edl.append(EDLEvent(num, "AX", "V", "C", HOUR + src_in, HOUR + src_in + length, HOUR + rec,
                                HOUR + rec + length, [f"* FROM CLIP NAME: SHOT_{s + 1:02d}"]))
            for ev in v1_events:
                if ev["shot"] == s and src_in <= ev["v1_frame"] < src_in + length:
                    events.append({"frame": rec + ev["v1_frame"] - src_in, "sample": ev["sample"],
                                   "label": ev["label"]})
            rec += length
            if num < len(order):
                cuts.append(rec)
        kept_shots = {s for s, _t in order}
        removed = [{"v1_frame": e["v1_frame"], "sample": e["sample"], "label": e["label"]}
                   for e in v1_events if e["shot"] not in kept_shots]
        write_edl(inst.workdir / "fixtures" / "reel4_v2_changes.edl", "REEL4 V2", edl, FPS)
        inst.write_json(inst.gt / "events.json", {"fps": FPS, "sample_rate_hz": RATE_HZ, "v2_frames": rec,
                                                  "cut_frames": cuts, "events": events, "removed": removed})
        v2_len = round(rec / FPS * RATE_HZ)
        bed = sfx.bed(rng, v2_len + RATE_HZ, 150, 5000, -32)

        def render(evts: list[dict], extra: list[tuple[int, str]] = (), hole_at: int | None = None,
                   length: int = v2_len) -> np.ndarray:
            out = sfx.place(length, 2, [(round(e["frame"] / FPS * RATE_HZ), media[e["sample"]]) for e in evts]
                            + [(round(f / FPS * RATE_HZ), media[s]) for f, s in extra])
            b = bed[:length].copy()
            if hole_at is not None:  # BG of a trimmed shot not extended: 6 silent frames after the cut
                a0 = round(hole_at / FPS * RATE_HZ)
                b[a0: a0 + round(6 / FPS * RATE_HZ)] = 0.0
            return out + b[:, None]

        write_wav(inst.oracle / OUTPUT, render(events))
        audio_cases(inst, OUTPUT, envelope=False, other=("R06.07.01.03-T02", "output/passby.wav"))
        write_every_sound_everywhere(inst, events, sorted(media), render, OUTPUT)
        late = [dict(e) for e in events]
        late[1]["frame"] += 2
        late[4]["frame"] -= 2
        write_wav(inst.mutant("two_events_2_frames_off", [N.retained_sync], "two retained events 2 frames off")
                  / OUTPUT, render(late))
        # near misses at the seed's ±1 frame: the same 2 retained events 0.75 frame off (inside: lowers nothing) and 1.25
        # (outside); a quarter frame is ~10 ms, ten times the onset detector's refinement
        for d, lowers in ((0.75, []), (1.25, [N.retained_sync])):
            near = [dict(e) for e in events]
            for i, sgn in ((1, 1), (4, -1)):
                near[i]["frame"] += sgn * d
            write_wav(inst.mutant(f"two_events_{d:g}_frames_off".replace(".", "_"), lowers,
                                  f"the 2 retained events {d:g} frame off (seed ±1)") / OUTPUT, render(near))
        # removed shot's effects left in, dropped into the quiet middle of shot 1
        write_wav(inst.mutant("removed_left_in", [N.removed_gone], "a removed shot's effect left in the bounce")
                  / OUTPUT, render(events, extra=[(events[0]["frame"] + 10, removed[0]["sample"])]))
        write_wav(inst.mutant("bg_hole_at_cut", [N.bg_continuity], "BG not extended across a new cut")
                  / OUTPUT, render(events, hole_at=cuts[1]))
        write_wav(inst.mutant("v1_length", [N.length], "bounce still 1 s longer than the v2 cut") / OUTPUT,
                  render(events, length=v2_len + RATE_HZ))
        truncate_file(write_wav(inst.mutant("truncated_wav", list(N), "bounce cut off") / OUTPUT, render(events)))
