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

from verifiers.checks import Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.measure.colour import delta_e2000, mean_lab
from verifiers.paramtypes.grading import MaxDeltaE, Neutral
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.near_miss import render_writer, untouched_pair, write_pair
from verifiers.tasks.grading._shared.preservation import GradingTask
from verifiers.tasks.grading._shared.regions import frame_share, outside, untouched

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


TASK = "R06.04.02.02-T05"
N = check_names(TASK)


class WallCast(GradingTask):
    task_id = TASK
    output = OUTPUT
    preserves = (N.skin_untouched, N.clean_edges)
    primary_mask = "wall"

    @provides
    def core(self) -> np.ndarray:
        """The wall away from the actor (2 bands): where its corrected colour is read."""
        return self.shot.mask("wall") & outside(self.shot.mask("actor"), 2 * BAND_PX)

    @check(N.wall_neutral)
    def wall_neutral(self, p: Neutral, curve: Curve) -> Result:
        shot, core = self.shot, self.core
        ab = np.array([mean_lab(shot.out[i], core[i])[1:] for i in range(shot.n)])
        ok = (np.abs(ab[:, 0]) <= p.max_abs_a_lab) & (np.abs(ab[:, 1]) <= p.max_abs_b_lab)
        sc, pct = frame_share(curve, ok)
        worst = int(np.argmax(np.abs(ab).max(axis=1)))
        return Result(sc, {"worst_frame_a": float(ab[worst, 0]), "worst_frame_b": float(ab[worst, 1]),
                           "frames_ok_pct": pct},
                      "" if sc == 1 else f"wall reads a*={ab[worst, 0]:.1f} b*={ab[worst, 1]:.1f}")

    skin_untouched = untouched(N.skin_untouched, "skin")

    @check(N.clean_edges)
    def clean_edges(self, p: MaxDeltaE, curve: Curve) -> Result:
        shot, core, wall = self.shot, self.core, self.shot.mask("wall")
        inner, outer = bands(shot.mask("actor") & ~wall, max(shot.guard_px()))
        lo, ls = shot.lab("out"), shot.lab("src")
        fringe = np.zeros(shot.n)
        for i in range(shot.n):
            de_in = delta_e2000(ls[i][inner[i]], lo[i][inner[i]]).mean()
            ring = lo[i][outer[i] & wall[i]]
            ref = ring.copy()
            ref[:, 1:] = lo[i][core[i]][:, 1:].mean(axis=0)
            fringe[i] = max(de_in, delta_e2000(ring, ref).mean())
        sc, pct = frame_share(curve, fringe <= p.max_de2000)
        return Result(sc, {"worst_band_delta_e2000": float(fringe.max()), "band_px": BAND_PX, "frames_ok_pct": pct},
                      "" if sc == 1 else f"fringe at the actor's edge: band ΔE2000 {fringe.max():.2f}")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        src, masks = make_scene(rng)
        g.write_shot(inst, src, masks, {"wall_source_a": -8, "wall_source_b": 3})
        wall = masks["wall"]
        g.write_video(inst.oracle / OUTPUT, g.grade_lab(src, wall, da=8, db=-3))

        m = inst.mutant("global_correction", [N.skin_untouched, N.clean_edges], "cast removed from the whole frame")
        g.write_video(m / OUTPUT, g.grade_lab(src, np.ones(wall.shape), da=8, db=-3))

        m = inst.mutant("half_correction", [N.wall_neutral], "only half the cast removed (a* still -4)")
        g.write_video(m / OUTPUT, g.grade_lab(src, wall, da=4, db=-1.5))

        m = inst.mutant("key_shrunk_green_halo", [N.clean_edges],
                        "qualifier eroded 5 px: a green ring of wall is left around the actor")
        g.write_video(m / OUTPUT, g.grade_lab(src, wall & outside(masks["actor"], 5), da=8, db=-3))

        # near misses at the seed's line (|a*| ≤ 2): the wall left at a* −1.5 passes in full, −2.5 fails every frame
        m = inst.mutant("near_miss_neutral_inside", [], "wall a* −1.5: just inside the 2 a* edge")
        g.write_video(m / OUTPUT, g.grade_lab(src, wall, da=6.5, db=-3))
        m = inst.mutant("near_miss_neutral_outside", [N.wall_neutral], "wall a* −2.5: just outside the 2 a* edge")
        g.write_video(m / OUTPUT, g.grade_lab(src, wall, da=5.5, db=-3))

        # the second edge (|b*| ≤ 2), a* neutral: the wall's +3 b* left at about +1.5 / +2.5
        m = inst.mutant("near_miss_neutral_b_inside", [], "wall b* +1.5: just inside the 2 b* edge")
        g.write_video(m / OUTPUT, g.grade_lab(src, wall, da=8, db=-1.5))
        m = inst.mutant("near_miss_neutral_b_outside", [N.wall_neutral], "wall b* +2.5: just outside the 2 b* edge")
        g.write_video(m / OUTPUT, g.grade_lab(src, wall, da=8, db=-0.5))

        write = render_writer(OUTPUT)

        # near misses at the edge line (band ΔE2000 ≤ 3): the wall's 4 px next to the actor keep part of the
        # cast, as much as reads 2.8 / 3.2 against the corrected wall's a*, b* (the check's wall-side band)
        oracle = g.grade_lab(src, wall, da=8, db=-3)
        ring = bands(masks["actor"] & ~wall)[1] & wall
        core = wall & outside(masks["actor"], 2 * BAND_PX)

        def cast_kept(px: np.ndarray, share: float) -> np.ndarray:
            return g.grade_lab(px, np.ones(px.shape[:-1]), da=-8 * share, db=3 * share)

        def fringe(target: float, above: bool) -> np.ndarray:
            out = oracle.copy()
            for i in range(len(src)):
                ab = g.to_lab(oracle[i][core[i]][None])[0][:, 1:].mean(axis=0)

                def ring_de(_s: np.ndarray, frame: np.ndarray, sel: np.ndarray, ab: np.ndarray = ab) -> float:
                    lab = g.to_lab(frame[sel][None])[0]
                    ref = lab.copy()
                    ref[:, 1:] = ab
                    return float(delta_e2000(lab, ref).mean())

                out[i:i + 1] = g.bisect_region(oracle[i:i + 1], src[i:i + 1], ring[i:i + 1], target, above=above,
                                               apply=cast_kept, measure=ring_de, max_x=1.0)
            return out

        write_pair(inst, "edges", N.clean_edges, fringe(2.8, above=False), fringe(3.2, above=True), write,
                   "wall band by the actor 2.8 ΔE2000 off the corrected wall: just inside the 3 line",
                   "3.2 off: just outside 3")
        untouched_pair(inst, N.skin_untouched, g.grade_lab(src, wall, da=8, db=-3), src, [masks["skin"]], 1.5, write,
                       "skin")
