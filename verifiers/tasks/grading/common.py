"""Shared plumbing of the colour-grading verifiers: the shot pair, GT masks, node graphs, scoring.

GT layout (every grading task): `gt/source.mov` is the ungraded shot as the app holds it, decoded
frame for frame against the agent's render; `gt/masks.npz` maps region names to per-frame
(frames, height, width) bool masks; `gt/shot.json` carries task facts (fps, centres, notes).
The render must have the source's frame size and frame count; anything else is the agent's fault.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.ndimage import binary_dilation

from verifiers.base import AgentOutputError, GTError, ScoreContext
from verifiers.measure.colour import chroma, delta_e2000, hue_deg, rgb_to_lab
from verifiers.measure.errors import MediaError
from verifiers.measure.frames import iter_frames

SOURCE = "source.mov"
MASKS = "masks.npz"
DE_STRIDE = 3  # ΔE2000 on every 3rd mask pixel: said in each check's evidence
#: untouched-region checks skip this many px at each region's border: 4:2:0/4:2:2 chroma is shared
#: by 2 px, so a delivery codec smears every border with its neighbour's colour
CHROMA_GUARD_PX = 2
#: per-pixel gain maps are smoothed this much before statistics, to ignore codec noise
GAIN_SMOOTH_PX = 1.5


def _read_stack(path: Path) -> np.ndarray:
    return np.stack([f.rgb for f in iter_frames(path)])


@dataclass
class Shot:
    """Source and render frames (uint8 sRGB), GT masks, and lazily computed Lab stacks."""

    src: np.ndarray
    out: np.ndarray
    masks: dict[str, np.ndarray]
    meta: dict[str, Any] = field(default_factory=dict)
    _lab: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.src)

    def lab(self, which: str) -> np.ndarray:
        if which not in self._lab:
            self._lab[which] = rgb_to_lab(self.src if which == "src" else self.out)
        return self._lab[which]

    def mask(self, name: str) -> np.ndarray:
        if name not in self.masks:
            raise GTError(f"ground truth mask missing: {name}")
        return self.masks[name]


def load_shot(ctx: ScoreContext, rel: str, meta_name: str = "shot.json") -> Shot:
    """Decode the GT source and the agent's render; refuse a render that does not match the shot."""
    try:
        src = _read_stack(ctx.gt_path(SOURCE))
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
    return Shot(src, out, masks, meta)


def frame_share_score(ok: np.ndarray, min_pct: float = 100.0) -> tuple[float, float]:
    """(score, percent of frames passing): full marks at min_pct, otherwise the passing share."""
    pct = 100.0 * float(np.mean(ok)) if len(ok) else 0.0
    return (1.0 if pct >= min_pct - 1e-9 else pct / 100.0), pct


def per_frame_de(shot: Shot, mask: np.ndarray, stride: int = DE_STRIDE) -> np.ndarray:
    """Mean ΔE2000 source → render over each frame's mask (every `stride`-th pixel)."""
    out = np.zeros(shot.n)
    ls, lo = shot.lab("src"), shot.lab("out")
    for i in range(shot.n):
        idx = np.flatnonzero(mask[i])[::stride]
        if len(idx):
            out[i] = float(delta_e2000(ls[i].reshape(-1, 3)[idx], lo[i].reshape(-1, 3)[idx]).mean())
    return out


def untouched_check(shot: Shot, names: list[str], max_de: float) -> tuple[float, dict[str, Any], str]:
    """'Regions X, Y vs source': each region's per-frame mean ΔE2000 ≤ max_de, on every frame.

    Regions are judged one by one (worst region per frame) so a small region that changed is not
    averaged away by a large one that did not.
    """
    per_region = {nm: per_frame_de(shot, _guarded(shot.mask(nm))) for nm in names}
    de = np.max(np.stack(list(per_region.values())), axis=0)
    score, pct = frame_share_score(de <= max_de)
    ev = {"regions": names, "worst_frame_mean_delta_e2000": float(de.max()), "frames_ok_pct": pct,
          "worst_by_region": {k: float(v.max()) for k, v in per_region.items()},
          "max_delta_e2000": max_de, "pixel_stride": DE_STRIDE, "border_guard_px": CHROMA_GUARD_PX}
    worst = max(per_region, key=lambda k: per_region[k].max())
    return score, ev, "" if score == 1.0 else f"{worst} changed: worst frame mean ΔE2000 {de.max():.2f} > {max_de}"


def _guarded(mask: np.ndarray) -> np.ndarray:
    """The mask less its CHROMA_GUARD_PX border, frame by frame (the full mask where that empties it)."""
    inner = interior(mask, CHROMA_GUARD_PX)
    keep = inner.reshape(len(mask), -1).any(axis=1)
    return np.where(keep[:, None, None], inner, mask)


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


def gain_map_stops(shot: Shot, floor: float = 0.01, smooth_px: float = GAIN_SMOOTH_PX) -> np.ndarray:
    """Per-pixel exposure change log2(Y_out / Y_src) (0 where either is near black), each frame
    smoothed by `smooth_px` so codec noise does not read as gain; windows and leaks are far wider."""
    from scipy.ndimage import gaussian_filter

    y0, y1 = linear_y(shot.src), linear_y(shot.out)
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
