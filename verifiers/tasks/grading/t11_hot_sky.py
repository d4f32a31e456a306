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

from verifiers.checks import Result, check, check_names
from verifiers.curves import Curve
from verifiers.params import NoParams
from verifiers.paramtypes.grading import CloudDetail, HighlightsLowered
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.near_miss import bisect_frames, render_writer, untouched_pair, write_pair
from verifiers.tasks.grading._shared.preservation import GradingTask
from verifiers.tasks.grading._shared.regions import frame_share, interior, untouched

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


TASK = "R06.04.02.02-T11"
N = check_names(TASK)


def empty_codes_pct(codes: np.ndarray) -> float:
    """Share of unused 8-bit codes between the values' 2nd and 98th percentile (banding leaves gaps)."""
    lo, hi = np.percentile(codes, [2, 98]).astype(int)
    v = codes[(codes >= lo) & (codes <= hi)]
    used = np.bincount(v - lo, minlength=hi - lo + 1) if hi > lo else np.ones(1)
    return 100.0 * float(np.mean(used == 0))


class HotSky(GradingTask):
    task_id = TASK
    output = OUTPUT
    preserves = (N.road_car_unchanged, N.no_banding)
    primary_mask = "sky"
    core_band_px = 2

    @check(N.highlights_lowered)
    def highlights_lowered(self, p: HighlightsLowered, curve: Curve) -> Result:
        shot, sky = self.shot, self.core
        y0, y1 = luma(shot.src), luma(shot.out)
        drop = np.array([100 * (1 - np.percentile(y1[i][sky[i]], 99) / np.percentile(y0[i][sky[i]], 99))
                         for i in range(shot.n)])
        sc, pct = frame_share(curve, drop >= p.min_p99_drop_pct)
        return Result(sc, {"min_p99_drop_pct": float(drop.min()), "frames_ok_pct": pct},
                      "" if sc == 1 else f"sky p99 luma dropped only {drop.min():.1f}%")

    @check(N.cloud_detail)
    def cloud_detail(self, p: CloudDetail, curve: Curve) -> Result:
        shot, sky = self.shot, self.core
        # rule 4: the render's cloud texture is compared with the source's through the same export (a lossy
        # codec smooths faint clouds: seed 11's CRF 23 export of the oracle read +22 % against the raw source)
        l0 = shot.lab("src" if shot.floor is None else "floor")[..., 0]
        l1 = shot.lab("out")[..., 0]
        gain = np.array([100 * (l1[i][sky[i]].std() / max(l0[i][sky[i]].std(), 1e-6) - 1) for i in range(shot.n)])
        sc, pct = frame_share(curve, gain >= p.min_std_gain_pct)
        return Result(sc, {"min_std_gain_pct": float(gain.min()), "frames_ok_pct": pct},
                      "" if sc == 1 else f"cloud L* std rose only {gain.min():.1f}%")

    road_car_unchanged = untouched(N.road_car_unchanged, "road", "car")

    @check(N.no_banding)
    def no_banding(self, p: NoParams, curve: Curve) -> Result:
        shot, sky = self.shot, self.core
        empty = np.array([empty_codes_pct(sky_codes(shot.out[i], sky[i])) for i in range(shot.n)])
        sc, pct = frame_share(curve, empty <= MAX_EMPTY_CODES_PCT)
        return Result(sc, {"max_empty_codes_pct": float(empty.max()), "limit_pct": MAX_EMPTY_CODES_PCT,
                           "frames_ok_pct": pct},
                      "" if sc == 1 else f"sky histogram has {empty.max():.0f}% empty luma codes (banding)")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        lab, masks = make_scene(rng)
        src = g.to_rgb8(lab)
        sky = masks["sky"]
        g.write_shot(inst, src, masks)
        oracle = g.to_rgb8(recover(lab, sky))
        g.write_video(inst.oracle / OUTPUT, oracle)

        m = inst.mutant("luma_key_catches_car", [N.road_car_unchanged], "the luma key also darkened the white car")
        car = masks["car"]
        leak = g.to_rgb8(recover(lab, sky))
        car_lab = lab.copy()
        car_lab[..., 0] = np.where(car, lab[..., 0] - 10, lab[..., 0])
        leak[car] = g.to_rgb8(car_lab)[car]
        g.write_video(m / OUTPUT, leak)

        m = inst.mutant("darken_only", [N.cloud_detail], "sky lowered without any contrast: clouds stay flat")
        g.write_video(m / OUTPUT, g.to_rgb8(recover(lab, sky, stretch=1.0)))

        m = inst.mutant("contrast_only", [N.highlights_lowered, N.no_banding, N.road_car_unchanged],
                        "contrast added but highlights not pulled down (no primary change: preservation not credited)")
        g.write_video(m / OUTPUT, g.to_rgb8(recover(lab, sky, drop_l=0.0)))

        m = inst.mutant("posterised_sky", [N.no_banding], "8-bit stretch: sky codes in steps of 4")
        band = oracle.copy()
        band[sky] = (band[sky] // 4) * 4
        g.write_video(m / OUTPUT, band)

        # near misses at the seed's line (p99 luma ≥ 8 % lower): sky 8.7 L* down passes in full, 7 L* fails every frame
        m = inst.mutant("near_miss_drop_inside", [], "sky p99 about 9 % lower: just inside the 8 % edge")
        g.write_video(m / OUTPUT, g.to_rgb8(recover(lab, sky, drop_l=8.7)))
        m = inst.mutant("near_miss_drop_outside", [N.highlights_lowered], "sky p99 about 7 % lower: just outside 8 %")
        g.write_video(m / OUTPUT, g.to_rgb8(recover(lab, sky, drop_l=7.0)))

        write = render_writer(OUTPUT)

        write_pair(inst, "clouds", N.cloud_detail, g.to_rgb8(recover(lab, sky, stretch=1.33)),
                   g.to_rgb8(recover(lab, sky, stretch=1.28)), write,
                   "cloud L* std up ≈ 32 %: just inside the 30 % edge", "std up ≈ 27 %: just outside 30 %")

        untouched_pair(inst, N.road_car_unchanged, oracle, src, [masks["road"], masks["car"]], 1.5, write, "road_car")
        # the banding line (≤ MAX_EMPTY_CODES_PCT empty luma codes, the project's constant): the posterised_sky
        # mistake (codes in steps of 4) on the darker part of the sky only, that part's top code bisected frame
        # by frame on the scorer's statistic so that the empty share sits one code either side of the line
        core = interior(sky, self.core_band_px)

        def posterised(i: int, share: float) -> np.ndarray:  # share 0: the oracle's frame, 1: its whole sky
            frame, codes = oracle[i:i + 1].copy(), sky_codes(oracle[i], core[i])
            sel = core[i:i + 1] & (np.round(luma(frame) * 255) < codes.min() + share * (codes.max() + 1 - codes.min()))
            frame[sel] = (frame[sel] // 4) * 4
            return frame

        def empty_pct(i: int, frame: np.ndarray) -> float:
            return empty_codes_pct(sky_codes(frame[0], core[i]))

        write_pair(inst, "banding", N.no_banding,
                   bisect_frames(len(oracle), posterised, empty_pct, MAX_EMPTY_CODES_PCT, x_below=0.0, x_above=1.0,
                                 above=False, steps=10),
                   bisect_frames(len(oracle), posterised, empty_pct, MAX_EMPTY_CODES_PCT + 1e-6, x_below=0.0,
                                 x_above=1.0, above=True, steps=10), write,
                   f"the darker sky posterised up to {MAX_EMPTY_CODES_PCT:g} % empty codes: just inside the line",
                   "one more code posterised: just over the line")


def sky_codes(frame8: np.ndarray, core: np.ndarray) -> np.ndarray:
    """The 8-bit luma codes of one frame's sky core, as no_banding reads them."""
    return np.round(luma(frame8) * 255).astype(int)[core]
