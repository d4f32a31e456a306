"""R06.04.02.02-T18: relight a face (+0.3..0.5 stop) through a handheld shot where a hand passes in front.

Render: state/confession_render.mov (made by the harness from the project: the instruction asks
for no render). GT: gt/source.mov, gt/masks.npz {face (visible face only), hand}, gt/shot.json
{occlusion_frames: [first, end)} — the seed's 00:00:09–00:00:11 mapped onto the synthetic clip.
Face gain, background and drift are the tracked-window checks of _shared/face_window.py (as T02) (gain in stops from linear Y; background
is the 95th percentile |gain| outside 1.3× the face box; drift is the positive-gain centroid against
the visible face's centroid, every frame). Occlusion: the hand's median gain on occlusion frames.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from verifiers.base import GTError
from verifiers.checks import Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.gtfiles import gt_field
from verifiers.paramtypes.grading import HandGain
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.face_window import centroid_offsets_px, window_checks
from verifiers.tasks.grading._shared.gain import linear_y, log2_gain, per_frame_gain
from verifiers.tasks.grading._shared.near_miss import render_writer, write_pair
from verifiers.tasks.grading._shared.preservation import GradingTask
from verifiers.tasks.grading._shared.regions import bbox_region, frame_share
from verifiers.tasks.grading._shared.shot import ShotFacts

OUTPUT = "state/confession_render.mov"
N_FRAMES = 30
FACE_R = (20, 26)


def make_scene(rng: np.random.Generator, n: int = N_FRAMES):
    t = np.arange(n)
    centre = np.c_[128 + 10 * np.sin(t / 5.0), 66 + 4 * np.sin(t / 3.0)]  # handheld wobble
    lab = g.flat(n, (38, 4, 8))
    lab[..., 0] += 8 * g.texture(rng, n, sigma_px=6, pan_px_per_frame=0.7) + 5 * g.texture(rng, n, sigma_px=1.2)
    face = g.ellipse(n, centre, FACE_R)
    lab[face] = (58, 14, 18)
    lab[..., 0][face] += 3 * g.texture(rng, n, sigma_px=2)[face]
    occ = [12, 18]
    hand = np.zeros_like(face)
    hx = np.interp(t, [occ[0] - 1, occ[1]], [60, 200])
    hand_all = g.ellipse(n, np.c_[hx, centre[:, 1] + 4], (16, 12))
    hand[occ[0]: occ[1]] = hand_all[occ[0]: occ[1]]
    lab[hand] = (66, 18, 22)
    return g.to_rgb8(lab), {"face": face & ~hand, "hand": hand}, centre, occ


def drifted(src: np.ndarray, face: np.ndarray, render: Any, centre: np.ndarray, offset_pct: float) -> np.ndarray:
    """Window centres moved, frame by frame, so the rendered gain centroid sits `offset_pct` of the face's
    width off the face's centre (the no_drift statistic): each frame's centre is pushed along the offset the
    render already has (the hand's cut-out moves it), three rounds of measure-and-correct."""
    y0, c = linear_y(src), centre.copy()
    for _ in range(3):
        vec, width = centroid_offsets_px(log2_gain(y0, linear_y(render(c))), face)
        vec = np.nan_to_num(vec)
        norm = np.hypot(vec[:, 0], vec[:, 1])
        unit = np.where(norm[:, None] > 0.5, vec / np.maximum(norm, 1e-9)[:, None], [1.0, 0.0])
        c = c + unit * (offset_pct / 100 * width - norm)[:, None]
    return c


TASK = "R06.04.02.02-T18"
N = check_names(TASK)


class OcclusionShotFacts(ShotFacts, task=TASK):
    """gt/shot.json of the interview shot: when the hand crosses the face."""

    occlusion_frames: list[int] = gt_field(doc="[first, end) frames of the hand crossing the face")
    occlusion_tc_in_seed: list[str] | None = gt_field(doc="the same span as the seed's timecodes (informative)",
                                                      default=None)

    def validate(self) -> None:
        occ = self.occlusion_frames
        self.expect(len(occ) == 2 and 0 <= occ[0] < occ[1], "occlusion_frames", "must be [first, end) with first < end")


class OccludedFace(GradingTask):
    task_id = TASK
    output = OUTPUT
    preserves = (N.background_untouched, N.occlusion_frames)
    primary_mask = "face"

    @provides
    def occlusion(self) -> tuple[int, int]:
        """[first, end) frames of the hand crossing the face (GT shot.json)."""
        a, b = self.ctx.gt_typed(OcclusionShotFacts).occlusion_frames
        return a, b

    face_gain, background_untouched, no_drift = window_checks(N.face_gain, N.background_untouched, N.no_drift)

    @check(N.occlusion_frames)
    def occlusion_frames(self, p: HandGain, curve: Curve) -> Result:
        a, b = self.occlusion
        gain = per_frame_gain(self.gmap[a:b], self.shot.mask("hand")[a:b])
        gain = gain[np.isfinite(gain)]
        if not len(gain):
            raise GTError("GT hand mask is empty on the occlusion frames")
        sc, pct = frame_share(curve, gain <= p.max_hand_gain_stops)
        return Result(sc, {"max_hand_gain_stop": float(gain.max()), "frames": [a, b], "frames_ok_pct": pct},
                      "" if sc == 1 else f"the hand brightened {gain.max():+.2f} stop as it crossed the face")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        src, masks, centre, occ = make_scene(rng)
        g.write_video(inst.gt / "source.mov", src)
        g.write_masks(inst.gt / "masks.npz", masks)
        inst.write_json(inst.gt / "shot.json", {"fps": g.FPS, "occlusion_frames": occ,
                                                "occlusion_tc_in_seed": ["00:00:09", "00:00:11"]})
        n = len(src)
        hand = masks["hand"]

        def relight(c: np.ndarray, stops: float = 0.4, scale: float = 1.1, keep_hand: bool = True) -> np.ndarray:
            a = np.clip(g.soften(g.ellipse(n, c, (FACE_R[0] * scale, FACE_R[1] * scale)), 3.0), 0, 1)
            if keep_hand:
                a = a * ~hand
            return g.grade_gain(src, a, stops)

        g.write_video(inst.oracle / OUTPUT, relight(centre))

        m = inst.mutant("hand_brightened", [N.occlusion_frames], "window not keyed off the hand: it lights up")
        g.write_video(m / OUTPUT, relight(centre, keep_hand=False))

        m = inst.mutant("too_subtle", [N.face_gain], "only +0.15 stop")
        g.write_video(m / OUTPUT, relight(centre, stops=0.15))

        m = inst.mutant("tracker_lost_after_hand", [N.no_drift, N.face_gain],
                        "the tracker follows the hand off the face after the occlusion")
        drift = centre.copy()
        drift[occ[0]:, 0] += np.minimum(np.arange(n - occ[0]) * 4.0, 30)
        g.write_video(m / OUTPUT, relight(drift))

        m = inst.mutant("window_too_big", [N.background_untouched], "window 1.8× the face: the wall lifts too")
        g.write_video(m / OUTPUT, relight(centre, scale=1.8))

        # near misses at the seed's line (0.3 … 0.5 stop): +0.33 stop passes in full, +0.27 fails every frame
        m = inst.mutant("near_miss_gain_inside", [], "face +0.33 stop: just inside the 0.3 stop edge")
        g.write_video(m / OUTPUT, relight(centre, stops=0.33))
        m = inst.mutant("near_miss_gain_outside", [N.face_gain], "face +0.27 stop: just outside the 0.3 stop edge")
        g.write_video(m / OUTPUT, relight(centre, stops=0.27))

        # near misses at the drift line (gain centroid within 15 % of the face's 41 px width): the window
        # 5 px (12 %) off the face's centre passes in full, 7 px (17 %) fails every frame
        write = render_writer(OUTPUT)

        write_pair(inst, "drift", N.no_drift, relight(drifted(src, masks["face"], relight, centre, 12.0)),
                   relight(drifted(src, masks["face"], relight, centre, 18.0)), write,
                   "window centroid 12 % of the face width off its centre on every frame: just inside 15 %",
                   "18 % off on every frame: just outside 15 %")
        # the background line (p95 |gain| ≤ 0.05 stop outside 1.3× the face box) is also the tracker's gain floor
        # (0.05 stop): a lift spread over the background would move the gain centroid, so the pair is a window
        # a little too big, symmetric about the face — its spill past the box reads 0.045 / 0.055 stop
        oracle, bg, y0 = relight(centre), ~bbox_region(masks["face"], 1.3), linear_y(src)

        def spill_p95(scale: float) -> np.ndarray:
            gm = np.abs(log2_gain(y0, linear_y(relight(centre, scale=scale))))
            return np.array([np.percentile(gm[i][bg[i]], 95) for i in range(n)])

        def scale_at(target: float, above: bool) -> float:  # smallest/largest scale whose every frame is past target
            lo, hi = 1.1, 2.0
            for _ in range(10):
                mid = (lo + hi) / 2
                p95 = spill_p95(mid)
                lo, hi = (mid, hi) if (p95.min() < target if above else p95.max() <= target) else (lo, mid)
            return hi if above else lo

        write_pair(inst, "background", N.background_untouched, relight(centre, scale=scale_at(0.045, above=False)),
                   relight(centre, scale=scale_at(0.055, above=True)), write,
                   "window a little too big: its spill past 1.3× the face box reads ≤ 0.045 stop (p95): just inside 0.05",
                   "a little bigger: ≥ 0.055 stop on every frame: just outside 0.05")
        a, b = occ
        hand_lit = {}
        for side, stops in (("inside", 0.035), ("outside", 0.065)):
            frames = oracle.copy()
            frames[a:b] = g.grade_gain(oracle[a:b], hand[a:b], stops)
            hand_lit[side] = frames
        write_pair(inst, "hand", N.occlusion_frames, hand_lit["inside"], hand_lit["outside"], write,
                   "hand lifted +0.035 stop as it crosses: just inside the 0.05 stop line", "+0.065 stop: just outside")
