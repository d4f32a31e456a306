"""R06.04.02.02-T12: hit the team's brand blue (Lab 32, 10, −52) on jerseys across six shots.

Render: out/team_blue.mov (the six shots back to back). GT: gt/source.mov, gt/masks.npz {jersey,
skin, grass}, gt/shot.json {shots: [[first_frame, end_frame), …]}. Per shot, the median ΔE2000 of
the jersey pixels (every DE_STRIDE-th, all frames of the shot) to the brand colour must be ≤ 3.
Brand blue lies outside the sRGB/Rec.709 gamut: no 8-bit render gets closer than ΔE2000 ≈ 2.4,
which leaves 0.6 of the seed's 3 for texture and noise. Node graphs: one DRX per shot in state/grades/ (harness export), each needing a qualifier node;
the check scores the share of shots that have one.
"""

from __future__ import annotations

import numpy as np

from verifiers.checks import Result, check, check_names, provides, unit_checks
from verifiers.curves import Curve
from verifiers.gtfiles import gt_field
from verifiers.measure.colour import delta_e2000
from verifiers.params import NoParams
from verifiers.paramtypes.grading import BrandShot
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.near_miss import untouched_pair
from verifiers.tasks.grading._shared.node_graph import node_present
from verifiers.tasks.grading._shared.preservation import GradingTask
from verifiers.tasks.grading._shared.regions import untouched
from verifiers.tasks.grading._shared.shot import DE_STRIDE, ShotFacts

OUTPUT = "out/team_blue.mov"
GRADES = "state/grades"
FRAMES_PER_SHOT = 5
SHOTS = 6
#: each shot's jersey as the camera saw it: offsets from brand blue in L*, a*, b*
#: nearest in-gamut 8-bit colour to brand blue (searched on a 0.5 Lab grid; ΔE2000 2.40)
IN_GAMUT_BRAND = (33.0, 6.0, -44.5)
_OFFSETS = [(6, -4, 10), (-5, 6, 8), (8, -8, 14), (3, 2, -9), (-4, -6, 12), (7, 5, 6)]


def make_scene(rng: np.random.Generator) -> tuple[np.ndarray, dict[str, np.ndarray], list[list[int]]]:
    stacks, masks, shots = [], {"jersey": [], "skin": [], "grass": []}, []
    brand = np.array([32.0, 10.0, -52.0])
    for k, off in enumerate(_OFFSETS):
        n = FRAMES_PER_SHOT
        yy = np.arange(g.HEIGHT_PX)[None, :, None]
        lab = g.flat(n, (70, -3, -15))
        grass = np.broadcast_to(yy >= 90, (n, g.HEIGHT_PX, g.WIDTH_PX)).copy()
        lab[grass] = (48, -30, 30)
        lab[..., 0][grass] += 5 * g.texture(rng, n, sigma_px=1.5)[grass]
        x0 = 40 + 25 * k
        jersey = g.rect(n, np.c_[g.path_linear(n, (x0, 60), (x0 + 12, 60)), np.tile([50, 50], (n, 1))])
        skin = g.ellipse(n, g.path_linear(n, (x0 + 25, 44), (x0 + 37, 44)), (12, 15))
        jersey &= ~skin
        lab[jersey] = brand + np.asarray(off, dtype=float)
        lab[..., 0][jersey] += 0.6 * g.texture(rng, n, sigma_px=2)[jersey]
        lab[skin] = (62, 14, 18)
        grass &= ~(jersey | skin)
        stacks.append(g.to_rgb8(lab))
        for name, m in (("jersey", jersey), ("skin", skin), ("grass", grass)):
            masks[name].append(m)
        shots.append([k * n, (k + 1) * n])
    return np.concatenate(stacks), {k: np.concatenate(v) for k, v in masks.items()}, shots


TASK = "R06.04.02.02-T12"
N = check_names(TASK)


class BrandShotFacts(ShotFacts, task=TASK):
    """gt/shot.json of the six-shot spot: each shot's frames."""

    shot_frames: list[list[int]] = gt_field("shots", "[first, end) frames of each of the six shots")
    brand_lab: list[float] | None = gt_field(doc="the brand blue as CIELAB L*, a*, b* (informative)", default=None)

    def validate(self) -> None:
        self.expect(len(self.shot_frames) == SHOTS, "shot_frames", f"must list the {SHOTS} shots' frame ranges")
        self.expect(all(len(r) == 2 and r[0] < r[1] for r in self.shot_frames), "shot_frames",
                    "each shot is [first, end) with first < end")


class BrandBlue(GradingTask):
    task_id = TASK
    output = OUTPUT
    preserves = (N.skin_pitch_untouched, N.qualifier_nodes)
    primary_mask = "jersey"

    @provides
    def bounds(self) -> list[list[int]]:
        """[first, end) frames of each of the six shots (GT shot.json)."""
        return self.ctx.gt_typed(BrandShotFacts).shot_frames

    @check(N.qualifier_nodes)
    def qualifier_nodes(self, p: NoParams, curve: Curve) -> Result:
        per_shot, ev = {}, {}
        for k in range(1, SHOTS + 1):
            per_shot[k], ev, _msg = node_present(self.ctx, f"{GRADES}/shot_{k}.drx", ("qualifier", "hsl"), "qualifier")
        missing = [k for k, ok in per_shot.items() if not ok]
        return Result(curve.count(per_shot.values()),
                      {"shots_with_qualifier": [k for k, ok in per_shot.items() if ok],
                       "audit": ev.get("audit", "not recorded")},
                      "" if not missing else f"no qualifier node for shot(s) {missing}")

    def on_brand(self, k: int, p: BrandShot, curve: Curve) -> Result:
        """Shot k: median ΔE2000 of its jersey pixels (every DE_STRIDE-th) to the brand colour."""
        a, b = self.bounds[k - 1]
        jersey, lo = self.shot.mask("jersey"), self.shot.lab("out")
        px = np.concatenate([lo[i].reshape(-1, 3)[np.flatnonzero(jersey[i])[::DE_STRIDE]] for i in range(a, b)])
        med = float(np.median(delta_e2000(px, np.tile(np.asarray(p.target_lab, dtype=float), (len(px), 1)))))
        ok = med <= p.max_de2000
        return Result(curve.passes(ok), {"median_delta_e2000": med, "frames": [a, b], "pixel_stride": DE_STRIDE},
                      "" if ok else f"shot {k} jerseys {med:.1f} ΔE2000 from brand blue")

    shot_1, shot_2, shot_3, shot_4, shot_5, shot_6 = unit_checks(
        on_brand, N.shot_1, N.shot_2, N.shot_3, N.shot_4, N.shot_5, N.shot_6)

    skin_pitch_untouched = untouched(N.skin_pitch_untouched, "skin", "grass")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        src, masks, shots = make_scene(rng)
        g.write_shot(inst, src, masks, {"shots": shots, "brand_lab": [32, 10, -52]})
        jersey = masks["jersey"]
        # Brand blue is just outside the sRGB/Rec.709 gamut (R < 0): the nearest 8-bit colour is
        # ΔE2000 ≈ 2.4 away, so a correct grade aims at that in-gamut neighbour.
        oracle = g.set_lab(src, jersey, IN_GAMUT_BRAND)

        def grades(folder, skip: int | None = None) -> None:
            for k in range(1, SHOTS + 1):
                node = {"id": "2", "type": "Corrector", "label": "jersey"}
                if k != skip:
                    node["qualifier"] = "HSL"
                g.drx(folder / GRADES / f"shot_{k}.drx", [{"id": "1", "type": "Corrector"}, node])

        g.write_video(inst.oracle / OUTPUT, oracle)
        grades(inst.oracle)

        m = inst.mutant("shot_3_skipped", [N.shot_3, N.qualifier_nodes, N.skin_pitch_untouched],
                        "shot 3 left with the camera's jersey colour (preservation credited for 5 shots of 6)")
        a, b = shots[2]
        out = oracle.copy()
        out[a:b] = src[a:b]
        g.write_video(m / OUTPUT, out)
        grades(m)

        m = inst.mutant("shot_6_matched_by_eye", [N.shot_6], "shot 6 pushed the wrong way: 6 ΔE off brand")
        a, b = shots[5]
        out = oracle.copy()
        out[a:b] = g.set_lab(src[a:b], jersey[a:b], (38.0, 4.0, -48.0))
        g.write_video(m / OUTPUT, out)
        grades(m)

        m = inst.mutant("key_on_skin", [N.skin_pitch_untouched], "the blue key's softness spilled onto faces")
        g.write_video(m / OUTPUT, g.grade_lab(oracle, masks["skin"], db=-6))
        grades(m)

        m = inst.mutant("window_not_qualifier_shot_4", [N.qualifier_nodes], "shot 4 graded with a window only")
        g.write_video(m / OUTPUT, oracle)
        grades(m, skip=4)

        # near misses at the seed's line (median ΔE2000 ≤ 3 per shot): shot 1's jerseys 0.2 ΔE inside, 0.2 outside
        a, b = shots[0]
        for name, lowers, why, lab in (
                ("near_miss_shot_1_inside", [], "shot 1 jerseys L* 34.5: median ΔE2000 just under 3", (34.5, 6.0, -44.5)),
                ("near_miss_shot_1_outside", [N.shot_1], "shot 1 jerseys L* 35.5: median ΔE2000 just over 3",
                 (35.5, 6.0, -44.5))):
            m = inst.mutant(name, lowers, why)
            out = oracle.copy()
            out[a:b] = g.set_lab(src[a:b], jersey[a:b], lab)
            g.write_video(m / OUTPUT, out)
            grades(m)

        def write(folder, frames: np.ndarray) -> None:
            g.write_video(folder / OUTPUT, frames)
            grades(folder)

        def near(shot_ks: list[int], l_lab: float) -> np.ndarray:
            out = oracle.copy()
            for k in shot_ks:
                a, b = shots[k - 1]
                out[a:b] = g.set_lab(src[a:b], jersey[a:b], (l_lab, 6.0, -44.5))
            return out

        # shots 2–6 at the same line: all just inside in one render, then each shot alone just outside
        write(inst.mutant("near_miss_shots_2_6_inside", [], "shots 2–6 jerseys L* 34.5: median ΔE2000 just under 3"),
              near([2, 3, 4, 5, 6], 34.5))
        for k in range(2, SHOTS + 1):
            write(inst.mutant(f"near_miss_shot_{k}_outside", [getattr(N, f"shot_{k}")],
                              f"shot {k} jerseys L* 35.5: median ΔE2000 just over 3"), near([k], 35.5))

        untouched_pair(inst, N.skin_pitch_untouched, oracle, src, [masks["skin"], masks["grass"]], 1.5, write,
                       "skin_pitch")
