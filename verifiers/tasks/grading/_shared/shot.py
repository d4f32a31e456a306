"""The shot pair a grading check reads: GT source and masks, the agent's render, the export floor.

GT layout (every video grading task): `gt/source.mov` is the ungraded shot as the app holds it,
decoded frame for frame against the agent's render; `gt/masks.npz` maps region names to per-frame
(frames, height, width) bool masks; `gt/shot.json` carries task facts (fps, horizon rows, shot
ranges), read by the tasks that need them as a typed `ShotFacts` subclass (`ctx.gt_typed`).
The render must have the source's frame size and frame count; anything else is the agent's fault.

Policy rule 4 (docs/grading.md, issue 21), the export floor: "unchanged" statistics are compared with
the same statistic of the source passed through the render's own kind of export (`Shot.floor`).
Chroma-aware guards: region borders skip as many pixels as the render's chroma is shared (4:2:0 →
2 px each way, 4:2:2 → 2 px across, lossy codecs + 1 px); a region too thin to keep any pixel after
that is judged on luma (L*) only, with the source's a*, b* (`guarded`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from verifiers.base import AgentOutputError, GTError, ScoreContext
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.colour import rgb_to_lab
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
    _lab: dict[str, np.ndarray] = field(default_factory=dict)
    source_path: Path | None = None
    profile: RenderProfile | None = None
    _floor: np.ndarray | None = None
    _floor_done: bool = False
    _floor_path: Path | None = None
    identity: dict[str, Any] = field(default_factory=dict)  # rule 2's evidence, set by the shot provider

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


class ShotFacts(GTFile, file="shot.json"):
    """gt/shot.json: the shot's frame rate; a task that reads more facts declares them in a subclass."""

    fps: float = gt_field(doc="frame rate of gt/source.mov")


def load_shot(ctx: ScoreContext, rel: str) -> Shot:
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
    try:
        profile = render_profile(path)
    except MediaError:
        profile = None
    return Shot(src, out, masks, source_path=ctx.gt_path(SOURCE), profile=profile)


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
