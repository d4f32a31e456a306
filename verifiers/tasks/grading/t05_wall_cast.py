"""R06.04.02.02-T05: neutralise a green fluorescent cast on a white wall only.

Render: out/office_wall.mov. GT: gt/source.mov, gt/masks.npz {wall, actor, skin}. The wall reads
a* ≈ −8 in the source; after the grade its mean (in linear light, away from the actor's edge) must
be neutral. "Clean edges" looks at a 4 px band each side of the actor outline: on the actor side the
render must match the source, on the wall side its a*/b* must match the corrected wall interior (a
fringe is a band that kept the cast or took a different one).
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import binary_dilation, binary_erosion

from verifiers.base import Checks, ScoreContext
from verifiers.measure.colour import delta_e2000, mean_lab
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading.common import (
    GradingVerifier,
    Shot,
    frame_share_score,
    outside,
    untouched_check,
)

OUTPUT = "out/office_wall.mov"
BAND_PX = 4
N_FRAMES = 24


def make_scene(rng: np.random.Generator, n: int = N_FRAMES) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Green-cast wall (a* −8) behind an actor (dark shirt, skin face), a grey floor strip."""
    lab = g.flat(n, (84, -8, 3))
    lab[..., 0] += 4 * g.texture(rng, n)
    floor = g.rect(n, np.tile([0, 120, g.WIDTH_PX, 24], (n, 1)))
    lab[floor] = (40, 2, 6)
    centre = g.path_linear(n, (110, 0), (130, 0))
    body = g.rect(n, np.c_[centre[:, 0] - 22, np.full(n, 70), np.full(n, 44), np.full(n, 74)])
    face = g.ellipse(n, np.c_[centre[:, 0], np.full(n, 52)], (15, 19))
    lab[body] = (28, 4, -22)
    lab[face] = (66, 16, 20)
    lab[..., 0][face] += 4 * g.texture(rng, n, sigma_px=2)[face]
    actor = body | face
    wall = ~(actor | floor)
    return g.to_rgb8(lab), {"wall": wall, "actor": actor, "skin": face}


def bands(actor: np.ndarray, guard_px: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(actor-side band, wall-side band) of BAND_PX each side of the actor outline, per frame,
    starting `guard_px` from it: the render's chroma share there belongs to both sides."""
    def grow(m: np.ndarray, k: int) -> np.ndarray:
        return binary_dilation(m, iterations=k) if k > 0 else m

    def shrink(m: np.ndarray, k: int) -> np.ndarray:
        return binary_erosion(m, iterations=k) if k > 0 else m

    inner = np.stack([shrink(m, guard_px) & ~shrink(m, guard_px + BAND_PX) for m in actor])
    outer = np.stack([grow(m, guard_px + BAND_PX) & ~grow(m, guard_px) for m in actor])
    return inner, outer


@register
class WallCast(GradingVerifier):
    task_id = "R06.04.02.02-T05"
    output = OUTPUT
    preserves = ("skin_untouched", "clean_edges")

    def primary_region(self, shot: Shot) -> np.ndarray:
        return shot.mask("wall")

    def grade(self, ctx: ScoreContext, checks: Checks) -> None:
        shot = self.load(ctx, OUTPUT)
        wall, actor = shot.mask("wall"), shot.mask("actor")
        core = wall & outside(actor, 2 * BAND_PX)

        p = checks.params("wall_neutral")
        ab = np.array([mean_lab(shot.out[i], core[i])[1:] for i in range(shot.n)])
        ok = (np.abs(ab[:, 0]) <= p["max_abs_a"]) & (np.abs(ab[:, 1]) <= p["max_abs_b"])
        sc, pct = frame_share_score(ok)
        worst = int(np.argmax(np.abs(ab).max(axis=1)))
        checks.set("wall_neutral", sc, {"worst_frame_a": float(ab[worst, 0]), "worst_frame_b": float(ab[worst, 1]),
                                        "frames_ok_pct": pct},
                   "" if sc == 1 else f"wall reads a*={ab[worst, 0]:.1f} b*={ab[worst, 1]:.1f}")

        sc, ev, msg = untouched_check(shot, ["skin"], checks.params("skin_untouched")["max_delta_e2000"])
        checks.set("skin_untouched", sc, ev, msg)

        p = checks.params("clean_edges")
        inner, outer = bands(actor & ~shot.mask("wall"), max(shot.guard_px()))
        lo, ls = shot.lab("out"), shot.lab("src")
        fringe = np.zeros(shot.n)
        for i in range(shot.n):
            de_in = delta_e2000(ls[i][inner[i]], lo[i][inner[i]]).mean()
            ring = lo[i][outer[i] & wall[i]]
            ref = ring.copy()
            ref[:, 1:] = lo[i][core[i]][:, 1:].mean(axis=0)
            de_out = delta_e2000(ring, ref).mean()
            fringe[i] = max(de_in, de_out)
        sc, pct = frame_share_score(fringe <= p["max_delta_e2000"])
        checks.set("clean_edges", sc, {"worst_band_delta_e2000": float(fringe.max()), "band_px": BAND_PX,
                                       "frames_ok_pct": pct},
                   "" if sc == 1 else f"fringe at the actor's edge: band ΔE2000 {fringe.max():.2f}")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        src, masks = make_scene(rng)
        g.write_shot(inst, src, masks, {"wall_source_a": -8, "wall_source_b": 3})
        wall = masks["wall"]
        g.write_video(inst.oracle / OUTPUT, g.grade_lab(src, wall, da=8, db=-3))

        m = inst.mutant("global_correction", ["skin_untouched", "clean_edges"], "cast removed from the whole frame")
        g.write_video(m / OUTPUT, g.grade_lab(src, np.ones(wall.shape), da=8, db=-3))

        m = inst.mutant("half_correction", ["wall_neutral"], "only half the cast removed (a* still -4)")
        g.write_video(m / OUTPUT, g.grade_lab(src, wall, da=4, db=-1.5))

        m = inst.mutant("key_shrunk_green_halo", ["clean_edges"],
                        "qualifier eroded 5 px: a green ring of wall is left around the actor")
        g.write_video(m / OUTPUT, g.grade_lab(src, wall & outside(masks["actor"], 5), da=8, db=-3))
