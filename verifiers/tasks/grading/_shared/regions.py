"""Region statistics of a shot: masks grown, shrunk and boxed; means, hues and ΔE2000 over them.

`untouched_check` is the family's "regions X, Y vs source" measurement: per-frame mean ΔE2000 above
the export floor, region by region (the worst region counts), over the chroma-guarded masks;
`untouched` declares it as a task's check in one line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.ndimage import binary_dilation

from verifiers.checks import CheckFn, Result, check
from verifiers.curves import Curve
from verifiers.measure.colour import chroma, delta_e2000, hue_deg
from verifiers.paramtypes.grading import MaxDeltaE
from verifiers.tasks.grading._shared.memo import memo
from verifiers.tasks.grading._shared.shot import DE_STRIDE, Shot, guarded


def frame_share(curve: Curve, ok: np.ndarray) -> tuple[float, float]:
    """(score, percent of frames passing): the check's share_of_frames curve on per-frame passes
    (full marks at its full_at_pct, else the passing share; no frames: 0)."""
    pct = 100.0 * float(np.mean(ok)) if len(ok) else 0.0
    return curve.share(pct), pct


def frames_within(curve: Curve, ranges: dict[str, tuple[np.ndarray, float, float]],
                  failure: Callable[[float], str]) -> Result:
    """A frame passes when every per-frame quantity lies in its seed's [low, high]: `ranges` maps each
    quantity's evidence key to (values, low, high); evidence gives each one's [lowest, highest] frame.
    `failure(frames_ok_pct)` is the message when the share is not full."""
    ok = np.logical_and.reduce([(v >= lo) & (v <= hi) for v, lo, hi in ranges.values()])
    sc, pct = frame_share(curve, ok)
    ev: dict[str, Any] = {k: [float(v.min()), float(v.max())] for k, (v, _lo, _hi) in ranges.items()}
    return Result(sc, {**ev, "frames_ok_pct": pct}, "" if sc == 1 else failure(pct))


def per_frame_de(shot: Shot, mask: np.ndarray, stride: int = DE_STRIDE, which: str = "out",
                 luma_only: np.ndarray | None = None) -> np.ndarray:
    """Mean ΔE2000 source → render (or → `which`, e.g. "floor") over each frame's mask (every
    `stride`-th pixel). Frames flagged in `luma_only` compare L* alone (the source's a*, b* kept):
    a region too thin for the render's chroma is judged on luma."""
    out = np.zeros(shot.n)
    ls, lo = shot.lab("src"), shot.lab(which)
    for i in range(shot.n):
        idx = np.flatnonzero(mask[i])[::stride]
        if len(idx):
            a, b = ls[i].reshape(-1, 3)[idx], lo[i].reshape(-1, 3)[idx]
            if luma_only is not None and luma_only[i]:
                b = np.c_[b[:, :1], a[:, 1:]]
            out[i] = float(delta_e2000(a, b).mean())
    return out


def floor_de(shot: Shot, mask: np.ndarray, luma_only: np.ndarray | None = None) -> np.ndarray:
    """Per-frame mean ΔE2000 the export alone costs over the mask (zeros for an exact render)."""
    if shot.floor is None:
        return np.zeros(shot.n)
    extra = (mask,) if luma_only is None else (mask, luma_only)
    return memo("floor_de", (shot.lab("src"), shot.lab("floor")), extra,
                lambda: per_frame_de(shot, mask, which="floor", luma_only=luma_only))


def untouched_check(shot: Shot, names: list[str], max_de: float, curve: Curve) -> Result:
    """'Regions X, Y vs source': each region's per-frame mean ΔE2000 ≤ max_de, on every frame.

    Regions are judged one by one (worst region per frame) so a small region that changed is not
    averaged away by a large one that did not.
    """
    per_region, floors, thin_frames = {}, {}, {}
    for nm in names:
        region, thin = guarded(shot, shot.mask(nm))
        raw = per_frame_de(shot, region, luma_only=thin)
        fl = floor_de(shot, region, luma_only=thin)
        per_region[nm] = np.maximum(raw - fl, 0.0)
        floors[nm] = fl
        thin_frames[nm] = int(thin.sum())
    de = np.max(np.stack(list(per_region.values())), axis=0)
    score, pct = frame_share(curve, de <= max_de)
    ev = {"regions": names, "worst_frame_mean_delta_e2000": float(de.max()), "frames_ok_pct": pct,
          "worst_by_region": {k: float(v.max()) for k, v in per_region.items()},
          "export_floor_mean_delta_e2000": {k: float(v.mean()) for k, v in floors.items()},
          "luma_only_frames": {k: v for k, v in thin_frames.items() if v},
          "statistic": "mean ΔE2000 source→render minus source→(source through the same export)",
          "max_delta_e2000": max_de, "pixel_stride": DE_STRIDE, "border_guard_px": list(shot.guard_px()),
          **shot.floor_info()}
    worst = max(per_region, key=lambda k: per_region[k].max())
    return Result(score, ev, "" if score == 1.0 else (f"{worst} changed: worst frame mean ΔE2000 {de.max():.2f} "
                                                      f"above the export floor > {max_de}"))


def untouched(name: str, *regions: str) -> CheckFn:
    """Check `name` of a GradingTask is `untouched_check` over GT masks `regions` at the seed's
    `max_de2000` (MaxDeltaE): `skin_untouched = untouched(N.skin_untouched, "skin")`.
    Eleven tasks judge their "leave these regions alone" share exactly so; one declaration each."""
    @check(name)
    def judged(self: Any, p: MaxDeltaE, curve: Curve) -> Result:
        return untouched_check(self.shot, list(regions), p.max_de2000, curve)

    judged.__name__ = judged.__qualname__ = str(name)
    return judged


def masked_mean(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per-frame mean of a (frames, h, w) array over a (frames, h, w) mask (NaN where empty)."""
    cnt = mask.sum(axis=(1, 2))
    s = np.where(mask, values, 0.0).sum(axis=(1, 2))
    return np.where(cnt > 0, s / np.maximum(cnt, 1), np.nan)


def chroma_of(shot: Shot, which: str) -> np.ndarray:
    return chroma(shot.lab(which))


def chroma_change_pct(shot: Shot, region: np.ndarray) -> np.ndarray:
    """Per frame: the region's mean C* in the render against the source's, percent change."""
    return 100 * (masked_mean(chroma_of(shot, "out"), region) / masked_mean(chroma_of(shot, "src"), region) - 1)


def circular_mean_hue(lab: np.ndarray, mask: np.ndarray) -> float:
    """Hue of the mean a*, b* over the mask (chroma-weighted circular mean), degrees."""
    ab = lab[mask][:, 1:3].mean(axis=0)
    return float(hue_deg(np.array([0.0, ab[0], ab[1]])))


def interior(mask: np.ndarray, band_px: int) -> np.ndarray:
    """Mask minus a `band_px` border (per frame): stats away from a soft window's edge."""
    from scipy.ndimage import binary_erosion

    if band_px <= 0:
        return mask
    return np.stack([binary_erosion(m, iterations=band_px) for m in mask])


def outside(mask: np.ndarray, band_px: int) -> np.ndarray:
    """Complement of the mask grown by `band_px` (per frame)."""
    if band_px <= 0:
        return ~mask
    return ~np.stack([binary_dilation(m, iterations=band_px) for m in mask])


def bbox_region(mask: np.ndarray, scale: float) -> np.ndarray:
    """Per frame: the mask's bounding box scaled about its centre by `scale` (bool boxes)."""
    n, _h, _w = mask.shape
    out = np.zeros_like(mask)
    for i in range(n):
        ys, xs = np.nonzero(mask[i])
        if not len(xs):
            continue
        cx, cy = (xs.min() + xs.max()) / 2, (ys.min() + ys.max()) / 2
        hw, hh = (xs.max() - xs.min() + 1) * scale / 2, (ys.max() - ys.min() + 1) * scale / 2
        out[i, max(0, int(np.floor(cy - hh))): int(np.ceil(cy + hh)),
            max(0, int(np.floor(cx - hw))): int(np.ceil(cx + hw))] = True
    return out


def mask_centroid(mask2d: np.ndarray, weights: np.ndarray | None = None) -> tuple[float, float] | None:
    ys, xs = np.nonzero(mask2d)
    if not len(xs):
        return None
    w = np.ones(len(xs)) if weights is None else weights[ys, xs]
    if w.sum() <= 0:
        return None
    return float((xs * w).sum() / w.sum()), float((ys * w).sum() / w.sum())
