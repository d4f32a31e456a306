"""Shared plumbing of the colour-grading verifiers: the shot pair, GT masks, node graphs, scoring.

GT layout (every grading task): `gt/source.mov` is the ungraded shot as the app holds it, decoded
frame for frame against the agent's render; `gt/masks.npz` maps region names to per-frame
(frames, height, width) bool masks; `gt/shot.json` carries task facts (fps, centres, notes).
The render must have the source's frame size and frame count; anything else is the agent's fault.

The family's scoring policy (docs/catalog.md "Scoring policy", issue 21) lives here, once:
- content identity: a render not derived from the given shot (high-passed luma correlation per
  frame below IDENTITY_MIN_CORR on more than 1 frame in 10) fails every check, saying so;
- the export floor: "unchanged" statistics are compared with the same statistic of the source
  passed through the render's own kind of export (`Shot.floor`); the seed's number stays on top;
- baseline-relative preservation: the checks a task lists in `preserves` (untouched regions,
  protected subject, node graph, …) earn credit only in proportion to the share of frames in
  which the task's primary change is present (`primary_change`);
- chroma-aware guards: region borders skip as many pixels as the render's chroma is shared
  (4:2:0 → 2 px each way, 4:2:2 → 2 px across, lossy codecs + 1 px); a region too thin to keep
  any pixel after that is judged on luma (L*) only, with the source's a*, b*.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.ndimage import binary_dilation

from verifiers.base import AgentOutputError, Checks, GTError, ScoreContext, TaskVerifier
from verifiers.measure.colour import chroma, delta_e2000, hue_deg, rgb_to_lab
from verifiers.measure.errors import MediaError
from verifiers.measure.export_floor import RenderProfile, floor_video, render_profile
from verifiers.measure.frames import iter_frames

SOURCE = "source.mov"
MASKS = "masks.npz"
DE_STRIDE = 3  # ΔE2000 on every 3rd mask pixel: said in each check's evidence
#: untouched-region checks skip this many px at each region's border per chroma subsampling step:
#: 4:2:0/4:2:2 chroma is shared by 2 px, so a delivery codec smears every border with its neighbour's
#: colour (see `guard_px`); lossless RGB renders get no guard at all
CHROMA_GUARD_PX = 2
#: a lossy codec's ringing reaches one more pixel past the chroma share
LOSSY_GUARD_PX = 1
#: content identity: per-frame correlation of high-passed luma, source vs render, and the share of
#: frames that must reach it. Measured (docs/grading.md): legitimate grades and exports ≥ 0.80 on every
#: frame of all 20 tasks; another task's render, black, noise ≤ 0.1; a still frame of a moving shot < 0.5
IDENTITY_MIN_CORR = 0.5
IDENTITY_MIN_FRAMES_PCT = 90.0
IDENTITY_HIGHPASS_PX = 2.0
#: …and no other source frame may match a render frame better than its own by more than this
IDENTITY_TEMPORAL_TOL = 0.02
#: the primary change is present on a frame when the primary region's mean ΔE2000 (source → render)
#: exceeds the export floor's by this much (half a just-noticeable difference: an unedited export
#: sits at 0 ± 0.05 after the floor, the subtlest correct grade, T11's contrast, above 0.5)
CHANGE_MIN_DE = 0.5
#: per-pixel gain maps are smoothed this much before statistics, to ignore codec noise
GAIN_SMOOTH_PX = 1.5


_STACKS: dict[tuple[str, int, int], np.ndarray] = {}
_LABS: dict[tuple[str, int, int], np.ndarray] = {}
_CACHE_MAX = 6


def _key(path: Path) -> tuple[str, int, int]:
    st = Path(path).stat()
    return str(Path(path).resolve()), st.st_size, st.st_mtime_ns


def _remember(cache: dict, key: tuple[str, int, int], value: np.ndarray) -> np.ndarray:
    if len(cache) >= _CACHE_MAX:
        cache.pop(next(iter(cache)))
    value.setflags(write=False)
    cache[key] = value
    return value


def _read_stack(path: Path, cache: bool = False) -> np.ndarray:
    """All frames as uint8 sRGB. `cache`: GT files (source, export floors) are decoded once per
    process, keyed by path, size and mtime, since every check and self-test case reads them again."""
    key = _key(path) if cache else None
    if key is not None and key in _STACKS:
        return _STACKS[key]
    stack = np.stack([f.rgb for f in iter_frames(path)])
    return _remember(_STACKS, key, stack) if key is not None else stack


def _cached_lab(path: Path | None, rgb: np.ndarray) -> np.ndarray:
    if path is None:
        return rgb_to_lab(rgb)
    key = _key(path)
    if key not in _LABS:
        _remember(_LABS, key, rgb_to_lab(rgb))
    return _LABS[key]


@dataclass
class Shot:
    """Source and render frames (uint8 sRGB), GT masks, and lazily computed Lab stacks.

    `floor` is the source passed through the render's own kind of export (None when the render
    stores RGB exactly, or when no GT source file is known): statistics of src → floor are the
    export's own cost, which "unchanged" checks subtract (policy rule 4)."""

    src: np.ndarray
    out: np.ndarray
    masks: dict[str, np.ndarray]
    meta: dict[str, Any] = field(default_factory=dict)
    _lab: dict[str, np.ndarray] = field(default_factory=dict)
    source_path: Path | None = None
    profile: RenderProfile | None = None
    _floor: np.ndarray | None = None
    _floor_done: bool = False
    _floor_path: Path | None = None

    @property
    def n(self) -> int:
        return len(self.src)

    def lab(self, which: str) -> np.ndarray:
        if which not in self._lab:
            if which == "src":
                self._lab[which] = _cached_lab(self.source_path, self.src)
            elif which == "floor" and self.floor is not None:
                self._lab[which] = _cached_lab(self._floor_path, self.floor)
            elif which == "floor":
                self._lab[which] = self.lab("src")
            else:
                self._lab[which] = rgb_to_lab(self.out)
        return self._lab[which]

    @property
    def floor(self) -> np.ndarray | None:
        """The source through the render's export (frames as the render's), or None (exact render)."""
        if not self._floor_done:
            self._floor_done = True
            if self.profile is not None and not self.profile.exact and self.source_path is not None:
                try:
                    self._floor_path = floor_video(self.source_path, self.profile)
                    stack = _read_stack(self._floor_path, cache=True)
                except MediaError as exc:
                    raise GTError(f"export floor not measurable: {exc}") from None
                if stack.shape == self.src.shape:
                    self._floor = stack
        return self._floor

    def guard_px(self) -> tuple[int, int]:
        """(vertical, horizontal) px to skip at region borders for this render's chroma and codec."""
        if self.profile is None or self.profile.exact:
            return 0, 0
        sx, sy = self.profile.chroma_subsampling
        extra = LOSSY_GUARD_PX if self.profile.lossy else 0
        return (CHROMA_GUARD_PX if sy > 1 else 0) + extra, (CHROMA_GUARD_PX if sx > 1 else 0) + extra

    def floor_info(self) -> dict[str, Any]:
        return {"export": self.profile.describe() if self.profile else "unknown",
                "floor": "none (exact RGB render)" if self.floor is None else "source through the same export"}

    def mask(self, name: str) -> np.ndarray:
        if name not in self.masks:
            raise GTError(f"ground truth mask missing: {name}")
        return self.masks[name]


def load_shot(ctx: ScoreContext, rel: str, meta_name: str = "shot.json") -> Shot:
    """Decode the GT source and the agent's render; refuse a render that does not match the shot."""
    try:
        src = _read_stack(ctx.gt_path(SOURCE), cache=True)
    except MediaError as exc:
        raise GTError(f"GT source unusable: {exc}") from None
    try:
        with np.load(ctx.gt_path(MASKS)) as z:
            masks = {k: z[k].astype(bool) for k in z.files}
    except (OSError, ValueError) as exc:
        raise GTError(f"GT masks unreadable: {exc}") from None
    path = ctx.artifact(rel)
    try:
        out = _read_stack(path)
    except MediaError as exc:
        raise AgentOutputError(f"{rel} unusable: {exc}") from None
    if out.shape[1:] != src.shape[1:]:
        raise AgentOutputError(f"{rel} is {out.shape[2]}x{out.shape[1]}, the shot is {src.shape[2]}x{src.shape[1]}")
    if len(out) != len(src):
        raise AgentOutputError(f"{rel} has {len(out)} frames, the shot has {len(src)}")
    meta = ctx.gt_json(meta_name) if (ctx.gt / meta_name).exists() else {}
    try:
        profile = render_profile(path)
    except MediaError:
        profile = None
    return Shot(src, out, masks, meta, source_path=ctx.gt_path(SOURCE), profile=profile)


def frame_share_score(ok: np.ndarray, min_pct: float = 100.0) -> tuple[float, float]:
    """(score, percent of frames passing): full marks at min_pct, otherwise the passing share."""
    pct = 100.0 * float(np.mean(ok)) if len(ok) else 0.0
    return (1.0 if pct >= min_pct - 1e-9 else pct / 100.0), pct


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
    return per_frame_de(shot, mask, which="floor", luma_only=luma_only)


def untouched_check(shot: Shot, names: list[str], max_de: float) -> tuple[float, dict[str, Any], str]:
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
    score, pct = frame_share_score(de <= max_de)
    ev = {"regions": names, "worst_frame_mean_delta_e2000": float(de.max()), "frames_ok_pct": pct,
          "worst_by_region": {k: float(v.max()) for k, v in per_region.items()},
          "export_floor_mean_delta_e2000": {k: float(v.mean()) for k, v in floors.items()},
          "luma_only_frames": {k: v for k, v in thin_frames.items() if v},
          "statistic": "mean ΔE2000 source→render minus source→(source through the same export)",
          "max_delta_e2000": max_de, "pixel_stride": DE_STRIDE, "border_guard_px": list(shot.guard_px()),
          **shot.floor_info()}
    worst = max(per_region, key=lambda k: per_region[k].max())
    return score, ev, "" if score == 1.0 else (f"{worst} changed: worst frame mean ΔE2000 {de.max():.2f} "
                                               f"above the export floor > {max_de}")


def guarded(shot: Shot, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mask less the render's chroma guard, frames too thin for it): where the guard would empty a
    frame's region, the full region is kept and that frame is flagged to be judged on luma only."""
    gy, gx = shot.guard_px()
    if not gy and not gx:
        return mask, np.zeros(len(mask), dtype=bool)
    inner = erode_xy(mask, gy, gx)
    keep = inner.reshape(len(mask), -1).any(axis=1)
    return np.where(keep[:, None, None], inner, mask), ~keep & mask.reshape(len(mask), -1).any(axis=1)


def erode_xy(mask: np.ndarray, band_y: int, band_x: int) -> np.ndarray:
    """Per frame: the mask less a border `band_y` px tall and `band_x` px wide (rectangular element)."""
    from scipy.ndimage import binary_erosion

    if band_y <= 0 and band_x <= 0:
        return mask
    st = np.ones((2 * band_y + 1, 2 * band_x + 1), dtype=bool)
    return np.stack([binary_erosion(m, structure=st) for m in mask])


# -- content identity and baseline-relative preservation (policy rules 2 and 3) ------------------

def highpass_luma(rgb8: np.ndarray, sigma_px: float = IDENTITY_HIGHPASS_PX) -> np.ndarray:
    """Per frame: Y' minus its Gaussian blur, the picture's structure whatever a grade did to its levels."""
    from scipy.ndimage import gaussian_filter

    y = np.asarray(rgb8, dtype=np.float32) @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
    return np.stack([f - gaussian_filter(f, sigma_px) for f in y])


def structure_corr(a: np.ndarray, b: np.ndarray, sigma_px: float = IDENTITY_HIGHPASS_PX) -> float:
    """Correlation of two single-channel pictures after removing their Gaussian blur (0 if flat)."""
    from scipy.ndimage import gaussian_filter

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a, b = a - gaussian_filter(a, sigma_px), b - gaussian_filter(b, sigma_px)
    a, b = a - a.mean(), b - b.mean()
    den = float(np.sqrt((a * a).sum() * (b * b).sum()))
    return float((a * b).sum() / den) if den > 1e-9 else 0.0


def _hp_rows(rgb8: np.ndarray) -> np.ndarray:
    """(frames, pixels) high-passed luma, centred and unit-norm per frame, on ≤ 320 px wide frames."""
    step = max(1, int(np.ceil(rgb8.shape[2] / 320)))
    hp = highpass_luma(rgb8[:, ::step, ::step], IDENTITY_HIGHPASS_PX / step if step > 1 else IDENTITY_HIGHPASS_PX)
    rows = hp.reshape(len(hp), -1).astype(np.float64)
    rows -= rows.mean(axis=1, keepdims=True)
    norm = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.where(norm > 1e-6, rows / np.maximum(norm, 1e-12), 0.0)


def identity_matrix(shot: Shot) -> np.ndarray:
    """C[i, j]: correlation of the render's frame i with the source's frame j (high-passed luma)."""
    return _hp_rows(shot.out) @ _hp_rows(shot.src).T


def identity_corr(shot: Shot) -> np.ndarray:
    """Per-frame correlation of high-passed luma, source vs render (0 where either is flat)."""
    return np.diag(identity_matrix(shot)).copy()


def require_identity(shot: Shot, rel: str) -> dict[str, Any]:
    """Raise AgentOutputError unless the render is derived from the given shot, frame by frame (rule 2).

    Frame i is derived when its structure matches source frame i (correlation ≥ IDENTITY_MIN_CORR)
    and no other source frame matches it clearly better (a still frame, a shifted or reordered
    render fail here; a static shot, whose frames all match, does not)."""
    c = identity_matrix(shot)
    diag = np.diag(c)
    best_other = np.array([np.max(np.delete(c[i], i)) if shot.n > 1 else -1.0 for i in range(shot.n)])
    ok = (diag >= IDENTITY_MIN_CORR) & (diag >= best_other - IDENTITY_TEMPORAL_TOL)
    pct = 100.0 * float(ok.mean())
    ev = {"min_corr": float(diag.min()), "median_corr": float(np.median(diag)), "frames_derived_pct": pct}
    if pct < IDENTITY_MIN_FRAMES_PCT:
        bad = np.flatnonzero(~ok)
        raise AgentOutputError(
            f"{rel} is not derived from the given shot: only {pct:.0f}% of its frames match their source frame "
            f"(high-passed luma correlation ≥ {IDENTITY_MIN_CORR} and best among the shot's frames; fails on frames "
            f"{', '.join(map(str, bad[:6]))}{'…' if len(bad) > 6 else ''}; median {np.median(diag):.2f})")
    return ev


def primary_change(shot: Shot, region: np.ndarray) -> np.ndarray:
    """Per frame that has a primary region: is the task's primary change present there (region's
    mean ΔE2000 ≥ the export floor's + CHANGE_MIN_DE)? Frames without the region are not counted."""
    has = region.reshape(len(region), -1).any(axis=1)
    if not has.any():
        return np.zeros(0, dtype=bool)
    raw = per_frame_de(shot, region)
    return (raw - floor_de(shot, region) >= CHANGE_MIN_DE)[has]


def edge_gradient_ratio(shot: Shot, ring: np.ndarray, smooth_px: float, which: str = "out") -> np.ndarray:
    """Per frame: p99 gradient of the unsmoothed gain map over the ring / median source log2-Y gradient."""
    from scipy.ndimage import gaussian_filter

    raw = gain_map_stops(shot, smooth_px=0, which=which)
    y0 = np.log2(linear_y(shot.src) + 1e-3)
    ratio = np.zeros(shot.n)
    for i in range(shot.n):
        if not ring[i].any():
            continue
        gg = np.hypot(*np.gradient(gaussian_filter(raw[i], smooth_px)))[ring[i]]
        gs = np.hypot(*np.gradient(gaussian_filter(y0[i], smooth_px)))[ring[i]]
        ratio[i] = float(np.percentile(gg, 99)) / max(float(np.median(gs)), 1e-6)
    return ratio


def p95_abs_gain_above_floor(shot: Shot, gmap: np.ndarray, region: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(per-frame p95 |gain| over the region minus the export's own p95 there, that floor)."""
    gfl = gain_map_stops(shot, which="floor")
    raw = np.array([float(np.percentile(np.abs(gmap[i][region[i]]), 95)) if region[i].any() else 0.0
                    for i in range(shot.n)])
    fl = np.array([float(np.percentile(np.abs(gfl[i][region[i]]), 95)) if region[i].any() else 0.0
                   for i in range(shot.n)])
    return np.maximum(raw - fl, 0.0), fl


class GradingVerifier(TaskVerifier):
    """A grading task's scorer: `grade()` sets the checks; this class applies the family's policy.

    Subclasses name `preserves` (checks a do-nothing render would pass: untouched regions, protected
    subject, node graph, no halo …) and `primary_region(shot)` (where the asked-for change lives).
    The preserve checks are then scaled by the share of frames carrying that change (rule 3).
    """

    preserves: tuple[str, ...] = ()
    output: str = ""

    def primary_region(self, shot: Shot) -> np.ndarray:
        raise NotImplementedError

    def change_present(self, shot: Shot) -> np.ndarray:
        """Per counted frame: is the primary change there? (ΔE2000 above the floor by default)."""
        return primary_change(shot, self.primary_region(shot))

    def grade(self, ctx: ScoreContext, checks: Checks) -> None:
        raise NotImplementedError

    def load(self, ctx: ScoreContext, rel: str, meta_name: str = "shot.json") -> Shot:
        """load_shot, then the content-identity gate; remembers the shot for the preservation rule."""
        shot = load_shot(ctx, rel, meta_name)
        self._identity = require_identity(shot, rel)
        self._shot = shot
        return shot

    def score(self, ctx: ScoreContext, checks: Checks) -> None:
        self._shot: Shot | None = None
        self._identity: dict[str, Any] = {}
        #: a scorer without a Shot (T14's EXRs) sets per-unit "primary change present" itself
        self._present: np.ndarray | None = None
        try:
            self.grade(ctx, checks)
        except AgentOutputError as exc:
            self._scale_preserves(checks, 0.0, {"reason": str(exc)})
            raise
        if self._present is not None:
            self._scale_preserves(checks, float(np.mean(self._present)) if len(self._present) else 0.0,
                                  {"primary_change_units_pct": 100.0 * float(np.mean(self._present))})
        elif self._shot is not None:
            present = self.change_present(self._shot)
            self._scale_preserves(checks, float(present.mean()) if len(present) else 0.0,
                                  {"primary_change_frames_pct": 100.0 * float(present.mean()),
                                   "identity": self._identity})

    def build(self, inst: Any, rng: np.random.Generator) -> None:
        """The task's synthetic instance (workdir, GT, oracle, mutants)."""
        raise NotImplementedError

    def synth(self, inst: Any, rng: np.random.Generator) -> None:
        """build(), then the family's export and gaming-baseline cases (verifiers.synthcases)."""
        self.build(inst, rng)
        register_cases(inst, self.task_id, self.output)

    def _scale_preserves(self, checks: Checks, factor: float, why: dict[str, Any]) -> None:
        for name in self.preserves:
            res = checks.results.get(name)
            if res is None or res.status == "error" or factor >= 1.0:
                continue
            ev = {**res.evidence, "baseline_relative": {**why, "unscaled_score": res.score, "factor": factor}}
            if "reason" in why:  # the render is unusable or not the shot: say that, not a share
                msg = f"{why['reason']} (this share is credited only with the task's change present)"
            else:
                msg = (f"{res.message + '; ' if res.message else ''}credited ×{factor:.2f}: the task's primary "
                       f"change is present on {100 * factor:.0f}% of frames (leaving things alone earns nothing by itself)")
            checks.set(name, res.score * factor, ev, msg)


def masked_mean(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per-frame mean of a (frames, h, w) array over a (frames, h, w) mask (NaN where empty)."""
    cnt = mask.sum(axis=(1, 2))
    s = np.where(mask, values, 0.0).sum(axis=(1, 2))
    return np.where(cnt > 0, s / np.maximum(cnt, 1), np.nan)


def chroma_of(shot: Shot, which: str) -> np.ndarray:
    return chroma(shot.lab(which))


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


def linear_y(rgb8: np.ndarray) -> np.ndarray:
    c = np.asarray(rgb8, dtype=np.float64) / 255.0
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return lin @ np.array([0.2126, 0.7152, 0.0722])


def gain_map_stops(shot: Shot, floor: float = 0.01, smooth_px: float = GAIN_SMOOTH_PX,
                   which: str = "out") -> np.ndarray:
    """Per-pixel exposure change log2(Y_out / Y_src) (0 where either is near black), each frame
    smoothed by `smooth_px` so codec noise does not read as gain; windows and leaks are far wider.
    `which="floor"`: the change the export alone makes (zeros for an exact render)."""
    from scipy.ndimage import gaussian_filter

    if which == "floor" and shot.floor is None:
        return np.zeros(shot.src.shape[:3])
    y0, y1 = linear_y(shot.src), linear_y(shot.out if which == "out" else shot.floor)
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


def mask_centroid(mask2d: np.ndarray, weights: np.ndarray | None = None) -> tuple[float, float] | None:
    ys, xs = np.nonzero(mask2d)
    if not len(xs):
        return None
    w = np.ones(len(xs)) if weights is None else weights[ys, xs]
    if w.sum() <= 0:
        return None
    return float((xs * w).sum() / w.sum()), float((ys * w).sum() / w.sum())


# -- node graphs (DRX, exported by the harness into state/) ------------------------------------

GRADE_FILE_SUFFIXES = (".drx", ".cube", ".3dl", ".cdl", ".cc", ".blg", ".fcpxml", ".prproj", ".lut")
APP_WRITERS = ("resolve", "premiere", "final cut", "finalcut", "baselight", "tally", "harness")


def outside_grade_writes(ctx: ScoreContext) -> list[str]:
    """Grade files (LUT/DRX/CDL/BLG/FCPXML/prproj) the audit saw written by a non-app process."""
    bad = []
    for e in ctx.events or []:
        p = e.get("payload") or {}
        if e.get("source") != "audit" or e.get("kind") not in ("file_written", "write"):
            continue
        path = str(p.get("path", ""))
        who = str(p.get("comm") or p.get("exe") or p.get("process") or "").replace("\\", "/").rsplit("/", 1)[-1].lower()
        if path.lower().endswith(GRADE_FILE_SUFFIXES) and not any(a in who for a in APP_WRITERS):
            bad.append(f"{path} by {who or 'unknown'}")
    return bad


def drx_nodes(path: Path) -> list[dict[str, str]]:
    """Every element of a DRX export as {tag, attrs…}, lower-cased, for token searches.

    The DRX layout is not public; this reads any XML and lets a check look for node kinds by
    token (e.g. 'qualifier', 'magicmask', 'depthmap', 'custom') in tags or attribute values.
    """
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise AgentOutputError(f"{path.name}: not a readable node-graph export ({exc})") from None
    return [{"tag": el.tag.lower(), **{k.lower(): str(v).lower() for k, v in el.attrib.items()}}
            for el in root.iter()]


def node_check(ctx: ScoreContext, rel: str, tokens: tuple[str, ...], what: str) -> tuple[float, dict[str, Any], str]:
    """1 when the harness-exported node graph holds a node matching any token and no grade file
    was written outside the app (audit); the audit part is skipped (and said) without a run."""
    path = ctx.workdir / rel
    if not path.exists():
        return 0.0, {"file": rel}, f"{rel} missing: no node graph to inspect"
    nodes = drx_nodes(path)
    hits = [n for n in nodes if any(t in " ".join(n.values()).replace(" ", "").replace("_", "") for t in tokens)]
    ev: dict[str, Any] = {"file": rel, "nodes": len(nodes), "matching_nodes": len(hits),
                          "audit": "not recorded" if ctx.events is None else "checked"}
    bad = outside_grade_writes(ctx)
    if bad:
        ev["outside_writes"] = bad
        return 0.0, ev, f"grade file written outside the app: {bad[0]} (audit)"
    if not hits:
        return 0.0, ev, f"no {what} node in {rel}"
    return 1.0, ev, ""


# -- self-test cases every grading instance carries (issue 21) --------------------------------

#: another grading task whose oracle is the "someone else's work" baseline: the next video task
GRADING_IDS = [f"R06.04.02.02-T{k:02d}" for k in range(1, 21)]
EXR_TASKS = {"R06.04.02.02-T14"}


def other_task(task_id: str) -> str:
    video = [t for t in GRADING_IDS if t not in EXR_TASKS]
    i = video.index(task_id) if task_id in video else 0
    return video[(i + 1) % len(video)]


def register_cases(inst: Any, task_id: str, output: str) -> None:
    """Exports of the oracle (H.264 CRF 18 and 23; ProRes 422 for .mov renders, which Resolve, Final
    Cut and the harness write) that must score ≥ 95, and gaming baselines that must score ≤ 5: the
    unedited source as it is and exported, black of the right length, its first frame repeated,
    another grading task's oracle."""
    from verifiers.registry import verifier_class

    if not output:
        return
    src = "gt/" + SOURCE
    inst.export_case("h264_crf18", [(output, f"export:h264_crf18:oracle/{output}")], why="oracle as an H.264 delivery")
    inst.export_case("h264_crf23", [(output, f"export:h264_crf23:oracle/{output}")], why="oracle as an H.264 web export")
    if output.endswith(".mov"):
        inst.export_case("prores422", [(output, f"export:prores422:oracle/{output}")], why="oracle as ProRes 422")
    inst.baseline_case("unedited_copy", [(output, f"copy:{src}")], why="the source handed back")
    inst.baseline_case("unedited_h264", [(output, f"export:h264_crf18:{src}")], why="the source exported, no grade")
    inst.baseline_case("black", [(output, f"black:{src}")], why="black frames, right size and length")
    inst.baseline_case("still_frame", [(output, f"still:{src}")], why="the first frame repeated")
    other = other_task(task_id)
    other_out = getattr(verifier_class(other), "output", "")
    if other_out:
        inst.baseline_case("other_task_oracle", [(output, f"other_oracle:{other}:{other_out}")],
                           why=f"{other}'s correct render handed in instead")
