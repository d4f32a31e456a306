"""R06.04.02.02-T09: a tracked eye light (+0.15..0.35 stop in both eyes) in Final Cut Pro.

Render: out/eyelight.mov. GT: gt/source.mov, gt/masks.npz {eye_l, eye_r, skin}. FCP libraries are
not read (macOS-only); the render carries every check. Eye gain: median log2 linear-Y gain in each
eye mask (both must pass). Skin: 95th percentile |gain| over face skin outside 1.5× each eye's box.
Tracking: per eye, the centroid of positive gain (> 0.05 stop) within that eye's 3× box vs the eye's
GT centre; the seed's 15 px is at 1080 lines, scaled to the shot with a floor of MIN_OFFSET_PX.
Soft edges (no number in the seed): an eye light is too small for T02's texture-relative test, so
the window's edge width is measured instead: the light's peak gain (p99 |gain|) / the gain map's p99 gradient near the eyes
(after 1 px smoothing) must be ≥ MIN_SOFT_PX_AT_144 px at 144 lines (scaled with the height).
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import gaussian_filter

from verifiers.base import Checks, ScoreContext
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading.common import (
    GradingVerifier,
    Shot,
    bbox_region,
    frame_share_score,
    gain_map_stops,
    mask_centroid,
    p95_abs_gain_above_floor,
    per_frame_gain,
)

OUTPUT = "out/eyelight.mov"
MIN_OFFSET_PX = 2.0
REFERENCE_HEIGHT_PX = 1080
MIN_SOFT_PX_AT_144 = 4.0  # a hard edge measures ≈ 2.5 px after the 1 px smoothing
EYE_R = (8, 5)
N_FRAMES = 24


def eye_centres(n: int) -> tuple[np.ndarray, np.ndarray]:
    t = np.arange(n)
    c = np.c_[120 + 16 * np.sin(t / n * 2 * np.pi), 62 + 3 * np.cos(t / n * 2 * np.pi)]
    offset = np.array([22.0, 0.0])
    return c - offset, c + offset


def make_scene(rng: np.random.Generator, n: int = N_FRAMES):
    lab = g.flat(n, (30, 4, 8))
    lab[..., 0] += 6 * g.texture(rng, n, sigma_px=6)
    left, right = eye_centres(n)
    face = g.ellipse(n, (left + right) / 2 + [0, 14], (50, 62))
    lab[face] = (62, 14, 18)
    lab[..., 0][face] += 5 * g.texture(rng, n, sigma_px=1.5)[face]
    eye_l, eye_r = g.ellipse(n, left, EYE_R), g.ellipse(n, right, EYE_R)
    for m in (eye_l, eye_r):
        lab[m] = (45, 2, 4)
        lab[..., 0][m] += 12 * g.texture(rng, n, sigma_px=1.0)[m]
    return g.to_rgb8(lab), {"eye_l": eye_l, "eye_r": eye_r, "skin": face & ~(eye_l | eye_r)}, (left, right)


@register
class EyeLight(GradingVerifier):
    task_id = "R06.04.02.02-T09"
    output = OUTPUT
    preserves = ("skin_unchanged", "soft_edges")

    def primary_region(self, shot: Shot) -> np.ndarray:
        return shot.mask("eye_l") | shot.mask("eye_r")

    def grade(self, ctx: ScoreContext, checks: Checks) -> None:
        shot = self.load(ctx, OUTPUT)
        eyes = [shot.mask("eye_l"), shot.mask("eye_r")]
        gmap = gain_map_stops(shot)
        h = shot.src.shape[1]

        p = checks.params("eye_gain")
        gains = np.stack([per_frame_gain(gmap, e) for e in eyes])
        ok = np.all((gains >= p["min_gain_stop"]) & (gains <= p["max_gain_stop"]), axis=0)
        sc, pct = frame_share_score(ok)
        checks.set("eye_gain", sc, {"gain_stop": [float(np.nanmin(gains)), float(np.nanmax(gains))], "frames_ok_pct": pct},
                   "" if sc == 1 else f"eye gain {np.nanmean(gains):+.2f} stop (frames ok {pct:.0f}%)")

        p = checks.params("skin_unchanged")
        skin = shot.mask("skin") & ~bbox_region(eyes[0], p["bbox_scale"]) & ~bbox_region(eyes[1], p["bbox_scale"])
        sk, fl = p95_abs_gain_above_floor(shot, gmap, skin)
        sc, pct = frame_share_score(sk <= p["max_gain_stop"])
        checks.set("skin_unchanged", sc, {"max_p95_abs_gain_stop": float(sk.max()), "frames_ok_pct": pct,
                                          "export_floor_p95_abs_gain_stop": float(fl.mean()), **shot.floor_info()},
                   "" if sc == 1 else f"face skin changed by {sk.max():.3f} stop")

        p = checks.params("tracking")
        limit = max(MIN_OFFSET_PX, p["max_offset_px"] * h / REFERENCE_HEIGHT_PX)
        off = np.zeros(shot.n)
        for eye in eyes:
            zone = bbox_region(eye, 3.0)
            for i in range(shot.n):
                want = mask_centroid(eye[i])
                pos = np.where(zone[i] & (gmap[i] > 0.05), gmap[i], 0.0)
                got = mask_centroid(pos > 0, pos)
                d = np.inf if want is None or got is None else float(np.hypot(got[0] - want[0], got[1] - want[1]))
                off[i] = max(off[i], d)
        sc, pct = frame_share_score(off <= limit, p["min_frames_pct"])
        checks.set("tracking", sc, {"max_offset_px": float(off.max()) if np.isfinite(off).all() else None,
                                    "limit_px": limit, "frames_ok_pct": pct},
                   "" if sc == 1 else f"eye light off the eyes on {100 - pct:.0f}% of frames")

        raw = gain_map_stops(shot, smooth_px=0)  # edges judged on the unsmoothed map
        zone = bbox_region(eyes[0], 3.0) | bbox_region(eyes[1], 3.0)
        width = np.full(shot.n, np.inf)
        for i in range(shot.n):
            gg = np.hypot(*np.gradient(gaussian_filter(raw[i], 1.0)))[zone[i]]
            steep = float(np.percentile(gg, 99)) if len(gg) else 0.0
            peak = float(np.percentile(np.abs(raw[i][zone[i]]), 99)) if zone[i].any() else 0.0
            if steep > 1e-4:
                width[i] = peak / steep
        limit = MIN_SOFT_PX_AT_144 * h / 144
        sc, pct = frame_share_score(width >= limit)
        checks.set("soft_edges", sc, {"min_edge_width_px": float(width.min()) if np.isfinite(width.min()) else None,
                                      "limit_px": limit, "frames_ok_pct": pct,
                                      "statistic": "p99 |gain| / p99 gain-map gradient near the eyes (1 px smoothing)"},
                   "" if sc == 1 else f"eye window edge only {width.min():.1f} px wide: a ring shows")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        src, masks, (left, right) = make_scene(rng)
        g.write_shot(inst, src, masks, {"eye_centres": [left.round(2).tolist(), right.round(2).tolist()]})
        n = len(src)

        def light(lc: np.ndarray, rc: np.ndarray, stops: float = 0.25, soft_px: float = 2.5) -> np.ndarray:
            win = g.ellipse(n, lc, (EYE_R[0] * 1.2, EYE_R[1] * 1.3)) | g.ellipse(n, rc, (EYE_R[0] * 1.2, EYE_R[1] * 1.3))
            return g.grade_gain(src, np.clip(g.soften(win, soft_px), 0, 1), stops)

        g.write_video(inst.oracle / OUTPUT, light(left, right))

        m = inst.mutant("too_bright", ["eye_gain"], "0.6 stop: glowing eyes")
        g.write_video(m / OUTPUT, light(left, right, stops=0.6))

        lag = np.clip(np.arange(n) - 3, 0, n - 1)
        m = inst.mutant("track_lags_3_frames", ["tracking", "eye_gain"], "the eye windows trail the head by 3 frames")
        g.write_video(m / OUTPUT, light(left[lag], right[lag]))

        m = inst.mutant("whole_face_lift", ["skin_unchanged"], "the lift applied to the whole face")
        g.write_video(m / OUTPUT, g.grade_gain(src, np.clip(g.soften(masks["skin"] | masks["eye_l"] | masks["eye_r"], 2.0),
                                                            0, 1), 0.25))

        m = inst.mutant("hard_edge", ["soft_edges"], "eye windows with no softness")
        g.write_video(m / OUTPUT, light(left, right, soft_px=0))
