"""R06.04.02.02-T07: repaint a moving car from blue to red, keeping reflections, glass and chrome.

Render: out/car_red.mov. GT: gt/source.mov, gt/masks.npz {paint, sky, glass, chrome}. Paint hue is
the hue of the mean a*, b* over the paint mask (range 350°–15° wraps through 0°); chroma is the
mean per-pixel C*ab ratio render/source. Reflections: Pearson correlation of L* render vs source
over the paint pixels of each frame. Mask stability: the recoloured region (pixels whose hue moved
more than RECOLOURED_DEG with chroma ≥ CHROMATIC) against the GT paint mask, IoU per frame.
"""

from __future__ import annotations

import numpy as np

from verifiers.checks import Result, check, check_names
from verifiers.curves import Curve
from verifiers.measure.colour import hue_deg, hue_difference_deg
from verifiers.paramtypes.grading import MaskIou, PaintRecolor, Reflections
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.near_miss import render_writer, untouched_pair, write_pair
from verifiers.tasks.grading._shared.preservation import GradingTask
from verifiers.tasks.grading._shared.regions import circular_mean_hue, frame_share, masked_mean, untouched

OUTPUT = "out/car_red.mov"
RECOLOURED_DEG = 20.0
CHROMATIC = 10.0
N_FRAMES = 24


def make_scene(rng: np.random.Generator, n: int = N_FRAMES) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Blue sky, grey road, and a blue car (glass, chrome strip) driving right."""
    yy = np.arange(g.HEIGHT_PX)[None, :, None]
    lab = g.flat(n, (45, 0, 2))
    lab[..., 0] += 6 * g.texture(rng, n, pan_px_per_frame=1.0)
    sky = np.broadcast_to(yy < 50, (n, g.HEIGHT_PX, g.WIDTH_PX)).copy()
    x = g.path_linear(n, (30, 0), (140, 0))[:, 0]
    body = g.rect(n, np.c_[x, np.full(n, 70), np.full(n, 86), np.full(n, 34)])
    glass = g.rect(n, np.c_[x + 18, np.full(n, 52), np.full(n, 46), np.full(n, 18)])
    chrome = g.rect(n, np.c_[x, np.full(n, 94), np.full(n, 86), np.full(n, 3)])
    paint = body & ~chrome
    sky &= ~glass
    lab[sky] = (72, -6, -30)
    lab[glass] = (28, -2, -8)
    lab[paint] = (40, 10, -50)
    lab[..., 0][paint] += 14 * g.texture(rng, n, sigma_px=3)[paint]  # reflections
    lab[chrome] = (82, 0, 0)
    return g.to_rgb8(lab), {"paint": paint, "sky": sky, "glass": glass, "chrome": chrome}


def hue_in(h: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Hue range test that wraps through 0° when lo > hi."""
    return ((h >= lo) | (h <= hi)) if lo > hi else ((h >= lo) & (h <= hi))


TASK = "R06.04.02.02-T07"
N = check_names(TASK)


def l_correlation(ls: np.ndarray, lo: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per frame: Pearson r of L* over the mask, source vs `lo` (NaN where undefined)."""
    return np.array([np.corrcoef(ls[i][..., 0][mask[i]], lo[i][..., 0][mask[i]])[0, 1] for i in range(len(mask))])


class CarPaint(GradingTask):
    task_id = TASK
    output = OUTPUT
    preserves = (N.reflections_preserved, N.sky_glass_untouched)
    primary_mask = "paint"

    @check(N.paint_recolored)
    def paint_recolored(self, p: PaintRecolor, curve: Curve) -> Result:
        shot, paint, (c0, c1) = self.shot, self.shot.mask("paint"), self.chroma
        hue = np.array([circular_mean_hue(shot.lab("out")[i], paint[i]) for i in range(shot.n)])
        ratio = masked_mean(c1, paint) / masked_mean(c0, paint)
        sc, pct = frame_share(curve, hue_in(hue, p.min_hue_deg, p.max_hue_deg) & (ratio >= p.min_chroma_ratio))
        return Result(sc, {"paint_hue_deg": [float(hue.min()), float(hue.max())],
                           "min_chroma_ratio": float(ratio.min()), "frames_ok_pct": pct},
                      "" if sc == 1 else f"paint hue {hue.mean():.0f}°, chroma ×{ratio.mean():.2f} (frames ok {pct:.0f}%)")

    @check(N.reflections_preserved)
    def reflections_preserved(self, p: Reflections, curve: Curve) -> Result:
        shot, paint = self.shot, self.shot.mask("paint")
        corr = np.nan_to_num(l_correlation(shot.lab("src"), shot.lab("out"), paint), nan=0.0)
        if shot.floor is not None:  # rule 4: the correlation the export alone loses is not the agent's
            cf = l_correlation(shot.lab("src"), shot.lab("floor"), paint)
            corr = np.minimum(corr + (1.0 - np.nan_to_num(cf, nan=1.0)), 1.0)
        sc, pct = frame_share(curve, corr >= p.min_correlation_ratio)
        return Result(sc, {"min_l_correlation": float(corr.min()), "frames_ok_pct": pct},
                      "" if sc == 1 else f"paint L* structure lost: correlation {corr.min():.2f}")

    sky_glass_untouched = untouched(N.sky_glass_untouched, "sky", "glass", "chrome")

    @check(N.mask_stability)
    def mask_stability(self, p: MaskIou, curve: Curve) -> Result:
        shot, paint, (c0, c1) = self.shot, self.shot.mask("paint"), self.chroma
        moved = np.abs(hue_difference_deg(hue_deg(shot.lab("src")), hue_deg(shot.lab("out")))) > RECOLOURED_DEG
        recol = moved & (c0 >= CHROMATIC) & (c1 >= CHROMATIC)
        iou = (recol & paint).sum(axis=(1, 2)) / np.maximum((recol | paint).sum(axis=(1, 2)), 1)
        sc, pct = frame_share(curve, iou >= p.min_iou)
        return Result(sc, {"min_iou": float(iou.min()), "mean_iou": float(iou.mean()), "frames_ok_pct": pct},
                      "" if sc == 1 else f"recoloured region IoU ≥ {p.min_iou} on only {pct:.0f}% of frames")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        src, masks = make_scene(rng)
        g.write_shot(inst, src, masks, {"paint_source_hue_deg": 281})
        paint = masks["paint"]
        g.write_video(inst.oracle / OUTPUT, g.grade_lab(src, paint, hue_deg=84))

        m = inst.mutant("magenta_not_red", [N.paint_recolored], "hue stopped at magenta (about 330°)")
        g.write_video(m / OUTPUT, g.grade_lab(src, paint, hue_deg=50))

        m = inst.mutant("flat_paint", [N.reflections_preserved], "paint filled flat: reflections gone")
        g.write_video(m / OUTPUT, g.grade_lab(src, paint, hue_deg=84, l_scale=0.0, l_pivot=40))

        m = inst.mutant("glass_caught", [N.sky_glass_untouched], "qualifier caught the bluish glass too")
        g.write_video(m / OUTPUT, g.grade_lab(src, paint | masks["glass"], hue_deg=84))

        m = inst.mutant("noisy_key", [N.mask_stability], "a noisy qualifier leaves a fifth of the paint blue")
        holes = paint & (rng.random(paint.shape) < 0.2)
        g.write_video(m / OUTPUT, g.grade_lab(src, paint & ~holes, hue_deg=84))

        # near misses at the seed's line (350° … 15°): paint at 13° passes in full, 18° fails every frame
        m = inst.mutant("near_miss_hue_inside", [], "paint hue 13°: just inside the 15° edge")
        g.write_video(m / OUTPUT, g.grade_lab(src, paint, hue_deg=92))
        m = inst.mutant("near_miss_hue_outside", [N.paint_recolored], "paint hue 18°: just outside the 15° edge")
        g.write_video(m / OUTPUT, g.grade_lab(src, paint, hue_deg=97))
        self.secondary_near_misses(inst, rng, src, masks, g.grade_lab(src, paint, hue_deg=84))

    @staticmethod
    def secondary_near_misses(inst: InstanceWriter, rng: np.random.Generator, src: np.ndarray,
                              masks: dict[str, np.ndarray], oracle: np.ndarray) -> None:
        """Pairs at the other seed lines: chroma kept ×0.7, reflections r 0.9, key IoU 0.85, sky/glass 2 ΔE."""
        paint = masks["paint"]

        write = render_writer(OUTPUT)

        write_pair(inst, "chroma", N.paint_recolored, g.grade_lab(src, paint, hue_deg=84, chroma_scale=0.73),
                   g.grade_lab(src, paint, hue_deg=84, chroma_scale=0.67), write,
                   "paint chroma kept ×0.73: just inside the 0.7 edge", "paint chroma kept ×0.67: just outside 0.7")
        lab, noise = g.to_lab(oracle), rng.standard_normal(paint.shape)
        sd = np.array([lab[i][..., 0][paint[i]].std() for i in range(len(paint))])[:, None, None]

        def reflections(r: float) -> np.ndarray:  # L* noise of sd·√(1/r² − 1) leaves a correlation of r
            noisy = lab.copy()
            noisy[..., 0] += np.where(paint, sd * np.sqrt(1 / r ** 2 - 1) * noise, 0.0)
            return g.to_rgb8(noisy)

        write_pair(inst, "reflections", N.reflections_preserved, reflections(0.92), reflections(0.88), write,
                   "paint L* correlation 0.92: just inside the 0.9 edge", "L* correlation 0.88: just outside 0.9")
        draw = rng.random(paint.shape)
        write_pair(inst, "key", N.mask_stability, g.grade_lab(src, paint & (draw >= 0.12), hue_deg=84),
                   g.grade_lab(src, paint & (draw >= 0.18), hue_deg=84), write,
                   "12 % of the paint missed by the key (IoU 0.88): just inside 0.85",
                   "18 % missed (IoU 0.82): just outside 0.85")
        untouched_pair(inst, N.sky_glass_untouched, oracle, src, [masks[k] for k in ("sky", "glass", "chrome")], 2.0,
                       write, "sky_glass")
