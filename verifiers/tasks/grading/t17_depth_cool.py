"""R06.04.02.02-T17: cool only the far background of an alley using a depth map.

Render: out/alley_depth.mov. GT: gt/source.mov, gt/masks.npz {far_shadows, foreground, transition},
where far_shadows is the far background (depth ≥ 0.7) with L* < 45 and transition is the mid-depth
band between the cooled and protected zones. Node graph: state/grade.drx needs a Depth Map node.
Smooth transitions (the seed names no threshold): inside the transition band the per-pixel b* shift
(render − source), smoothed SMOOTH_PX against codec noise, must rise over at least MIN_WIDTH_PX — its
span across the band over its worst neighbour step (99.5th percentile per frame) — so the shape of the
edge is judged, not the size of the shift: a hard depth key reads ≈ 4 px at −4 b* as at −8.
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
#: transition width line, px (the b* shift's span across the band / its worst neighbour step: the width the
#: shift would take at its steepest). Why 9: after the SMOOTH_PX smoothing a hard key reads σ·√(2π) ≈ 3.8 px
#: whatever its size (measured 3.8–4.0 at −4 … −8 b*); 4:2:0 chroma (a 2 px box, then the decoder's
#: bilinear upsampling) widens that to ≈ 4.5 px, and the codec's ringing to at most 7.0 (seed 7, −4 … −8 b*,
#: H.264 crf 18–28 and ProRes 422). The soft depth blend reads 22.7 px lossless and no less than 11.7 in
#: any export at −4 … −8 b*. 9 — twice the 4:2:0 hard edge, the geometric middle of 7.0 and 11.7 — is
#: a width no export of a hard key reaches and every honest export of the blend clears.
MIN_WIDTH_PX = 9.0
#: how far either side of MIN_WIDTH_PX the near-miss pair's key is bisected to (renders are lossless)
PAIR_MARGIN_PX = 0.2
#: a b* span across the band under this shows no edge to judge (≈ 1 ΔE, the just-noticeable difference)
MIN_SPAN_B = 1.0
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


def transition_width_px(db_frame: np.ndarray, band: np.ndarray) -> float:
    """One frame's transition width in px: the b* shift (smoothed SMOOTH_PX first: codec noise is not
    a transition) spans its 1st-to-99th percentile across the band, divided by the 99.5th percentile
    of its neighbour steps there — the distance the shift would take to rise at its steepest,
    whatever its size, so a hard key reads the same at −4 b* as at −8 (what smooth_transitions
    judges). A span under MIN_SPAN_B, or no neighbour pair in the band, carries no visible edge to
    judge: infinite width."""
    db_smooth = gaussian_filter(db_frame, SMOOTH_PX)
    dy = np.abs(np.diff(db_smooth, axis=0))[band[1:] & band[:-1]]
    dx = np.abs(np.diff(db_smooth, axis=1))[band[:, 1:] & band[:, :-1]]
    if not len(dy) + len(dx):
        return float("inf")
    lo, hi = np.percentile(db_smooth[band], [1, 99])
    step_b, span_b = float(np.percentile(np.concatenate([dy, dx]), 99.5)), float(hi - lo)
    return float("inf") if span_b < MIN_SPAN_B or step_b == 0 else span_b / step_b


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
        widths = np.array([transition_width_px(db[i], band[i]) for i in range(shot.n)])
        sc, pct = frame_share(curve, widths >= MIN_WIDTH_PX)
        worst = float(widths.min())
        return Result(sc, {"narrowest_width_px": worst if np.isfinite(worst) else None,  # inf: no edge to judge
                           "limit_px": MIN_WIDTH_PX, "frames_ok_pct": pct,
                           "statistic": "b* shift span across the band / 99.5th percentile neighbour step"},
                      "" if sc == 1 else f"b* shift rises over only {worst:.1f} px (hard key)")

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

        m = inst.mutant("hard_depth_key_subtle", [N.smooth_transitions],
                        "hard depth key cooling only 4.5 b* (inside the seed's range): a small but hard line")
        g.write_video(m / OUTPUT, g.grade_lab(src, (depth >= 0.6).astype(float), db=-4.5))
        g.drx(m / DRX, nodes)

        m = inst.mutant("luma_key_not_depth", [N.depth_node], "shadows keyed by luma, no Depth Map node")
        g.write_video(m / OUTPUT, g.grade_lab(src, soft, db=-6))
        g.drx(m / DRX, [nodes[0], {"id": "3", "type": "Corrector", "qualifier": "Luma"}])

        def write(folder, frames: np.ndarray) -> None:
            g.write_video(folder / OUTPUT, frames)
            g.drx(folder / DRX, nodes)

        untouched_pair(inst, N.foreground_unchanged, g.grade_lab(src, soft, db=-6), src, [masks["foreground"]], 1.5,
                       write, "foreground")
        # the smooth-transition line (width ≥ MIN_WIDTH_PX): the depth key's soft range narrowed about its
        # middle (0.6), its width bisected frame by frame on the scorer's statistic to read PAIR_MARGIN_PX
        # over / under the line; the far shadows keep their full −6 b*
        src_b = rgb_to_lab(src)[..., 2]

        def keyed(i: int, width: float) -> np.ndarray:
            return g.grade_lab(src[i:i + 1], smoothstep(depth[i:i + 1], 0.6 - width / 2, 0.6 + width / 2), db=-6)

        def width_px(i: int, frame: np.ndarray) -> float:
            return transition_width_px(rgb_to_lab(frame)[0, ..., 2] - src_b[i], masks["transition"][i])

        write_pair(inst, "transitions", N.smooth_transitions,
                   *(bisect_frames(len(src), keyed, width_px, MIN_WIDTH_PX + d, x_below=0.005, x_above=0.3, above=d > 0,
                                   steps=10) for d in (PAIR_MARGIN_PX, -PAIR_MARGIN_PX)), write,
                   f"depth key as narrow as reads a {MIN_WIDTH_PX + PAIR_MARGIN_PX:.1f} px transition: just inside {MIN_WIDTH_PX}",
                   f"{MIN_WIDTH_PX - PAIR_MARGIN_PX:.1f} px: just outside {MIN_WIDTH_PX}")
