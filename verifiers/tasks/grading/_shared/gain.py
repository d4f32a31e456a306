"""Exposure gain maps (log2 of linear-light Y, render over source) and the statistics built on them.

Windows, vignettes and eye lights are judged as per-pixel gain in stops; the export's own gain
(`which="floor"`) is what an unedited render through the same codec shows (policy rule 4).
"""

from __future__ import annotations

import numpy as np

from verifiers.tasks.grading._shared.memo import memo
from verifiers.tasks.grading._shared.shot import Shot

#: per-pixel gain maps are smoothed this much before statistics, to ignore codec noise
GAIN_SMOOTH_PX = 1.5


def _srgb_linear(c: np.ndarray) -> np.ndarray:
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


_SRGB8_LINEAR = _srgb_linear(np.arange(256, dtype=np.float64) / 255.0)


def linear_y(rgb8: np.ndarray) -> np.ndarray:
    """Linear-light Y (BT.709 weights) per pixel. Speed: uint8 channels are linearised by lookup of
    the same formula's 256 values; the Y of read-only stacks (the GT source and export floors,
    decoded once per process by shot.py) is memoised, since every gain check and case asks again."""
    arr = np.asarray(rgb8)

    def compute() -> np.ndarray:
        if arr.dtype == np.uint8:
            lin = _SRGB8_LINEAR[arr]
        else:
            lin = _srgb_linear(np.asarray(arr, dtype=np.float64) / 255.0)
        return lin @ np.array([0.2126, 0.7152, 0.0722])

    return memo("linear_y", (arr,), (), compute)


def gain_map_stops(shot: Shot, floor: float = 0.01, smooth_px: float = GAIN_SMOOTH_PX,
                   which: str = "out") -> np.ndarray:
    """Per-pixel exposure change log2(Y_out / Y_src) (0 where either is near black), each frame
    smoothed by `smooth_px` so codec noise does not read as gain; windows and leaks are far wider.
    `which="floor"`: the change the export alone makes (zeros for an exact render)."""
    if which == "floor" and shot.floor is None:
        return np.zeros(shot.src.shape[:3])
    return log2_gain(linear_y(shot.src), linear_y(shot.out if which == "out" else shot.floor), floor, smooth_px)


def log2_gain(y0: np.ndarray, y1: np.ndarray, floor: float = 0.01, smooth_px: float = GAIN_SMOOTH_PX) -> np.ndarray:
    """log2(y1 / y0) per pixel of (frames, h, w) linear-Y stacks (0 where either is at or below `floor`),
    each frame smoothed by `smooth_px`: the gain map of `gain_map_stops`, for any pair of stacks."""
    from scipy.ndimage import gaussian_filter

    ok = (y0 > floor) & (y1 > floor)
    g = np.where(ok, np.log2(np.maximum(y1, 1e-6) / np.maximum(y0, 1e-6)), 0.0)
    if smooth_px > 0:
        g = np.stack([gaussian_filter(f, smooth_px) for f in g])
    return g


def per_frame_gain(gmap: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Median gain in stops over each frame's mask (NaN where the mask is empty)."""
    out = np.full(len(gmap), np.nan)
    for i in range(len(gmap)):
        if mask[i].any():
            out[i] = float(np.median(gmap[i][mask[i]]))
    return out


def edge_gradient_ratio(shot: Shot, ring: np.ndarray, smooth_px: float, which: str = "out") -> np.ndarray:
    """Per frame: p99 gradient of the unsmoothed gain map over the ring / median source log2-Y gradient."""
    raw = gain_map_stops(shot, smooth_px=0, which=which)
    y0 = np.log2(linear_y(shot.src) + 1e-3)
    return np.array([frame_gradient_ratio(raw[i], y0[i], ring[i], smooth_px) if ring[i].any() else 0.0
                     for i in range(shot.n)])


def frame_gradient_ratio(raw_gain: np.ndarray, log2_y_src: np.ndarray, ring: np.ndarray, smooth_px: float) -> float:
    """One frame of `edge_gradient_ratio` (unsmoothed gain map and log2 source Y of that frame): what a
    near-miss maker measures while it sets a window's softness."""
    from scipy.ndimage import gaussian_filter

    gg = np.hypot(*np.gradient(gaussian_filter(raw_gain, smooth_px)))[ring]
    gs = np.hypot(*np.gradient(gaussian_filter(log2_y_src, smooth_px)))[ring]
    return float(np.percentile(gg, 99)) / max(float(np.median(gs)), 1e-6)


def p95_abs_gain_above_floor(shot: Shot, gmap: np.ndarray, region: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(per-frame p95 |gain| over the region minus the export's own p95 there, that floor)."""
    gfl = gain_map_stops(shot, which="floor")
    raw = np.array([float(np.percentile(np.abs(gmap[i][region[i]]), 95)) if region[i].any() else 0.0
                    for i in range(shot.n)])
    fl = np.array([float(np.percentile(np.abs(gfl[i][region[i]]), 95)) if region[i].any() else 0.0
                   for i in range(shot.n)])
    return np.maximum(raw - fl, 0.0), fl
