"""R06.04.02.02-T02: brighten a swaying face by +0.3 stop with a soft tracked circular window.

Render: out/face_lift.mov. GT: gt/source.mov, gt/masks.npz {face}. Gains are log2 of linear-light Y
render/source per pixel (verifiers.tasks.grading.common.gain_map_stops). Face gain: the median over
the face mask. Background: the 95th percentile of |gain| outside twice the face's bounding box (a leak over
more than 5 % of the background fails). Tracking: the
centroid of the positive gain (pixels > GAIN_FLOOR_STOP) against the face mask's centroid, in
percent of face width. No halo: in the annulus between the face (less EDGE_GUARD_PX) and twice its
box, the gain map's 99th-percentile gradient (stops/px) over the source's median log2-luminance
gradient must stay ≤ 1.2 (both smoothed by HALO_SMOOTH_PX to ignore 8-bit quantisation): a wide
soft window changes more slowly than the picture's own texture, a hard edge far faster.
"""

from __future__ import annotations

import numpy as np

from verifiers.base import Checks, ScoreContext
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading.common import (
    GradingVerifier,
    Shot,
    bbox_region,
    edge_gradient_ratio,
    frame_share_score,
    gain_map_stops,
    mask_centroid,
    outside,
    p95_abs_gain_above_floor,
    per_frame_gain,
)

OUTPUT = "out/face_lift.mov"
GAIN_FLOOR_STOP = 0.05
HALO_SMOOTH_PX = 1.0
EDGE_GUARD_PX = 3  # the subject's own outline is left out of the halo ring
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


def score_window(shot, checks: Checks, face: np.ndarray, gain_check: str, background_check: str,
                 tracking_check: str, halo_check: str | None, offset_key: str) -> None:
    """The four window checks shared by the face (T02) and eye-light (T09) tasks."""
    gmap = gain_map_stops(shot)
    p = checks.params(gain_check)
    gain = per_frame_gain(gmap, face)
    ok = (gain >= p["min_gain_stop"]) & (gain <= p["max_gain_stop"])
    sc, pct = frame_share_score(ok)
    checks.set(gain_check, sc, {"gain_stop": [float(np.nanmin(gain)), float(np.nanmax(gain))], "frames_ok_pct": pct},
               "" if sc == 1 else f"gain {np.nanmean(gain):+.2f} stop in the GT region (frames ok {pct:.0f}%)")

    p = checks.params(background_check)
    far = ~bbox_region(face, p["bbox_scale"])
    bg, fl = p95_abs_gain_above_floor(shot, gmap, far)
    sc, pct = frame_share_score(bg <= p["max_gain_stop"])
    checks.set(background_check, sc, {"max_p95_abs_gain_stop": float(bg.max()), "bbox_scale": p["bbox_scale"],
                                      "export_floor_p95_abs_gain_stop": float(fl.mean()),
                                      "statistic": "p95 |gain| minus the same through the render's export",
                                      "frames_ok_pct": pct, **shot.floor_info()},
               "" if sc == 1 else f"outside the window changed by {bg.max():.3f} stop (95th percentile)")

    p = checks.params(tracking_check)
    off = np.full(shot.n, np.inf)
    for i in range(shot.n):
        want = mask_centroid(face[i])
        pos = np.where(gmap[i] > GAIN_FLOOR_STOP, gmap[i], 0.0)
        got = mask_centroid(pos > 0, pos)
        if want is None or got is None:
            continue
        dist = float(np.hypot(got[0] - want[0], got[1] - want[1]))
        if offset_key == "max_offset_face_width_pct":
            xs = np.nonzero(face[i])[1]
            off[i] = 100 * dist / max(xs.max() - xs.min() + 1, 1)
        else:
            off[i] = dist
    sc, pct = frame_share_score(off <= p[offset_key], p.get("min_frames_pct", 100.0))
    checks.set(tracking_check, sc, {"max_offset": float(off.max()) if np.isfinite(off).all() else None,
                                    "unit": offset_key, "frames_ok_pct": pct},
               "" if sc == 1 else f"gain centroid off the GT centre on {100 - pct:.0f}% of frames")

    if halo_check is None:
        return
    ratio_max = checks.params(halo_check).get("max_gradient_ratio", 1.2)
    ring = bbox_region(face, 2.0) & outside(face, EDGE_GUARD_PX)
    # edges judged on the unsmoothed map, less the ratio the export alone produces there (rule 4)
    fl = edge_gradient_ratio(shot, ring, HALO_SMOOTH_PX, "floor") if shot.floor is not None else np.zeros(shot.n)
    ratio = np.maximum(edge_gradient_ratio(shot, ring, HALO_SMOOTH_PX) - fl, 0.0)
    sc, pct = frame_share_score(ratio <= ratio_max)
    checks.set(halo_check, sc, {"max_gradient_ratio": float(ratio.max()), "limit": ratio_max, "frames_ok_pct": pct,
                                "export_floor_gradient_ratio": float(fl.mean()),
                                "statistic": "p99 gain-map gradient / median source log2-luminance gradient in the ring"},
               "" if sc == 1 else f"window edge adds gradient ×{ratio.max():.2f} (halo)")


@register
class FaceWindow(GradingVerifier):
    task_id = "R06.04.02.02-T02"
    output = OUTPUT
    preserves = ("background_unchanged", "no_halo")

    def primary_region(self, shot: Shot) -> np.ndarray:
        return shot.mask("face")

    def grade(self, ctx: ScoreContext, checks: Checks) -> None:
        shot = self.load(ctx, OUTPUT)
        score_window(shot, checks, shot.mask("face"), "face_gain", "background_unchanged", "tracking", "no_halo",
                     "max_offset_face_width_pct")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        src, masks, centres = make_scene(rng)
        g.write_shot(inst, src, masks, {"face_centres": centres.round(2).tolist()})
        n = len(src)

        def window(c: np.ndarray, scale: float = 1.5, soft_px: float = 7.0) -> np.ndarray:
            return np.clip(g.soften(g.ellipse(n, c, (FACE_R[0] * scale, FACE_R[1] * scale)), soft_px), 0, 1)

        g.write_video(inst.oracle / OUTPUT, g.grade_gain(src, window(centres), 0.3))

        m = inst.mutant("one_stop_push", ["face_gain", "no_halo"],
                        "0.7 stop instead of 0.3 through the same softness: too bright, and its edge shows")
        g.write_video(m / OUTPUT, g.grade_gain(src, window(centres), 0.7))

        m = inst.mutant("window_too_large", ["background_unchanged"], "window 3× the face: the wall brightens")
        g.write_video(m / OUTPUT, g.grade_gain(src, window(centres, scale=3.0), 0.3))

        m = inst.mutant("track_lags_4_frames", ["tracking", "face_gain", "background_unchanged"],
                        "window trails the sway by 4 frames: off the face and onto the wall")
        lagged = centres[np.clip(np.arange(n) - 4, 0, n - 1)]
        g.write_video(m / OUTPUT, g.grade_gain(src, window(lagged), 0.3))

        m = inst.mutant("hard_edge_window", ["no_halo"], "softness 0: a visible ring around the face")
        g.write_video(m / OUTPUT, g.grade_gain(src, window(centres, soft_px=0), 0.3))

        # near misses at the seed's gain line (0.2 … 0.4 stop): 0.37 passes in full, 0.45 fails every frame
        m = inst.mutant("near_miss_gain_inside", [], "+0.37 stop: just inside the 0.4 stop edge")
        g.write_video(m / OUTPUT, g.grade_gain(src, window(centres), 0.37))
        m = inst.mutant("near_miss_gain_outside", ["face_gain"], "+0.45 stop: just outside the 0.4 stop edge")
        g.write_video(m / OUTPUT, g.grade_gain(src, window(centres), 0.45))
