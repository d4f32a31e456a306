"""Video detectors on luma: stats, black, freeze, scene cut, flash, and SSIM against a reference.

All work on (H, W) uint8 luma, usually a thumbnail (`thumbnail`): a cut, a black frame or a
clapper flash is visible at 1/8 scale, and a 1080p frame shrinks 64× in pixel count. Thresholds
are on the 0–255 scale after expanding limited range (16–235) to full range, so a TV-range black
frame reads 0 like a PC-range one.

* black — ffmpeg blackdetect's rule: at least `ratio` of pixels darker than `pixel_max`.
* freeze — mean absolute difference to the previous analysed frame below `noise` (ffmpeg
  freezedetect compares against a noise floor too) for at least `min_s`.
* cut — `verifiers.measure.scenes.LumaCutDetector`, the same object the offline scorers use:
  the mean absolute frame difference jumps above `threshold` and the new content persists.
* flash — mean luma rises by at least `rise` in one frame and falls back within `max_s`
  (clapper / white flash frame; a cut to a bright picture does not fall back); cheap enough to
  run on every decoded frame, so a one-frame flash at 30 fps is never skipped by a lower
  analysis rate.
* SSIM — scikit-image `structural_similarity` of a region against a reference image.
"""

from __future__ import annotations

import cv2
import numpy as np
from skimage.metrics import structural_similarity

from verifiers.measure.detect import Change, Reading


def to_full_range(luma: np.ndarray, full_range: bool) -> np.ndarray:
    """uint8 luma on 0–255: limited range (16–235) expanded, full range passed through."""
    if full_range:
        return luma
    y = (luma.astype(np.float32) - 16.0) * (255.0 / 219.0)
    return np.clip(y, 0, 255).astype(np.uint8)


def thumbnail(luma: np.ndarray, width_px: int = 240) -> np.ndarray:
    """Area-averaged downscale to `width_px` wide (no upscaling)."""
    h, w = luma.shape[:2]
    if w <= width_px:
        return luma
    height = max(1, round(h * width_px / w))
    return cv2.resize(luma, (width_px, height), interpolation=cv2.INTER_AREA)


def quick_mean(luma: np.ndarray, step: int = 8) -> float:
    """Mean of a sparse pixel grid: the flash detector's per-frame cost at 1080p is ~30 k pixels."""
    return float(luma[::step, ::step].mean())


def luma_stats(y: np.ndarray) -> dict[str, float]:
    """Per-frame luma statistics (0–255 scale)."""
    p = np.percentile(y, [1, 50, 99])
    return {"mean": round(float(y.mean()), 2), "std": round(float(y.std()), 2), "min": int(y.min()),
            "max": int(y.max()), "p01": float(p[0]), "median": float(p[1]), "p99": float(p[2])}


def is_black(y: np.ndarray, *, pixel_max: int = 26, ratio: float = 0.98) -> bool:
    """ffmpeg blackdetect: ≥ `ratio` of pixels at or below `pixel_max` (0.10 × 255 by default)."""
    return float((y <= pixel_max).mean()) >= ratio


def ssim_region(frame: np.ndarray, reference: np.ndarray, region: tuple[int, int, int, int] | None = None) -> float:
    """SSIM (−1…1) of `region` = (x, y, w, h) px of `frame` against `reference` (gray or RGB).

    The region is resized to the reference's size, so a reference can be kept as a thumbnail.
    """
    img = frame
    if region is not None:
        x, y, w, h = region
        if w <= 0 or h <= 0 or x < 0 or y < 0 or x + w > frame.shape[1] or y + h > frame.shape[0]:
            raise ValueError(f"region {region} outside the {frame.shape[1]}x{frame.shape[0]} frame")
        img = frame[y:y + h, x:x + w]
    if img.ndim == 3 and reference.ndim == 2:
        img = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
    ref = reference if reference.ndim == img.ndim else cv2.cvtColor(reference, cv2.COLOR_RGB2GRAY)
    if img.shape[:2] != ref.shape[:2]:
        img = cv2.resize(img, (ref.shape[1], ref.shape[0]), interpolation=cv2.INTER_AREA)
    if min(ref.shape[:2]) < 7:
        raise ValueError("SSIM needs a reference of at least 7x7 pixels")
    return float(structural_similarity(img, ref, channel_axis=2 if img.ndim == 3 else None, data_range=255))


#: black_start | black_end | freeze_start | freeze_end | cut | flash, as `verifiers.measure.detect` changes;
#: every detector here speaks that module's protocol (push -> changes, flush, metrics)
VideoChange = Change


class FlashDetector:
    """Clapper/white flash: mean luma up by ≥ `rise` in one frame, and back down (by half the rise)
    within `max_s`. Without the way back it is a cut to a brighter picture or a fade-in, not a
    flash. Reported when it falls back, dated by the first bright frame."""

    def __init__(self, *, rise: float = 60.0, max_s: float = 0.25, holdoff_s: float = 0.3) -> None:
        self.rise = rise
        self.max_s = max_s
        self.holdoff_s = holdoff_s
        self._prev: float | None = None
        self._cand: tuple[float, float, float] | None = None  # (t, luma before, peak luma)
        self._last_t = -1e9
        self._pushed = self._flashes = 0

    def push(self, frame: Reading) -> list[Change]:
        """`frame.value`: the frame's mean luma (0-255, full range)."""
        self._pushed += 1
        found = self._step(frame.value, frame.t_s)
        self._flashes += found is not None
        return [] if found is None else [found]

    def flush(self) -> list[Change]:
        return []  # a bright frame at the very end never came back down: not a flash

    def metrics(self) -> dict[str, float]:
        return {"frames": self._pushed, "flashes": self._flashes}

    def _step(self, mean_luma: float, t_s: float) -> Change | None:
        prev, self._prev = self._prev, mean_luma
        if self._cand is not None:
            t0, before, peak = self._cand
            if mean_luma <= before + (peak - before) / 2:
                self._cand = None
                self._last_t = t0
                return Change("flash", t0, {"luma_before": round(before, 1), "luma": round(peak, 1),
                                                 "duration_s": round(t_s - t0, 4)})
            if t_s - t0 > self.max_s:
                self._cand = None  # stayed bright: a cut or fade, not a flash
            else:
                self._cand = (t0, before, max(peak, mean_luma))
                return None
        if prev is not None and mean_luma - prev >= self.rise and t_s - self._last_t >= self.holdoff_s:
            self._cand = (t_s, prev, mean_luma)
        return None


class StateRun:
    """A boolean condition that must hold `min_s` before it is reported; reports start and end."""

    def __init__(self, name: str, min_s: float) -> None:
        self.name = name
        self.min_s = min_s
        self.active = False
        self._since: float | None = None
        self._pushed = self._runs = 0

    def push(self, frame: Reading) -> list[Change]:
        """`frame.value`: whether the condition holds on this frame (truthy)."""
        self._pushed += 1
        found = self._step(bool(frame.value), frame.t_s)
        self._runs += found is not None and found.kind.endswith("_start")
        return [] if found is None else [found]

    def flush(self) -> list[Change]:
        return []  # a run still active at the end has started (reported) and has no end

    def metrics(self) -> dict[str, float]:
        return {"frames": self._pushed, "runs": self._runs}

    def _step(self, cond: bool, t_s: float) -> Change | None:
        if cond:
            if self._since is None:
                self._since = t_s
            if not self.active and t_s - self._since >= self.min_s - 1e-9:
                self.active = True
                return Change(f"{self.name}_start", self._since, {})
            return None
        since, self._since = self._since, None
        if self.active:
            self.active = False
            return Change(f"{self.name}_end", t_s, {"duration_s": round(t_s - (since or t_s), 4)})
        return None
