"""R06.04.02.02-T03: shift a drone shot's sky toward teal inside a tracked gradient window.

Render: out/coast_teal.mov. GT: gt/source.mov, gt/masks.npz {sky, cliffs, sea}, gt/shot.json
{horizon_y: per-frame row of the horizon at each column's centre, reference_height_px}.
"Toward teal" is measured against teal's CIELAB hue (TEAL_HUE_DEG): the sky's mean hue must get
10–20° closer to it. Cliff/sea pixels within BAND_PX of the horizon are left out of the untouched
check because a gradient window's soft band legitimately reaches a little below the horizon.
The window's transition row per column is where the render's change falls to half of the sky's;
the seed's 60 px is at 1080 lines and is scaled to the shot's height.
"""

from __future__ import annotations

import numpy as np

from verifiers.checks import Result, check, check_names
from verifiers.curves import Curve
from verifiers.gtfiles import gt_field
from verifiers.measure.colour import hue_difference_deg
from verifiers.paramtypes.grading import HorizonBand, HueShift, LDropRange, MaxDeltaE
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.near_miss import render_writer, untouched_pair, write_pair
from verifiers.tasks.grading._shared.preservation import GradingTask
from verifiers.tasks.grading._shared.regions import (
    circular_mean_hue,
    frame_share,
    masked_mean,
    outside,
    untouched_check,
)
from verifiers.tasks.grading._shared.shot import ShotFacts

OUTPUT = "out/coast_teal.mov"
TEAL_HUE_DEG = 196.0
BAND_PX = 10
REFERENCE_HEIGHT_PX = 1080
N_FRAMES = 24


def horizon_rows(n: int) -> np.ndarray:
    """(n, width) horizon row per column: the drone tilts and rises, the horizon drifts and leans."""
    x = np.arange(g.WIDTH_PX)
    base = np.linspace(50, 78, n)[:, None]
    tilt = np.linspace(-0.06, 0.06, n)[:, None]
    return base + tilt * (x[None] - g.WIDTH_PX / 2)


def make_scene(rng: np.random.Generator, n: int = N_FRAMES) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    rows = horizon_rows(n)
    yy = np.arange(g.HEIGHT_PX)[None, :, None]
    sky = yy < rows[:, None, :]
    cliffs = ~sky & (np.arange(g.WIDTH_PX)[None, None, :] < 90)
    sea = ~sky & ~cliffs
    lab = g.flat(n, (0, 0, 0))
    grad = (yy / g.HEIGHT_PX).repeat(g.WIDTH_PX, axis=2).repeat(n, axis=0)
    lab[..., 0] = np.where(sky, 78 - 20 * grad, 0)
    lab[..., 1] = np.where(sky, -2 + 4 * grad, 0)
    lab[..., 2] = np.where(sky, -30 + 6 * grad, 0)
    cl = g.texture(rng, n, sigma_px=3, pan_px_per_frame=0.3)
    lab[cliffs] = np.c_[45 + 10 * cl[cliffs], np.full(cliffs.sum(), 8.0), np.full(cliffs.sum(), 22.0)]
    se = g.texture(rng, n, sigma_px=2, pan_px_per_frame=0.6)
    lab[sea] = np.c_[35 + 6 * se[sea], np.full(sea.sum(), -12.0), np.full(sea.sum(), -18.0)]
    lab[..., 0][sky] += 2 * g.texture(rng, n, sigma_px=8)[sky]
    return g.to_rgb8(lab), {"sky": sky, "cliffs": cliffs, "sea": sea}, rows


def window_alpha(rows: np.ndarray, softness_px: float = 4.0) -> np.ndarray:
    """A gradient window: 1 above the given horizon rows, falling to 0 over ~softness below it."""
    yy = np.arange(g.HEIGHT_PX)[None, :, None]
    return np.clip((rows[:, None, :] + 1 - yy) / softness_px + 1.0, 0.0, 1.0) * (yy < rows[:, None, :] + softness_px)


TASK = "R06.04.02.02-T03"
N = check_names(TASK)


class SkyShotFacts(ShotFacts, task=TASK):
    """gt/shot.json of the coast shot: where the horizon is on every frame."""

    horizon_y_px: list[list[float]] = gt_field("horizon_y", "per frame, per column: the horizon's row")
    reference_height_px: int = gt_field(doc="frame height the seed's distances are given at", default=REFERENCE_HEIGHT_PX)

    def validate(self) -> None:
        self.expect(bool(self.horizon_y_px) and len({len(r) for r in self.horizon_y_px}) == 1, "horizon_y_px",
                    "must hold one row per column for every frame")


def band_distance_px(change: np.ndarray, core: np.ndarray, rows: np.ndarray) -> float:
    """Mean over every 4th column of |row where the change falls below half the sky's - horizon row|."""
    ref = np.median(change[core])
    if ref < 1.0:
        return np.inf
    cols = []
    for x in range(0, change.shape[1], 4):
        below = np.nonzero(change[:, x] < 0.5 * ref)[0]
        edge = below[0] if len(below) else change.shape[0]
        cols.append(abs(edge - rows[x]))
    return float(np.mean(cols))


class SkyTeal(GradingTask):
    task_id = TASK
    output = OUTPUT
    preserves = (N.cliffs_sea_unchanged, N.sky_luminance)
    primary_mask = "sky"
    core_band_px = 3

    @check(N.sky_hue)
    def sky_hue(self, p: HueShift, curve: Curve) -> Result:
        shot, core = self.shot, self.core
        ls, lo = shot.lab("src"), shot.lab("out")
        toward = np.zeros(shot.n)
        for i in range(shot.n):
            h0 = circular_mean_hue(ls[i], core[i])
            h1 = circular_mean_hue(lo[i], core[i])
            toward[i] = abs(hue_difference_deg(h0, TEAL_HUE_DEG)) - abs(hue_difference_deg(h1, TEAL_HUE_DEG))
        sc, pct = frame_share(curve, (toward >= p.min_hue_shift_deg) & (toward <= p.max_hue_shift_deg))
        return Result(sc, {"min_shift_toward_teal_deg": float(toward.min()),
                           "max_shift_toward_teal_deg": float(toward.max()), "frames_ok_pct": pct},
                      "" if sc == 1 else f"sky hue moved {toward.min():.1f}..{toward.max():.1f}° toward teal")

    @check(N.sky_luminance)
    def sky_luminance(self, p: LDropRange, curve: Curve) -> Result:
        shot, core = self.shot, self.core
        drop = masked_mean(shot.lab("src")[..., 0], core) - masked_mean(shot.lab("out")[..., 0], core)
        sc, pct = frame_share(curve, (drop >= p.min_l_drop_lab - 0.05) & (drop <= p.max_l_drop_lab))
        return Result(sc, {"min_l_drop": float(drop.min()), "max_l_drop": float(drop.max()), "frames_ok_pct": pct},
                      "" if sc == 1 else f"sky L* drop {drop.min():.1f}..{drop.max():.1f} outside range")

    @check(N.cliffs_sea_unchanged)
    def cliffs_sea_unchanged(self, p: MaxDeltaE, curve: Curve) -> Result:
        shot = self.shot
        away = outside(shot.mask("sky"), BAND_PX)
        shot.masks["_cliffs_away"] = shot.mask("cliffs") & away
        shot.masks["_sea_away"] = shot.mask("sea") & away
        res = untouched_check(shot, ["_cliffs_away", "_sea_away"], p.max_de2000, curve)
        return Result(res.score, {**res.evidence, "excluded_band_below_horizon_px": BAND_PX}, res.message)

    @check(N.window_tracks_horizon)
    def window_tracks_horizon(self, p: HorizonBand, curve: Curve) -> Result:
        shot = self.shot
        rows = np.asarray(self.ctx.gt_typed(SkyShotFacts).horizon_y_px, dtype=float)
        if rows.shape != (shot.n, shot.src.shape[2]):
            return Result.cannot_judge(f"GT shot.json horizon_y is {rows.shape[0]}x{rows.shape[1]}, "
                                       f"the shot is {shot.n} frames x {shot.src.shape[2]} columns")
        limit_px = p.max_band_distance_px * shot.src.shape[1] / REFERENCE_HEIGHT_PX
        change = np.linalg.norm(shot.lab("out")[..., 1:] - shot.lab("src")[..., 1:], axis=-1)
        dist = np.array([band_distance_px(change[i], self.core[i], rows[i]) for i in range(shot.n)])
        sc, pct = frame_share(curve, dist <= limit_px)
        return Result(sc, {"max_mean_band_distance_px": float(dist.max()), "limit_px": limit_px, "frames_ok_pct": pct},
                      "" if sc == 1 else f"window band {dist.max():.1f} px from the horizon (limit {limit_px:.1f})")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        src, masks, rows = make_scene(rng)
        g.write_shot(inst, src, masks, {"horizon_y": np.round(rows, 2).tolist(), "reference_height_px": REFERENCE_HEIGHT_PX})
        # The sky sits near 265°: toward teal (196°) is a negative rotation.
        alpha = window_alpha(rows)
        g.write_video(inst.oracle / OUTPUT, g.grade_lab(src, alpha, hue_deg=-15, dl=-2))

        m = inst.mutant("hue_wrong_way", [N.sky_hue], "sky rotated 15° away from teal (toward purple)")
        g.write_video(m / OUTPUT, g.grade_lab(src, alpha, hue_deg=15, dl=-2))

        m = inst.mutant("sky_darkened", [N.sky_luminance], "sky pulled down 10 L*")
        g.write_video(m / OUTPUT, g.grade_lab(src, alpha, hue_deg=-15, dl=-10))

        # near misses at the seed's lines (hue 10…20° toward teal, L* drop 0…6): −18° and −5 L* pass in
        # full, −22° and −7 L* fail every frame (measured on the sky's core: 22.2°, 7.0 L*)
        for name, lowers, why, hue, dl in (
                ("near_miss_hue_inside", [], "18° toward teal: just inside the 20° edge", -18, -2),
                ("near_miss_hue_outside", [N.sky_hue], "22° toward teal: just outside the 20° edge", -22, -2),
                ("near_miss_luma_inside", [], "sky down 5 L*: just inside the 6 L* edge", -15, -5),
                ("near_miss_luma_outside", [N.sky_luminance], "sky down 7 L*: just outside the 6 L* edge", -15, -7)):
            m = inst.mutant(name, lowers, why)
            g.write_video(m / OUTPUT, g.grade_lab(src, alpha, hue_deg=hue, dl=dl))

        m = inst.mutant("window_too_soft", [N.cliffs_sea_unchanged, N.window_tracks_horizon],
                        "gradient softness reaches 40 px into the cliffs and sea (its half-change row "
                        "drops below the horizon too)")
        a = window_alpha(rows + 36, softness_px=40)
        a = np.maximum(a * (np.arange(g.HEIGHT_PX)[None, :, None] >= rows[:, None, :]), alpha)
        g.write_video(m / OUTPUT, g.grade_lab(src, a, hue_deg=-15, dl=-2))

        m = inst.mutant("window_not_tracked", [N.window_tracks_horizon],
                        "window frozen at the first frame's horizon: later frames grade only the upper sky")
        static = window_alpha(np.repeat(rows[:1] - 0, len(rows), axis=0))
        g.write_video(m / OUTPUT, g.grade_lab(src, static, hue_deg=-15, dl=-2))

        write = render_writer(OUTPUT)

        # near misses at the window line (60 px at 1080 = 8 px here): the window raised 11 px leaves its
        # half-change row 7.4-7.6 px from the horizon (passes), raised 12 px 8.4-8.6 px (fails every frame);
        # the sky above keeps its hue and L* (the core's lower rows ungraded: its mean still in range)
        write_pair(inst, "horizon", N.window_tracks_horizon, g.grade_lab(src, window_alpha(rows - 11), hue_deg=-15, dl=-2),
                   g.grade_lab(src, window_alpha(rows - 12), hue_deg=-15, dl=-2), write,
                   "window 11 px above the horizon: band 7.5 px off, just inside the 8 px (60 at 1080) line",
                   "12 px above: band 8.5 px off, just outside 8 px")

        away = outside(masks["sky"], BAND_PX)
        untouched_pair(inst, N.cliffs_sea_unchanged, g.grade_lab(src, alpha, hue_deg=-15, dl=-2), src,
                       [masks["cliffs"] & away, masks["sea"] & away], 1.5, write, "cliffs_sea")
