"""R06.04.02.02-T02: brighten a swaying face by +0.3 stop with a soft tracked circular window.

Render: out/face_lift.mov. GT: gt/source.mov, gt/masks.npz {face}. Gains are log2 of linear-light Y
render/source per pixel; the four measurements are _shared/face_window.py's (T18 uses them too). Face gain: the median over
the face mask. Background: the 95th percentile of |gain| outside twice the face's bounding box (a leak over
more than 5 % of the background fails). Tracking: the
centroid of the positive gain (pixels > GAIN_FLOOR_STOP) against the face mask's centroid, in
percent of face width. No halo: in the annulus between the face (less EDGE_GUARD_PX) and twice its
box, the gain map's 99th-percentile gradient (stops/px) over the source's median log2-luminance
gradient must stay ≤ 1.2 (both smoothed by HALO_SMOOTH_PX to ignore 8-bit quantisation): a wide
soft window changes more slowly than the picture's own texture, a hard edge far faster.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from verifiers.checks import Result, check, check_names
from verifiers.curves import Curve
from verifiers.paramtypes.grading import Halo
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.face_window import EDGE_GUARD_PX, HALO_SMOOTH_PX, no_halo, window_checks
from verifiers.tasks.grading._shared.near_miss import (
    gain_to_p95,
    render_writer,
    softened_to_ratio,
    write_pair,
)
from verifiers.tasks.grading._shared.preservation import GradingTask
from verifiers.tasks.grading._shared.regions import bbox_region, outside

OUTPUT = "out/face_lift.mov"
N_FRAMES = 24
FACE_R = (18, 24)


def face_centres(n: int) -> np.ndarray:
    t = np.arange(n)
    return np.c_[128 + 30 * np.sin(t / n * 2 * np.pi), 62 + 4 * np.sin(t / n * 4 * np.pi)]


def make_scene(rng: np.random.Generator, n: int = N_FRAMES):
    lab = g.flat(n, (42, 2, 6))
    lab[..., 0] += 8 * g.texture(rng, n, sigma_px=8) + 6 * g.texture(rng, n, sigma_px=1.2)
    c = face_centres(n)
    body = g.rect(n, np.c_[c[:, 0] - 30, c[:, 1] + 20, np.full(n, 60), np.full(n, 80)])
    face = g.ellipse(n, c, FACE_R)
    lab[body] = (30, 2, -10)
    lab[face] = (58, 14, 18)
    lab[..., 0][face] += 3 * g.texture(rng, n, sigma_px=3)[face]
    return g.to_rgb8(lab), {"face": face}, c


TASK = "R06.04.02.02-T02"
N = check_names(TASK)


class FaceWindow(GradingTask):
    task_id = TASK
    output = OUTPUT
    preserves = (N.background_unchanged, N.no_halo)
    primary_mask = "face"

    face_gain, background_unchanged, tracking = window_checks(N.face_gain, N.background_unchanged, N.tracking)

    @check(N.no_halo)
    def no_halo(self, p: Halo, curve: Curve) -> Result:
        return no_halo(self.shot, self.shot.mask("face"), p.max_gradient_ratio, curve)

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        src, masks, centres = make_scene(rng)
        g.write_shot(inst, src, masks, {"face_centres": centres.round(2).tolist()})
        n = len(src)

        def window(c: np.ndarray, scale: float = 1.5, soft_px: float = 7.0) -> np.ndarray:
            return np.clip(g.soften(g.ellipse(n, c, (FACE_R[0] * scale, FACE_R[1] * scale)), soft_px), 0, 1)

        g.write_video(inst.oracle / OUTPUT, g.grade_gain(src, window(centres), 0.3))

        m = inst.mutant("one_stop_push", [N.face_gain, N.no_halo],
                        "0.7 stop instead of 0.3 through the same softness: too bright, and its edge shows")
        g.write_video(m / OUTPUT, g.grade_gain(src, window(centres), 0.7))

        m = inst.mutant("window_too_large", [N.background_unchanged], "window 3× the face: the wall brightens")
        g.write_video(m / OUTPUT, g.grade_gain(src, window(centres, scale=3.0), 0.3))

        m = inst.mutant("track_lags_4_frames", [N.tracking, N.face_gain, N.background_unchanged],
                        "window trails the sway by 4 frames: off the face and onto the wall")
        lagged = centres[np.clip(np.arange(n) - 4, 0, n - 1)]
        g.write_video(m / OUTPUT, g.grade_gain(src, window(lagged), 0.3))

        m = inst.mutant("hard_edge_window", [N.no_halo], "softness 0: a visible ring around the face")
        g.write_video(m / OUTPUT, g.grade_gain(src, window(centres, soft_px=0), 0.3))

        # near misses at the seed's gain line (0.2 … 0.4 stop): 0.37 passes in full, 0.45 fails every frame
        m = inst.mutant("near_miss_gain_inside", [], "+0.37 stop: just inside the 0.4 stop edge")
        g.write_video(m / OUTPUT, g.grade_gain(src, window(centres), 0.37))
        m = inst.mutant("near_miss_gain_outside", [N.face_gain], "+0.45 stop: just outside the 0.4 stop edge")
        g.write_video(m / OUTPUT, g.grade_gain(src, window(centres), 0.45))

        # near misses at the tracking line (gain centroid within 10 % of the face's 37 px width): the window
        # 3.2 px (8.6 %) off the face's centre passes in full, 4.3 px (11.6 %) fails every frame
        write = render_writer(OUTPUT)

        write_pair(inst, "tracking", N.tracking, g.grade_gain(src, window(centres + np.array([3.2, 0.0])), 0.3),
                   g.grade_gain(src, window(centres + np.array([4.3, 0.0])), 0.3), write,
                   "window 3.2 px off the face centre (8.6 % of its width): just inside 10 %",
                   "window 4.3 px off (11.6 %): just outside 10 %")
        p = self.task.check(N.no_halo).typed
        write_pair(inst, "halo", N.no_halo, softened_to_halo(src, masks["face"], window, p.max_gradient_ratio - 0.1, False),
                   softened_to_halo(src, masks["face"], window, p.max_gradient_ratio + 0.1, True), write,
                   f"window edge as hard as reads a gradient ratio {p.max_gradient_ratio - 0.1:.1f}: just inside the "
                   f"{p.max_gradient_ratio} line", f"{p.max_gradient_ratio + 0.1:.1f}: just outside")
        oracle, bg = g.grade_gain(src, window(centres), 0.3), ~bbox_region(masks["face"], 2.0)
        write_pair(inst, "background", N.background_unchanged, gain_to_p95(oracle, src, bg, 0.025, above=False),
                   gain_to_p95(oracle, src, bg, 0.035, above=True), write,
                   "background p95 |gain| 0.025 stop: just inside the 0.03 stop line", "0.035 stop: just outside 0.03")


def softened_to_halo(src8: np.ndarray, face: np.ndarray, window: Any, target_ratio: float, above: bool) -> np.ndarray:
    """The +0.3 stop window with its softness set frame by frame (bisection over 0 … 7 px) so that the
    halo statistic (face_window.no_halo: p99 gain gradient over the median source gradient in its ring)
    reads `target_ratio`, just `above` it or just below: the pair at the no-halo line."""
    ring = bbox_region(face, 2.0) & outside(face, EDGE_GUARD_PX)
    centres = face_centres(len(src8))

    def graded(i: int, soft_px: float) -> np.ndarray:
        return g.grade_gain(src8[i:i + 1], window(centres, soft_px=soft_px)[i:i + 1], 0.3)

    return softened_to_ratio(src8, ring, graded, target_ratio, soft_px=7.0, smooth_px=HALO_SMOOTH_PX, above=above)
