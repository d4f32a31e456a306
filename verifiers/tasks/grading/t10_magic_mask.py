"""R06.04.02.02-T10: separate a skater with Magic Mask and cool/desaturate the background.

Render: out/skate_mask.mov. GT: gt/source.mov, gt/masks.npz {skater}. Node graph: state/grade.drx
needs a Magic Mask node. The implied mask is every pixel whose colour changed by less than 1 ΔE2000;
its IoU with the GT skater is computed on a 2× subsampled pixel grid (every other row and column,
said in the evidence). Background: change of mean C*ab in percent, and mean b* shift (render −
source), over the background away from a 3 px band round the skater.
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import binary_dilation, binary_erosion, distance_transform_edt, gaussian_filter

from verifiers.checks import Result, check, check_names
from verifiers.curves import Curve
from verifiers.measure.colour import delta_e2000
from verifiers.params import NoParams
from verifiers.paramtypes.grading import BackgroundGrade, ImpliedMask
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.near_miss import untouched_pair, write_pair
from verifiers.tasks.grading._shared.node_graph import node_check
from verifiers.tasks.grading._shared.preservation import GradingTask
from verifiers.tasks.grading._shared.regions import (
    chroma_change_pct,
    frame_share,
    frames_within,
    masked_mean,
    outside,
    untouched,
)
from verifiers.tasks.grading._shared.shot import Shot, erode_xy

OUTPUT = "out/skate_mask.mov"
DRX = "state/grade.drx"
GRID = 2
N_FRAMES = 24


def make_scene(rng: np.random.Generator, n: int = N_FRAMES):
    lab = g.flat(n, (60, 0, 4))
    lab[..., 0] += 8 * g.texture(rng, n, sigma_px=4, pan_px_per_frame=1.0)
    for (x, y, w, h), col in (((10, 10, 50, 30), (55, 40, 20)), ((190, 20, 50, 40), (60, -30, -10)),
                              ((100, 5, 40, 20), (70, 10, -35))):
        m = g.rect(n, np.tile([x, y, w, h], (n, 1)))
        lab[m] = col
    c = g.path_linear(n, (50, 80), (200, 76))
    body = g.ellipse(n, c, (12, 30)) | g.ellipse(n, c + np.array([0.0, -36.0]), (8, 9))
    lab[body] = (45, 25, 30)
    lab[..., 0][body] += 5 * g.texture(rng, n, sigma_px=2)[body]
    return g.to_rgb8(lab), {"skater": body}


def loose_matte(skater: np.ndarray, iou: float, rng: np.random.Generator) -> np.ndarray:
    """The skater's matte grown frame by frame by its nearest outside pixels (ties drawn at random) until
    |skater| / |matte| = `iou`: a matte just loose enough to leave that implied-mask IoU."""
    out = skater.copy()
    for i, f in enumerate(skater):
        dist = np.where(f, np.inf, distance_transform_edt(~f) + 0.5 * rng.random(f.shape))
        out[i].flat[np.argsort(dist, axis=None)[: round(float(f.sum()) * (1 / iou - 1))]] = True
    return out


TASK = "R06.04.02.02-T10"
N = check_names(TASK)


class MagicMask(GradingTask):
    task_id = TASK
    output = OUTPUT
    preserves = (N.skater_untouched, N.magic_mask_node)

    def primary_region(self, shot: Shot) -> np.ndarray:
        """The background (everything 3 px or more clear of the skater): where the grade is asked for and
        what background_grade reads."""
        return outside(shot.mask("skater"), 3)

    @check(N.magic_mask_node)
    def magic_mask_node(self, p: NoParams, curve: Curve) -> Result:
        return node_check(self.ctx, DRX, ("magicmask",), "Magic Mask", curve)

    @check(N.mask_quality)
    def mask_quality(self, p: ImpliedMask, curve: Curve) -> Result:
        shot = self.shot
        ls, lo = shot.lab("src")[:, ::GRID, ::GRID], shot.lab("out")[:, ::GRID, ::GRID]
        # rule 4: a pixel is "unchanged" when it moved < the seed's ΔE above what the export alone moved it
        de = delta_e2000(ls, lo)
        if shot.floor is not None:  # both maps smoothed 1 px so two codec-noise draws compare like for like
            fl = delta_e2000(ls, shot.lab("floor")[:, ::GRID, ::GRID])
            de = gaussian_filter(de, (0, 1.0, 1.0)) - gaussian_filter(fl, (0, 1.0, 1.0))
        implied = de < p.implied_mask_max_de2000
        gt = shot.mask("skater")[:, ::GRID, ::GRID]
        gy, gx = shot.guard_px()
        if gy or gx:  # the render's chroma share at the skater's outline belongs to both sides: not judged
            cy, cx = -(-gy // GRID), -(-gx // GRID)
            edge = ~erode_xy(gt, cy, cx) & ~erode_xy(~gt, cy, cx)
            implied, gt = implied & ~edge, gt & ~edge
        iou = (implied & gt).sum(axis=(1, 2)) / np.maximum((implied | gt).sum(axis=(1, 2)), 1)
        sc, pct = frame_share(curve, iou >= p.min_iou)
        return Result(sc, {"min_iou": float(iou.min()), "mean_iou": float(iou.mean()), "grid_px": GRID,
                           "frames_ok_pct": pct, **shot.floor_info()},
                      "" if sc == 1 else f"implied mask IoU ≥ {p.min_iou} on only {pct:.0f}% of frames")

    @check(N.background_grade)
    def background_grade(self, p: BackgroundGrade, curve: Curve) -> Result:
        shot = self.shot
        bg = self.primary_region(shot)
        dc = chroma_change_pct(shot, bg)
        db = masked_mean(shot.lab("out")[..., 2], bg) - masked_mean(shot.lab("src")[..., 2], bg)
        return frames_within(curve, {"chroma_change_pct": (dc, p.min_chroma_change_pct, p.max_chroma_change_pct),
                                     "b_shift": (db, p.min_b_shift_lab, p.max_b_shift_lab)},
                             lambda _pct: f"background chroma {dc.mean():+.0f}%, b* {db.mean():+.1f}")

    skater_untouched = untouched(N.skater_untouched, "skater")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        src, masks = make_scene(rng)
        sk = masks["skater"]
        g.write_shot(inst, src, masks)
        nodes = [{"id": "1", "type": "Corrector"}, {"id": "2", "type": "MagicMask", "mode": "person"},
                 {"id": "3", "type": "Corrector", "mask_input": "2", "invert": "1"}]

        def grade(matte: np.ndarray, chroma: float = 0.6, db: float = -4.0) -> np.ndarray:
            return g.grade_lab(src, ~matte, chroma_scale=chroma, db=db)

        g.write_video(inst.oracle / OUTPUT, grade(sk))
        g.drx(inst.oracle / DRX, nodes)

        m = inst.mutant("matte_too_loose", [N.mask_quality], "matte 4 px too big: an ungraded halo round the skater")
        g.write_video(m / OUTPUT, grade(np.stack([binary_dilation(f, iterations=4) for f in sk])))
        g.drx(m / DRX, nodes)

        m = inst.mutant("matte_choked", [N.mask_quality, N.skater_untouched],
                        "matte eroded 3 px: the skater's edges take the cool grade")
        g.write_video(m / OUTPUT, grade(np.stack([binary_erosion(f, iterations=3) for f in sk])))
        g.drx(m / DRX, nodes)

        m = inst.mutant("desaturated_not_cooled", [N.background_grade], "background desaturated but not cooled")
        g.write_video(m / OUTPUT, grade(sk, db=0.0))
        g.drx(m / DRX, nodes)

        m = inst.mutant("window_not_magic_mask", [N.magic_mask_node], "skater isolated with a tracked window")
        g.write_video(m / OUTPUT, grade(sk))
        g.drx(m / DRX, [nodes[0], {"id": "3", "type": "Corrector", "window": "Circle", "tracked": "1"}])

        # near misses at the seed's b* line (−8 … −3): the background's chroma is mostly its warm b*, so the
        # cooling also cuts chroma; at chroma ×0.82 a b* offset of −2.5 reads b* −3.2 (chroma −46 … −49 %, in range) and
        # passes in full, −2.0 reads b* −2.7 (chroma −41 … −43 %) and fails every frame
        for name, lowers, why, db in (
                ("near_miss_cool_inside", [], "background b* −3.2: just inside the −3 b* edge", -2.5),
                ("near_miss_cool_outside", [N.background_grade], "background b* −2.7: just outside −3", -2.0)):
            m = inst.mutant(name, lowers, why)
            g.write_video(m / OUTPUT, grade(sk, chroma=0.82, db=db))
            g.drx(m / DRX, nodes)

        def write(folder, frames: np.ndarray) -> None:
            g.write_video(folder / OUTPUT, frames)
            g.drx(folder / DRX, nodes)

        # the chroma line's −50 % edge (the −30 % edge cannot be met with b* ≤ −3 here: the cooling is most
        # of the warm background's chroma): b* offset −3.9 cuts chroma 48 %, −3.6 cuts it 51 % (b* −5.2 … −5.5)
        write_pair(inst, "chroma", N.background_grade, grade(sk, chroma=0.5, db=-3.9), grade(sk, chroma=0.5, db=-3.6),
                   write, "background chroma −48 %: just inside the −50 % edge",
                   "background chroma −51 %: just outside the −50 % edge")
        write_pair(inst, "matte", N.mask_quality, grade(loose_matte(sk, 0.935, rng)),
                   grade(loose_matte(sk, 0.865, rng)), write,
                   "matte grown to |skater| / |matte| 0.935 (implied-mask IoU ≥ 0.9 on ≥ 95 % of frames): just inside",
                   "matte grown to 0.865 (IoU < 0.9 on every frame): just outside 0.9")

        # the skater's line (mean ΔE2000 ≤ 1) is also the implied mask's (a pixel moved < 1 is "unchanged"):
        # a skater lifted to 1.2 everywhere has left the implied mask too, so the outside case lowers both
        untouched_pair(inst, N.skater_untouched, grade(sk), src, [sk], 1.0, write, "skater", also=[N.mask_quality])
