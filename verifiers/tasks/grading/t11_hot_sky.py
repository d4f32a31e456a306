"""R06.04.02.02-T11: recover a hot desert sky with a gradient window and luma key.

Render: out/desert_sky.mov. GT: gt/source.mov, gt/masks.npz {sky, road, car}. Luma is Rec.709 Y'
of the decoded code values (0..1). Cloud detail is the standard deviation of L* inside the sky.
Banding (the seed names no threshold): within the sky's 2nd–98th percentile of 8-bit luma codes,
the share of codes no pixel uses, summed over the clip's frames; more than MAX_EMPTY_CODES_PCT
empty codes means the grade stretched quantised values (visible steps). A real grade works from
the camera's higher bit depth, so the synthetic oracle grades the float scene and quantises once.
"""

from __future__ import annotations

import numpy as np

from verifiers.base import Checks, ScoreContext
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading.common import (
    GradingVerifier,
    Shot,
    frame_share_score,
    interior,
    untouched_check,
)

OUTPUT = "out/desert_sky.mov"
MAX_EMPTY_CODES_PCT = 10.0
N_FRAMES = 24


def luma(rgb8: np.ndarray) -> np.ndarray:
    return (np.asarray(rgb8, dtype=np.float64) / 255.0) @ np.array([0.2126, 0.7152, 0.0722])


def make_scene(rng: np.random.Generator, n: int = N_FRAMES) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Float Lab: a near-clipping sky with faint clouds over sand, a road and a white car."""
    yy = np.arange(g.HEIGHT_PX)[None, :, None]
    sky = np.broadcast_to(yy < 60, (n, g.HEIGHT_PX, g.WIDTH_PX)).copy()
    road = np.broadcast_to(yy >= 100, (n, g.HEIGHT_PX, g.WIDTH_PX)).copy()
    car = g.rect(n, np.c_[g.path_linear(n, (20, 92), (150, 92)), np.tile([56, 22], (n, 1))])
    road &= ~car
    lab = g.flat(n, (70, 6, 28))  # sand
    lab[..., 0] += 5 * g.texture(rng, n, sigma_px=3)
    clouds = g.texture(rng, n, sigma_px=5, pan_px_per_frame=0.4)
    lab[..., 0] = np.where(sky, 93 + 3 * clouds + 0.4 * rng.standard_normal(sky.shape), lab[..., 0])
    lab[..., 1] = np.where(sky, -1.0, lab[..., 1])
    lab[..., 2] = np.where(sky, -6.0 + 2 * clouds, lab[..., 2])
    lab[road] = np.c_[30 + 3 * g.texture(rng, n, sigma_px=2)[road], np.zeros(road.sum()), np.full(road.sum(), 2.0)]
    lab[car] = (90, 0, 1)
    lab[..., 0][car] += 2 * g.texture(rng, n, sigma_px=2)[car]
    return lab, {"sky": sky, "road": road, "car": car}


def recover(lab: np.ndarray, sky: np.ndarray, *, stretch: float = 1.6, drop_l: float = 10.0) -> np.ndarray:
    """Sky L* stretched about its per-frame mean and lowered, on the float scene."""
    out = lab.copy()
    for i in range(len(lab)):
        m = lab[i][..., 0][sky[i]].mean()
        out[i][..., 0][sky[i]] = m + (lab[i][..., 0][sky[i]] - m) * stretch - drop_l
    return out


@register
class HotSky(GradingVerifier):
    task_id = "R06.04.02.02-T11"
    output = OUTPUT
    preserves = ("road_car_unchanged", "no_banding")

    def primary_region(self, shot: Shot) -> np.ndarray:
        return shot.mask("sky")

    def grade(self, ctx: ScoreContext, checks: Checks) -> None:
        shot = self.load(ctx, OUTPUT)
        sky = interior(shot.mask("sky"), 2)
        y0, y1 = luma(shot.src), luma(shot.out)

        p = checks.params("highlights_lowered")
        drop = np.array([100 * (1 - np.percentile(y1[i][sky[i]], 99) / np.percentile(y0[i][sky[i]], 99))
                         for i in range(shot.n)])
        sc, pct = frame_share_score(drop >= p["min_p99_drop_pct"])
        checks.set("highlights_lowered", sc, {"min_p99_drop_pct": float(drop.min()), "frames_ok_pct": pct},
                   "" if sc == 1 else f"sky p99 luma dropped only {drop.min():.1f}%")

        p = checks.params("cloud_detail")
        l0, l1 = shot.lab("src")[..., 0], shot.lab("out")[..., 0]
        gain = np.array([100 * (l1[i][sky[i]].std() / max(l0[i][sky[i]].std(), 1e-6) - 1) for i in range(shot.n)])
        sc, pct = frame_share_score(gain >= p["min_std_gain_pct"])
        checks.set("cloud_detail", sc, {"min_std_gain_pct": float(gain.min()), "frames_ok_pct": pct},
                   "" if sc == 1 else f"cloud L* std rose only {gain.min():.1f}%")

        sc, ev, msg = untouched_check(shot, ["road", "car"], checks.params("road_car_unchanged")["max_delta_e2000"])
        checks.set("road_car_unchanged", sc, ev, msg)

        codes = np.round(y1 * 255).astype(int)
        empty = []
        for i in range(shot.n):
            v = codes[i][sky[i]]
            lo, hi = np.percentile(v, [2, 98]).astype(int)
            v = v[(v >= lo) & (v <= hi)]
            used = np.bincount(v - lo, minlength=hi - lo + 1) if hi > lo else np.ones(1)
            empty.append(100.0 * float(np.mean(used == 0)))
        empty_arr = np.array(empty)
        sc, pct = frame_share_score(empty_arr <= MAX_EMPTY_CODES_PCT)
        checks.set("no_banding", sc, {"max_empty_codes_pct": float(empty_arr.max()), "limit_pct": MAX_EMPTY_CODES_PCT,
                                      "frames_ok_pct": pct},
                   "" if sc == 1 else f"sky histogram has {empty_arr.max():.0f}% empty luma codes (banding)")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        lab, masks = make_scene(rng)
        src = g.to_rgb8(lab)
        sky = masks["sky"]
        g.write_shot(inst, src, masks)
        oracle = g.to_rgb8(recover(lab, sky))
        g.write_video(inst.oracle / OUTPUT, oracle)

        m = inst.mutant("luma_key_catches_car", ["road_car_unchanged"], "the luma key also darkened the white car")
        car = masks["car"]
        leak = g.to_rgb8(recover(lab, sky))
        car_lab = lab.copy()
        car_lab[..., 0] = np.where(car, lab[..., 0] - 10, lab[..., 0])
        leak[car] = g.to_rgb8(car_lab)[car]
        g.write_video(m / OUTPUT, leak)

        m = inst.mutant("darken_only", ["cloud_detail"], "sky lowered without any contrast: clouds stay flat")
        g.write_video(m / OUTPUT, g.to_rgb8(recover(lab, sky, stretch=1.0)))

        m = inst.mutant("contrast_only", ["highlights_lowered", "no_banding", "road_car_unchanged"],
                        "contrast added but highlights not pulled down (no primary change: preservation not credited)")
        g.write_video(m / OUTPUT, g.to_rgb8(recover(lab, sky, drop_l=0.0)))

        m = inst.mutant("posterised_sky", ["no_banding"], "8-bit stretch: sky codes in steps of 4")
        band = oracle.copy()
        band[sky] = (band[sky] // 4) * 4
        g.write_video(m / OUTPUT, band)
