"""Measurements shared by T06 (brand ad) and T18 (explainer): text found by fuzzy OCR, the fill colour
of a caption, a logo found at any scale, per-stem loudness of a mix, and the instance time scale.

Stem loudness: the mix (each channel) is projected per 100-ms window onto the known references
(voice-over, music) after aligning each by cross-correlation (verifiers.tasks.streaming.routing, the
same machinery as the streaming ducking task). A stem's loudness over chosen windows is BS.1770
ungated loudness of its fitted part: Σ over channels of gain² × K-weighted reference energy. AAC
coding noise is uncorrelated with the references, so it leaves the gains unbiased, where a residual
("mix minus voice") would count it as music.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from verifiers.base import GTError, ScoreContext
from verifiers.measure.colour import delta_e2000, rgb_to_lab
from verifiers.measure.ocr import TextBox, read_text_cached
from verifiers.measure.projection import best_lag, project, shifted
from verifiers.synthkit.shortform_ad_explainer import hex_rgb
from verifiers.tasks.shortform._shared.export import render_facts
from verifiers.tasks.shortform._shared.luma import shrink_by_chroma_bleed

WINDOW_S = 0.1


def time_scale(ctx: ScoreContext) -> float:
    """gt/render.json "time_scale": a time-scaled miniature instance multiplies the catalog's
    durations by it (a real task's GT has none: 1). Loudness and colour thresholds never scale."""
    return render_facts(ctx).time_scale


def fuzzy_cer(hay: str, needle: str) -> float:
    """Edit distance of `needle` to its best-matching substring of `hay`, over len(needle).

    OCR reads a caption inside whatever else the frame shows; a semi-global alignment (free start and
    end in hay) scores the caption without penalising its neighbours.
    """
    if not needle:
        return 0.0
    prev = [0] * (len(hay) + 1)
    for i, cn in enumerate(needle, 1):
        cur = [i]
        for j, ch in enumerate(hay, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (cn != ch)))
        prev = cur
    return min(prev) / len(needle)


def box_matches(box_text_norm: str, element_norm: str, max_cer: float) -> bool:
    """An OCR box belongs to an element when its text is (fuzzily) part of the element's text."""
    if len(box_text_norm) < 2:
        return False
    return fuzzy_cer(element_norm, box_text_norm) <= max_cer


def read_text_tiled(frames: list[np.ndarray], per_row: int = 4, gutter_px: int = 48) -> list[list[TextBox]]:
    """OCR boxes of each frame (frame coordinates), reading up to `per_row` same-size frames in one call.

    The OCR engine upscales any image whose short side is under 480 px; a row of miniature frames is
    read at native size instead, ~1.7x cheaper per frame. Black gutters keep text of neighbouring
    frames apart; a box belongs to the frame holding its centre. Real 1080x1920 frames gain nothing
    (nor lose: the detector runs at native size either way).
    """
    out: list[list[TextBox]] = []
    for k in range(0, len(frames), per_row):
        group = frames[k:k + per_row]
        h, w = group[0].shape[:2]
        if any(f.shape != group[0].shape for f in group):
            out += [read_text_cached(f) for f in group]
            continue
        row = np.zeros((h, len(group) * (w + gutter_px) - gutter_px, 3), np.uint8)
        for i, f in enumerate(group):
            row[:, i * (w + gutter_px): i * (w + gutter_px) + w] = f
        boxes = read_text_cached(row)
        for i in range(len(group)):
            x0 = i * (w + gutter_px)
            out.append([TextBox(b.text, max(0.0, b.x0 - x0), b.y0, min(float(w), b.x1 - x0), b.y1, b.confidence)
                        for b in boxes if x0 <= b.center[0] < x0 + w])
    return out


def hex_lab(hex_colour: str) -> np.ndarray:
    try:
        rgb = np.array(hex_rgb(hex_colour), dtype=np.uint8)
    except (ValueError, IndexError):
        raise GTError(f"not a hex colour: {hex_colour!r}") from None
    return rgb_to_lab(rgb[None, None, :])[0, 0]


def text_fill_lab(rgb: np.ndarray, box: TextBox, min_contrast: float = 15.0) -> np.ndarray | None:
    """CIELAB of a caption's fill inside an OCR box.

    Background = the box's median Lab (glyph strokes cover less of a text box than the space around
    them, so the median lands on the pill or plate behind the text); text pixels differ from it by
    more than `min_contrast` (Lab distance). Stroke pixels within CHROMA_BLEED_PX of a stroke edge
    are dropped: in a 4:2:0 export their chroma is interpolated from the background (a 3-4 px
    miniature stroke read that way sat ΔE2000 ≈ 3.2 off its true colour; its cores 1.5). The fill is
    the median of the half of the cores farthest from the background (anti-aliased and
    chroma-subsampled pixels lie between the two); strokes too thin to have cores fall back to all
    text pixels. A ring outside the box is no background estimate: OCR boxes often end on the
    plate's edge.
    """
    h, w = rgb.shape[:2]
    x0, y0 = max(0, int(box.x0)), max(0, int(box.y0))
    x1, y1 = min(w, math.ceil(box.x1)), min(h, math.ceil(box.y1))
    if x1 - x0 < 3 or y1 - y0 < 3:
        return None
    lab = rgb_to_lab(rgb[y0:y1, x0:x1])
    bg = np.median(lab.reshape(-1, 3), axis=0)
    is_text = np.linalg.norm(lab - bg, axis=2) > min_contrast
    cores = lab[shrink_by_chroma_bleed(is_text)]
    text = cores if len(cores) >= 4 else lab[is_text]
    if len(text) < 4:
        return None
    far = text[np.argsort(np.linalg.norm(text - bg, axis=1))[len(text) // 2:]]
    return np.median(far, axis=0)


def nearest_delta_e(lab: np.ndarray, palette_lab: list[np.ndarray]) -> float:
    return float(min(delta_e2000(lab, p) for p in palette_lab))


@dataclass(frozen=True)
class LogoMatch:
    score: float  # grey TM_CCOEFF_NORMED at the best place and width
    width_frac: float  # logo width / frame width there
    box_px: tuple[int, int, int, int]  # x, y, w, h
    delta_e2000: float  # median colour difference of the logo's pixels there (inf: none compared)


def _logo_mask(mask: np.ndarray | None, shape: tuple[int, int], size: tuple[int, int]) -> np.ndarray:
    """Pixels wholly inside the opaque logo at this size (edge pixels blend with what is behind)."""
    import cv2

    if mask is None:
        return np.ones(size[::-1], np.float32)
    m0 = (np.asarray(mask) >= 250).astype(np.float32)
    return (cv2.resize(m0, size, interpolation=cv2.INTER_AREA) >= 0.99).astype(np.float32)


def find_logo(rgb: np.ndarray, logo_rgb: np.ndarray, widths_frac: tuple[float, float] = (0.15, 0.9),
              steps: int = 24, mask: np.ndarray | None = None) -> LogoMatch:
    """Where the logo best matches the frame at any width in the range (share of the frame width).

    Grey TM_CCOEFF_NORMED over geometric width steps, refined around the best; with `mask` (a
    transparent PNG's alpha) only the logo's own opaque pixels count, whatever it is placed on. The
    colours there are then compared (median ΔE2000): a grey pattern that happens to correlate with
    footage is not the brand's logo.

    Remembered by content (verifiers.measure.memo: the frame's, the logo's and the mask's pixels and
    the search range): a self-test scores the oracle, the mutants and the exports of one instance,
    which show many of the same decoded frames, and the 33-width search is ~40 % of T06's scoring.
    """
    from verifiers.measure.memo import memo

    return memo("find_logo", (rgb, logo_rgb, tuple(float(w) for w in widths_frac), int(steps), mask),
                lambda: _find_logo(rgb, logo_rgb, widths_frac, steps, mask))


def _find_logo(rgb: np.ndarray, logo_rgb: np.ndarray, widths_frac: tuple[float, float], steps: int,
               mask: np.ndarray | None) -> LogoMatch:
    """find_logo, computed."""
    import cv2

    img = cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2GRAY).astype(np.float32)
    tpl0 = cv2.cvtColor(np.ascontiguousarray(logo_rgb), cv2.COLOR_RGB2GRAY).astype(np.float32)
    fw, fh = img.shape[1], img.shape[0]

    def at(frac: float) -> tuple[float, float, tuple[int, int, int, int]]:
        tw = round(frac * fw)
        th = round(tw * tpl0.shape[0] / tpl0.shape[1])
        none = (-1.0, frac, (0, 0, 0, 0))
        if tw < 8 or th < 8 or tw > fw or th > fh:
            return none
        tpl = cv2.resize(tpl0, (tw, th), interpolation=cv2.INTER_AREA)
        m = _logo_mask(mask, tpl0.shape, (tw, th))
        if m.sum() < 16 or float(tpl[m > 0].std()) < 1e-3:
            return none
        if mask is None:
            res = cv2.matchTemplate(img, tpl, cv2.TM_CCOEFF_NORMED)
        else:  # flat image patches divide by zero under a mask: those places hold no logo
            res = np.nan_to_num(cv2.matchTemplate(img, tpl, cv2.TM_CCOEFF_NORMED, mask=m), nan=-1.0,
                                posinf=-1.0, neginf=-1.0)
        res = np.clip(res, -1.0, 1.0)
        y, x = np.unravel_index(int(np.argmax(res)), res.shape)
        return float(res[y, x]), frac, (int(x), int(y), tw, th)

    # coarse geometric steps, then a finer search around the best (a masked logo is scale-sensitive)
    grid = np.geomspace(widths_frac[0], widths_frac[1], steps)
    coarse = [at(float(f)) for f in grid]
    k = int(np.argmax([c[0] for c in coarse]))
    fine = np.geomspace(grid[max(0, k - 1)], grid[min(len(grid) - 1, k + 1)], 9)
    # the fine steps' ends are coarse steps (geomspace returns its ends exactly): searched once
    searched = dict(zip((float(f) for f in grid), coarse, strict=True))
    score, frac, (x, y, tw, th) = max([coarse[k]] + [searched.get(float(f)) or at(float(f)) for f in fine],
                                      key=lambda c: c[0])
    de = np.inf
    if score > -1.0:
        m = _logo_mask(mask, tpl0.shape, (tw, th)) > 0
        tpl_rgb = cv2.resize(np.ascontiguousarray(logo_rgb), (tw, th), interpolation=cv2.INTER_AREA)
        if m.any():
            d = delta_e2000(rgb_to_lab(rgb[y:y + th, x:x + tw][m]), rgb_to_lab(tpl_rgb[m]))
            de = float(np.median(d))
    return LogoMatch(score, float(frac), (x, y, tw, th), de)


@dataclass
class StemLevels:
    """Per-window K-weighted energy of each reference's fitted part in a mix (summed over channels)."""

    rate_hz: int
    window_s: float
    lags_s: list[float]  # where each reference starts in the mix (positive: later)
    energy: np.ndarray  # (windows, refs)
    t_s: np.ndarray  # window centres

    def lufs(self, ref: int, mask: np.ndarray) -> float:
        """Ungated BS.1770 loudness of reference `ref`'s part over the masked windows (-inf: none)."""
        n = int(mask.sum())
        if n == 0:
            return -math.inf
        e = float(self.energy[mask, ref].sum()) / (n * round(self.window_s * self.rate_hz))
        return -0.691 + 10 * math.log10(e) if e > 0 else -math.inf


def stem_levels(mix: np.ndarray, refs: list[np.ndarray], rate_hz: int, *, max_lag_s: float = 5.0,
                window_s: float = WINDOW_S) -> StemLevels:
    """Align each reference to the mix (cross-correlation on the downmix), then project every channel."""
    from scipy.signal import sosfilt

    from verifiers.measure.loudness import k_weighting_sos

    x = mix[:, None] if mix.ndim == 1 else mix
    n = x.shape[0]
    mono = x.mean(axis=1)
    lags = [best_lag(mono, [r], rate_hz, max_lag_s=max_lag_s) for r in refs]
    aligned = [shifted(np.asarray(r, dtype=np.float64), lag, n) for r, lag in zip(refs, lags, strict=True)]
    sos = k_weighting_sos(rate_hz)
    w = max(1, round(window_s * rate_hz))
    k = n // w
    ref_e = np.stack([(sosfilt(sos, a)[: k * w] ** 2).reshape(k, w).sum(axis=1) for a in aligned], axis=1)
    energy = np.zeros((k, len(refs)))
    for c in range(x.shape[1]):
        pj = project(x[:, c], aligned, rate_hz, window_s=(w + 0.5) / rate_hz, lag=0)
        energy += pj.coeffs[:k] ** 2 * ref_e
    t = (np.arange(k) + 0.5) * w / rate_hz
    return StemLevels(rate_hz, w / rate_hz, [lag / rate_hz for lag in lags], energy, t)


def window_mask(t_s: np.ndarray, spans_s: list[tuple[float, float]], margin_s: float = 0.0) -> np.ndarray:
    """Windows whose centre lies inside any span shrunk by margin_s at both ends."""
    m = np.zeros(len(t_s), bool)
    for a, b in spans_s:
        m |= (t_s >= a + margin_s) & (t_s <= b - margin_s)
    return m
