"""R06.04.02.02-T04: even out blotchy skin hue with a skin qualifier, leaving lips and eyes alone.

Render: out/beauty.mov. GT: gt/source.mov, gt/masks.npz {skin, lips, eyes}. Node graph:
state/grade.drx needs a qualifier node. Hue spread is the circular standard deviation of h_ab
(√(−2 ln R) of the mean unit hue vector) over the skin mask per frame; it must drop ≥ 30 %. Mean
skin: ΔE2000 between the source's and render's mean (linear-light) skin colour. Lips and eyes:
per-frame mean ΔE2000 vs source over each mask.
"""

from __future__ import annotations

import numpy as np

from verifiers.checks import Result, check, check_names
from verifiers.curves import Curve
from verifiers.measure.colour import delta_e2000, mean_lab
from verifiers.params import NoParams
from verifiers.paramtypes.grading import HueSpread, MaxDeltaE
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.near_miss import untouched_pair
from verifiers.tasks.grading._shared.node_graph import node_check
from verifiers.tasks.grading._shared.preservation import GradingTask
from verifiers.tasks.grading._shared.regions import frame_share, untouched
from verifiers.tasks.grading._shared.shot import Shot

OUTPUT = "out/beauty.mov"
DRX = "state/grade.drx"
N_FRAMES = 20
CHANGE_MIN_SPREAD_PCT = 5.0


def circular_hue_std_deg(lab_px: np.ndarray) -> float:
    ang = np.arctan2(lab_px[:, 2], lab_px[:, 1])
    r = np.hypot(np.cos(ang).mean(), np.sin(ang).mean())
    return float(np.degrees(np.sqrt(-2 * np.log(max(r, 1e-9)))))


def make_scene(rng: np.random.Generator, n: int = N_FRAMES):
    lab = g.flat(n, (35, 3, 5))
    lab[..., 0] += 5 * g.texture(rng, n, sigma_px=6)
    c = g.path_linear(n, (124, 74), (132, 72))
    face = g.ellipse(n, c, (52, 64))
    blotch = g.texture(rng, n, sigma_px=4)
    hue = np.radians(50 + 22 * blotch)
    chroma = 24 + 3 * g.texture(rng, n, sigma_px=3)
    lab[..., 0] = np.where(face, 62 + 3 * g.texture(rng, n, sigma_px=2), lab[..., 0])
    lab[..., 1] = np.where(face, chroma * np.cos(hue), lab[..., 1])
    lab[..., 2] = np.where(face, chroma * np.sin(hue), lab[..., 2])
    lips = g.ellipse(n, c + np.array([0.0, 34.0]), (16, 6))
    eyes = g.ellipse(n, c + np.array([-20.0, -12.0]), (9, 5)) | g.ellipse(n, c + np.array([20.0, -12.0]), (9, 5))
    lab[lips] = (45, 40, 16)
    lab[eyes] = (35, 0, -2)
    lab[..., 0][lips | eyes] += 4 * g.texture(rng, n, sigma_px=1.5)[lips | eyes]
    return g.to_rgb8(lab), {"skin": face & ~(lips | eyes), "lips": lips, "eyes": eyes}


def even_hue(src8: np.ndarray, mask: np.ndarray, keep: float, rotate_deg: float = 0.0) -> np.ndarray:
    """Pull each masked pixel's hue toward its frame's mean skin hue (keep = share of spread left)."""
    out = src8.copy()
    for i in range(len(src8)):
        if not mask[i].any():
            continue
        lab = g.to_lab(src8[i][mask[i]][None])[0]
        ang = np.arctan2(lab[:, 2], lab[:, 1])
        mean = np.arctan2(np.sin(ang).mean(), np.cos(ang).mean())
        d = (ang - mean + np.pi) % (2 * np.pi) - np.pi
        new = mean + keep * d + np.radians(rotate_deg)
        c = np.hypot(lab[:, 1], lab[:, 2])
        lab[:, 1], lab[:, 2] = c * np.cos(new), c * np.sin(new)
        out[i][mask[i]] = g.to_rgb8(lab[None])[0]
    return out


TASK = "R06.04.02.02-T04"
N = check_names(TASK)


def spread_reduction_pct(shot: Shot, skin: np.ndarray, i: int) -> float:
    """How much the skin's circular hue spread tightened on frame i, percent of the source's."""
    ls, lo = shot.lab("src"), shot.lab("out")
    return 100 * (1 - circular_hue_std_deg(lo[i][skin[i]]) / max(circular_hue_std_deg(ls[i][skin[i]]), 1e-6))


class SkinHue(GradingTask):
    task_id = TASK
    output = OUTPUT
    preserves = (N.mean_skin, N.lips_eyes, N.qualifier_node)
    primary_mask = "skin"

    def change_present(self, shot: Shot) -> np.ndarray:
        """Evening skin hue barely moves ΔE2000: the change is the hue spread tightening by at least
        a sixth of the seed's 30 % (the unedited exports score ≤ 5 with it: docs/grading.md)."""
        skin = shot.mask("skin")
        red = np.array([spread_reduction_pct(shot, skin, i) for i in range(shot.n) if skin[i].any()])
        return red >= CHANGE_MIN_SPREAD_PCT

    @check(N.qualifier_node)
    def qualifier_node(self, p: NoParams, curve: Curve) -> Result:
        return node_check(self.ctx, DRX, ("qualifier", "hsl"), "qualifier", curve)

    @check(N.hue_variance)
    def hue_variance(self, p: HueSpread, curve: Curve) -> Result:
        shot, skin = self.shot, self.shot.mask("skin")
        red = np.array([spread_reduction_pct(shot, skin, i) for i in range(shot.n)])
        sc, pct = frame_share(curve, red >= p.min_reduction_pct)
        return Result(sc, {"min_reduction_pct": float(red.min()), "frames_ok_pct": pct},
                      "" if sc == 1 else f"skin hue spread reduced only {red.min():.0f}%")

    @check(N.mean_skin)
    def mean_skin(self, p: MaxDeltaE, curve: Curve) -> Result:
        shot, skin = self.shot, self.shot.mask("skin")
        de = np.array([float(delta_e2000(mean_lab(shot.src[i], skin[i]), mean_lab(shot.out[i], skin[i])))
                       for i in range(shot.n)])
        sc, pct = frame_share(curve, de <= p.max_de2000)
        return Result(sc, {"max_mean_colour_delta_e2000": float(de.max()), "frames_ok_pct": pct},
                      "" if sc == 1 else f"mean skin colour moved {de.max():.1f} ΔE2000")

    lips_eyes = untouched(N.lips_eyes, "lips", "eyes")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        src, masks = make_scene(rng)
        g.write_shot(inst, src, masks)
        skin = masks["skin"]
        nodes = [{"id": "1", "type": "Corrector"}, {"id": "2", "type": "Corrector", "qualifier": "HSL", "label": "skin"}]
        g.write_video(inst.oracle / OUTPUT, even_hue(src, skin, 0.45))
        g.drx(inst.oracle / DRX, nodes)

        m = inst.mutant("barely_evened", [N.hue_variance], "hue spread only 15% tighter")
        g.write_video(m / OUTPUT, even_hue(src, skin, 0.85))
        g.drx(m / DRX, nodes)

        m = inst.mutant("skin_turned_orange", [N.mean_skin], "spread evened but the whole skin rotated 12°")
        g.write_video(m / OUTPUT, even_hue(src, skin, 0.45, rotate_deg=-12))
        g.drx(m / DRX, nodes)

        m = inst.mutant("lips_in_key", [N.lips_eyes], "qualifier caught the lips: they go skin-coloured")
        out = even_hue(src, skin, 0.45)
        g.write_video(m / OUTPUT, g.grade_lab(out, masks["lips"], hue_deg=18))
        g.drx(m / DRX, nodes)

        m = inst.mutant("no_qualifier_node", [N.qualifier_node], "graph has no qualifier (mask painted elsewhere)")
        g.write_video(m / OUTPUT, even_hue(src, skin, 0.45))
        g.drx(m / DRX, [nodes[0], {"id": "2", "type": "Corrector", "window": "Circle"}])

        # near misses at the seed's line (spread ≥ 30 % tighter): ≥ 30.8 % passes in full, ≤ 29 % fails every frame
        for name, lowers, why, keep in (
                ("near_miss_spread_inside", [], "hue spread 31 % tighter: just inside the 30 % edge", 0.67),
                ("near_miss_spread_outside", [N.hue_variance], "hue spread 29 % tighter: just outside 30 %", 0.69)):
            m = inst.mutant(name, lowers, why)
            g.write_video(m / OUTPUT, even_hue(src, skin, keep))
            g.drx(m / DRX, nodes)

        def write(folder, frames: np.ndarray) -> None:
            g.write_video(folder / OUTPUT, frames)
            g.drx(folder / DRX, nodes)

        untouched_pair(inst, N.lips_eyes, even_hue(src, skin, 0.45), src, [masks["lips"], masks["eyes"]], 1.5, write,
                       "lips_eyes")

        def mean_colour_de(a: np.ndarray, b: np.ndarray) -> float:  # mean_skin's statistic
            return float(delta_e2000(mean_lab(a), mean_lab(b)))

        untouched_pair(inst, N.mean_skin, even_hue(src, skin, 0.45), src, [skin], 2.0, write, "mean_skin",
                       measure=mean_colour_de)
