"""R06.04.02.02-T17: cool only the far background of an alley using a depth map.

Render: out/alley_depth.mov. GT: gt/source.mov, gt/masks.npz {far_shadows, foreground, transition},
where far_shadows is the far background (depth ≥ 0.7) with L* < 45 and transition is the mid-depth
band between the cooled and protected zones. Node graph: state/grade.drx needs a Depth Map node.
Smooth transitions (the seed names no threshold): inside the transition band the per-pixel b* shift
(render − source) must not jump by more than MAX_STEP_B between neighbouring pixels (95th
percentile per frame, after SMOOTH_PX smoothing against codec noise); a hard depth key shows as a one-pixel step of the whole shift.
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import gaussian_filter

from verifiers.checks import Result, check, check_names
from verifiers.curves import Curve
from verifiers.measure.colour import rgb_to_lab
from verifiers.params import NoParams
from verifiers.paramtypes.grading import BShift
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.near_miss import bisect_frames, untouched_pair, write_pair
from verifiers.tasks.grading._shared.node_graph import node_check
from verifiers.tasks.grading._shared.preservation import GradingTask
from verifiers.tasks.grading._shared.regions import frame_share, masked_mean, untouched
from verifiers.tasks.grading._shared.shot import Shot

OUTPUT = "out/alley_depth.mov"
DRX = "state/grade.drx"
MAX_STEP_B = 1.5
SMOOTH_PX = 1.5
N_FRAMES = 24


def make_scene(rng: np.random.Generator, n: int = N_FRAMES):
    yy = np.arange(g.HEIGHT_PX)[:, None] / g.HEIGHT_PX
    depth = np.broadcast_to(1.0 - yy, (n, g.HEIGHT_PX, g.WIDTH_PX)).copy()
    person = g.ellipse(n, g.path_linear(n, (100, 115), (140, 112)), (18, 30))
    depth[person] = 0.1
    lab = g.flat(n, (50, 4, 10))
    lab[..., 0] = 25 + 40 * g.texture(rng, n, sigma_px=3, pan_px_per_frame=0.5) ** 2 + 20 * (1 - depth)
    lab[person] = (60, 14, 18)
    lab[..., 0][person] += 4 * g.texture(rng, n, sigma_px=2)[person]
    far = depth >= 0.7
    masks = {"far_shadows": far & (lab[..., 0] < 45), "foreground": depth < 0.3,
             "transition": (depth > 0.45) & (depth < 0.75)}
    return g.to_rgb8(lab), masks, depth


def smoothstep(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    t = np.clip((x - lo) / (hi - lo), 0, 1)
    return t * t * (3 - 2 * t)


TASK = "R06.04.02.02-T17"
N = check_names(TASK)


def b_shift(shot: Shot) -> np.ndarray:
    """Per pixel: the grade's b* shift, render minus source."""
    return shot.lab("out")[..., 2] - shot.lab("src")[..., 2]


def worst_b_step(db_frame: np.ndarray, band: np.ndarray) -> float:
    """One frame's 99.5th percentile of neighbour steps of the b* shift inside the transition band, the
    shift smoothed SMOOTH_PX first (codec noise is not a transition): what smooth_transitions judges."""
    db_smooth = gaussian_filter(db_frame, SMOOTH_PX)
    dy = np.abs(np.diff(db_smooth, axis=0))[band[1:] & band[:-1]]
    dx = np.abs(np.diff(db_smooth, axis=1))[band[:, 1:] & band[:, :-1]]
    return float(np.percentile(np.concatenate([dy, dx]), 99.5)) if len(dy) + len(dx) else 0.0


class DepthCool(GradingTask):
    task_id = TASK
    output = OUTPUT
    preserves = (N.foreground_unchanged, N.smooth_transitions, N.depth_node)
    primary_mask = "far_shadows"

    @check(N.depth_node)
    def depth_node(self, p: NoParams, curve: Curve) -> Result:
        return node_check(self.ctx, DRX, ("depthmap", "depth"), "Depth Map", curve)

    @check(N.far_shadows_cooled)
    def far_shadows_cooled(self, p: BShift, curve: Curve) -> Result:
        shift = masked_mean(b_shift(self.shot), self.shot.mask("far_shadows"))
        sc, pct = frame_share(curve, (shift >= p.min_b_shift_lab) & (shift <= p.max_b_shift_lab))
        return Result(sc, {"b_shift": [float(np.nanmin(shift)), float(np.nanmax(shift))], "frames_ok_pct": pct},
                      "" if sc == 1 else f"far shadows b* shift {np.nanmean(shift):+.1f}")

    foreground_unchanged = untouched(N.foreground_unchanged, "foreground")

    @check(N.smooth_transitions)
    def smooth_transitions(self, p: NoParams, curve: Curve) -> Result:
        shot, band = self.shot, self.shot.mask("transition")
        db = b_shift(shot)
        steps = np.array([worst_b_step(db[i], band[i]) for i in range(shot.n)])
        sc, pct = frame_share(curve, steps <= MAX_STEP_B)
        return Result(sc, {"worst_b_step": float(steps.max()), "limit": MAX_STEP_B,
                           "statistic": "99.5th percentile of neighbour b* shift steps", "frames_ok_pct": pct},
                      "" if sc == 1 else f"b* shift jumps {steps.max():.1f} between neighbouring pixels (hard key)")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        src, masks, depth = make_scene(rng)
        g.write_shot(inst, src, masks, {"far_depth": 0.7, "near_depth": 0.3})
        nodes = [{"id": "1", "type": "Corrector"}, {"id": "2", "type": "DepthMap", "label": "far"},
                 {"id": "3", "type": "Corrector", "input": "2"}]
        soft = smoothstep(depth, 0.45, 0.75)
        g.write_video(inst.oracle / OUTPUT, g.grade_lab(src, soft, db=-6))
        g.drx(inst.oracle / DRX, nodes)

        m = inst.mutant("too_subtle", [N.far_shadows_cooled], "far background cooled by only 2 b*")
        g.write_video(m / OUTPUT, g.grade_lab(src, soft, db=-2))
        g.drx(m / DRX, nodes)

        # near misses at the seed's weak edge (b* shift −8 … −4 in the far shadows): −4.5 passes in full,
        # −3.5 fails every frame
        for name, lowers, why, db in (
                ("near_miss_cool_inside", [], "far shadows cooled 4.5 b*: just inside the 4 b* edge", -4.5),
                ("near_miss_cool_outside", [N.far_shadows_cooled], "far shadows cooled 3.5 b*: just outside", -3.5)):
            m = inst.mutant(name, lowers, why)
            g.write_video(m / OUTPUT, g.grade_lab(src, soft, db=db))
            g.drx(m / DRX, nodes)

        m = inst.mutant("whole_frame_cooled", [N.foreground_unchanged], "cooling applied without the depth key")
        g.write_video(m / OUTPUT, g.grade_lab(src, np.ones(depth.shape), db=-6))
        g.drx(m / DRX, nodes)

        m = inst.mutant("hard_depth_key", [N.smooth_transitions], "depth key without softness: a hard line")
        g.write_video(m / OUTPUT, g.grade_lab(src, (depth >= 0.6).astype(float), db=-6))
        g.drx(m / DRX, nodes)

        m = inst.mutant("luma_key_not_depth", [N.depth_node], "shadows keyed by luma, no Depth Map node")
        g.write_video(m / OUTPUT, g.grade_lab(src, soft, db=-6))
        g.drx(m / DRX, [nodes[0], {"id": "3", "type": "Corrector", "qualifier": "Luma"}])

        def write(folder, frames: np.ndarray) -> None:
            g.write_video(folder / OUTPUT, frames)
            g.drx(folder / DRX, nodes)

        untouched_pair(inst, N.foreground_unchanged, g.grade_lab(src, soft, db=-6), src, [masks["foreground"]], 1.5,
                       write, "foreground")
        # the smooth-transition line (b* step ≤ MAX_STEP_B, the project's constant): the depth key's soft
        # range narrowed about its middle (0.6), its width bisected frame by frame on the scorer's statistic
        # to read 0.1 under / 0.01 over the line (a hard key reads only ≈ 1.55: the smoothing caps a −6 b*
        # step's neighbour difference there); the far shadows keep their full −6 b*
        src_b = rgb_to_lab(src)[..., 2]

        def keyed(i: int, width: float) -> np.ndarray:
            return g.grade_lab(src[i:i + 1], smoothstep(depth[i:i + 1], 0.6 - width / 2, 0.6 + width / 2), db=-6)

        def b_step(i: int, frame: np.ndarray) -> float:
            return worst_b_step(rgb_to_lab(frame)[0, ..., 2] - src_b[i], masks["transition"][i])

        write_pair(inst, "transitions", N.smooth_transitions,
                   *(bisect_frames(len(src), keyed, b_step, MAX_STEP_B + d, x_below=0.3, x_above=0.01, above=d > 0,
                                   steps=10) for d in (-0.1, 0.01)), write,
                   f"depth key as narrow as reads a b* step {MAX_STEP_B - 0.1:.1f}: just inside {MAX_STEP_B}",
                   f"{MAX_STEP_B + 0.01:.2f}: just outside {MAX_STEP_B}")
