"""A tracked soft window that lifts a face (T02, and T18 through occlusions): its four measurements.

Gains are log2 of linear-light Y render/source per pixel (`gain.gain_map_stops`). Face gain: the
median over the face mask. Background: the 95th percentile of |gain| outside the face's bounding box
scaled by `bbox_scale_x`, less the export's own. Tracking: the centroid of the positive gain (pixels >
GAIN_FLOOR_STOP) against the face mask's centroid, in percent of face width. No halo: in the annulus
between the face (less EDGE_GUARD_PX) and twice its box, the gain map's 99th-percentile gradient over
the source's median log2-luminance gradient (both smoothed by HALO_SMOOTH_PX), less the export's own.
`window_checks` declares the first three as a task's checks, under the names its catalog gives them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from verifiers.checks import CheckFn, Result, check
from verifiers.curves import Curve
from verifiers.paramtypes.grading import FaceOffset, GainOutsideBox, GainRange
from verifiers.tasks.grading._shared.gain import edge_gradient_ratio, p95_abs_gain_above_floor, per_frame_gain
from verifiers.tasks.grading._shared.regions import bbox_region, frame_share, mask_centroid, outside
from verifiers.tasks.grading._shared.shot import Shot

GAIN_FLOOR_STOP = 0.05
HALO_SMOOTH_PX = 1.0
EDGE_GUARD_PX = 3  # the subject's own outline is left out of the halo ring


def window_gain(gmap: np.ndarray, face: np.ndarray, p: GainRange, curve: Curve) -> Result:
    gain = per_frame_gain(gmap, face)
    sc, pct = frame_share(curve, (gain >= p.min_gain_stops) & (gain <= p.max_gain_stops))
    return Result(sc, {"gain_stop": [float(np.nanmin(gain)), float(np.nanmax(gain))], "frames_ok_pct": pct},
                  "" if sc == 1 else f"gain {np.nanmean(gain):+.2f} stop in the GT region (frames ok {pct:.0f}%)")


def gain_outside_box(shot: Shot, gmap: np.ndarray, face: np.ndarray, p: GainOutsideBox, curve: Curve) -> Result:
    bg, fl = p95_abs_gain_above_floor(shot, gmap, ~bbox_region(face, p.bbox_scale_x))
    sc, pct = frame_share(curve, bg <= p.max_gain_stops)
    return Result(sc, {"max_p95_abs_gain_stop": float(bg.max()), "bbox_scale": p.bbox_scale_x,
                       "export_floor_p95_abs_gain_stop": float(fl.mean()),
                       "statistic": "p95 |gain| minus the same through the render's export",
                       "frames_ok_pct": pct, **shot.floor_info()},
                  "" if sc == 1 else f"outside the window changed by {bg.max():.3f} stop (95th percentile)")


def centroid_offsets_px(gmap: np.ndarray, face: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per frame: (the positive gain's centroid less the face mask's, (x, y) px, NaN where either is
    missing; the face's width, px). The gain centroid weighs pixels above GAIN_FLOOR_STOP by their gain."""
    off, width = np.full((len(face), 2), np.nan), np.ones(len(face))
    for i in range(len(face)):
        want = mask_centroid(face[i])
        pos = np.where(gmap[i] > GAIN_FLOOR_STOP, gmap[i], 0.0)
        got = mask_centroid(pos > 0, pos)
        if want is None or got is None:
            continue
        xs = np.nonzero(face[i])[1]
        off[i], width[i] = (got[0] - want[0], got[1] - want[1]), max(xs.max() - xs.min() + 1, 1)
    return off, width


def window_tracking(gmap: np.ndarray, face: np.ndarray, max_offset_face_width_pct: float, curve: Curve) -> Result:
    vec, width = centroid_offsets_px(gmap, face)
    off = np.nan_to_num(100 * np.hypot(vec[:, 0], vec[:, 1]) / width, nan=np.inf)
    sc, pct = frame_share(curve, off <= max_offset_face_width_pct)
    return Result(sc, {"max_offset": float(off.max()) if np.isfinite(off).all() else None,
                       "unit": "max_offset_face_width_pct", "frames_ok_pct": pct},
                  "" if sc == 1 else f"gain centroid off the GT centre on {100 - pct:.0f}% of frames")


def no_halo(shot: Shot, face: np.ndarray, ratio_max: float, curve: Curve) -> Result:
    ring = bbox_region(face, 2.0) & outside(face, EDGE_GUARD_PX)
    # edges judged on the unsmoothed map, less the ratio the export alone produces there (rule 4)
    fl = edge_gradient_ratio(shot, ring, HALO_SMOOTH_PX, "floor") if shot.floor is not None else np.zeros(shot.n)
    ratio = np.maximum(edge_gradient_ratio(shot, ring, HALO_SMOOTH_PX) - fl, 0.0)
    sc, pct = frame_share(curve, ratio <= ratio_max)
    return Result(sc, {"max_gradient_ratio": float(ratio.max()), "limit": ratio_max, "frames_ok_pct": pct,
                       "export_floor_gradient_ratio": float(fl.mean()),
                       "statistic": "p99 gain-map gradient / median source log2-luminance gradient in the ring"},
                  "" if sc == 1 else f"window edge adds gradient ×{ratio.max():.2f} (halo)")


def window_checks(gain: str, background: str, tracking: str, mask: str = "face") -> tuple[CheckFn, CheckFn, CheckFn]:
    """The window's gain, background and tracking checks over GT mask `mask`, named as the task's
    catalog names them (T02 and T18 judge the same window; T18 adds the occlusion):

        face_gain, background_untouched, no_drift = window_checks(N.face_gain, N.background_untouched, N.no_drift)
    """
    @check(gain)
    def gain_check(self: Any, p: GainRange, curve: Curve) -> Result:
        return window_gain(self.gmap, self.shot.mask(mask), p, curve)

    @check(background)
    def background_check(self: Any, p: GainOutsideBox, curve: Curve) -> Result:
        return gain_outside_box(self.shot, self.gmap, self.shot.mask(mask), p, curve)

    @check(tracking)
    def tracking_check(self: Any, p: FaceOffset, curve: Curve) -> Result:
        return window_tracking(self.gmap, self.shot.mask(mask), p.max_offset_face_width_pct, curve)

    return gain_check, background_check, tracking_check
