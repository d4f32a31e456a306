"""Burned-in caption measurement shared by T03 (Chinese captions) and T13 (caption versions).

Both tasks burn captions onto footage the work dir holds uncaptioned, so a caption is what differs
from the source at the same moment: per export frame, pixels differing from the time-matched source
frame by > DIFF_LEVEL in some channel (specks < 3 px dropped). That yields

- the caption track: which frames carry a caption, split into spans where the caption's mask
  changes (so back-to-back captions are separate spans) — on/off times to the frame, no OCR needed;
- the caption's look on one frame per span: the changed pixels split in two tones (Otsu on luma):
  fill = the core of the light tone, stroke = the dark tone where it is also darker than the source; fill colour (median of the fill's core), stroke share, and text
  lines (row runs of fill ink) with their ink extents;
- "tofu" boxes: fill components shaped as hollow rectangles about a line high (.notdef glyphs of a
  font without the script's glyphs). Real glyphs can be hollow boxes too (口, ロ), so the count is
  compared with a reference rendering of the expected text in a CJK font (Droid Sans Fallback).

OCR (verifiers.measure.ocr) reads one frame per span. Its recogniser (PP-OCRv4, Chinese + Latin) has
6623 characters: Han characters, Latin with some accents (no ñ), and only 5 kana (マシサジの), so
Japanese is judged on the characters the model can read (`readable`) plus the tofu detector.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from verifiers.measure.errors import MediaError
from verifiers.measure.frames import Frame, iter_frames, iter_frames_at
from verifiers.measure.ocr import OCRUnavailable, TextBox, read_text_cached
from verifiers.measure.streams import probe

DIFF_LEVEL = 48  # grey levels in any channel: caption pixels vs re-encoding noise (seen ≤ 30 at CRF 16-23)
LUMA_STEP = 24  # stroke pixels are darker than the source by at least this much
MAX_MASK_SHARE = 0.25  # more of the frame changed than this: the export does not show the source here
MIN_SPAN_FRAMES = 3
SPLIT_IOU = 0.7  # masks of consecutive frames overlapping less than this: a new caption (seen: same
# caption >= 0.91, back-to-back different captions 0.40-0.49 at 9-px glyphs)


def text_key(text: str, *, strip_accents: bool = False) -> str:
    """Characters compared by CER: NFKC (full-width → ASCII), lower case, letters and digits only
    (OCR of captions loses spaces and punctuation); optionally without diacritics (ñ → n)."""
    t = unicodedata.normalize("NFKC", text).lower()
    if strip_accents:
        t = "".join(ch for ch in unicodedata.normalize("NFKD", t) if not unicodedata.combining(ch))
    return "".join(ch for ch in t if ch.isalnum())


@functools.cache
def ocr_charset() -> frozenset[str]:
    """The characters the OCR recogniser can output (its dictionary, stored in the model file)."""
    try:
        import onnxruntime as ort
        import rapidocr_onnxruntime
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise OCRUnavailable(f"OCR not available: {exc}") from None
    model = Path(rapidocr_onnxruntime.__file__).parent / "models/ch_PP-OCRv4_rec_infer.onnx"
    sess = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    chars = sess.get_modelmeta().custom_metadata_map.get("character", "")
    return frozenset(c.lower() for c in chars.splitlines() if c)


def is_kana(ch: str) -> bool:
    return "\u3040" <= ch <= "\u30ff" or "\uff66" <= ch <= "\uff9d"


def readable(text: str) -> str:
    """`text_key(text)` without kana and without characters the recogniser cannot output: what OCR
    can judge of Japanese. Kana go even where the model has them (マシサジの): it drops or confuses
    them next to unknown kana (measured: の missed in 3 of 12 reads of 18-px captions)."""
    cs = ocr_charset()
    return "".join(ch for ch in text_key(text) if ch in cs and not is_kana(ch))


def lcs_len(a: str, b: str) -> int:
    """Length of the longest common subsequence (characters of `a` found in order in `b`)."""
    prev = [0] * (len(b) + 1)
    for ca in a:
        cur = [0]
        for j, cb in enumerate(b, 1):
            cur.append(prev[j - 1] + 1 if ca == cb else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


# ---------------------------------------------------------------- masks and the caption track


def _luma(rgb: np.ndarray) -> np.ndarray:
    return rgb.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)


def caption_mask(export_rgb: np.ndarray, source_rgb: np.ndarray) -> np.ndarray:
    """Pixels of the export that differ from the source frame by > DIFF_LEVEL (specks dropped)."""
    if source_rgb.shape != export_rgb.shape:
        source_rgb = cv2.resize(source_rgb, (export_rgb.shape[1], export_rgb.shape[0]), interpolation=cv2.INTER_AREA)
    d = changed_channels(export_rgb, source_rgb) > DIFF_LEVEL
    _, lab, stats, _ = cv2.connectedComponentsWithStats(d.view(np.uint8), connectivity=8)
    keep = stats[1:, cv2.CC_STAT_AREA] >= 3
    if keep.all():  # no speck: every changed pixel is kept (label > 0 exactly where d is set)
        return d
    return np.concatenate([[False], keep])[lab]


def changed_channels(a_rgb: np.ndarray, b_rgb: np.ndarray) -> np.ndarray:
    """Per pixel, the largest |a - b| over the channels (uint8). The same numbers as widening both
    to int16, subtracting and taking the channel max, at a fraction of the cost: this runs on every
    frame of every export a caption scorer reads (the per-frame work of `track_captions`)."""
    if a_rgb.dtype != np.uint8 or b_rgb.dtype != np.uint8 or a_rgb.ndim != 3:
        return np.abs(a_rgb.astype(np.int16) - b_rgb.astype(np.int16)).max(axis=2)
    diff = cv2.absdiff(np.ascontiguousarray(a_rgb), np.ascontiguousarray(b_rgb))
    return np.maximum.reduce([diff[..., c] for c in range(diff.shape[2])])


ALIGNED_S = 0.01  # an export frame within this of a source frame's time shows that frame


def nearer_in_content(export_rgb: np.ndarray, cur: np.ndarray, nxt: np.ndarray | None) -> np.ndarray:
    """Of the source frame presented at an export frame's time (`cur`) and the next one, the one the
    export frame shows: an export at another frame rate (29.97 from a 24 fps timeline) carries the
    source frame nearest its time, which may be the next one (ffmpeg's fps filter rounds to nearest,
    an app may too). The caption differs alike from both; the footage's motion tells them apart."""
    if nxt is None or nxt.shape != export_rgb.shape or cur.shape != export_rgb.shape:
        return cur
    e = export_rgb.astype(np.int16)
    d_cur = np.abs(e - cur).mean()
    return nxt if np.abs(e - nxt).mean() < d_cur else cur


def paired_frames(export: Path, source: Path, width_px: int | None = None,
                  height_px: int | None = None) -> Iterator[tuple[float, np.ndarray, np.ndarray]]:
    """(t, export frame, source frame it shows) for every export frame, both decoded in step
    (memory: two frames). Paired by time in seconds, so an export at another frame rate still pairs
    up: a frame between two source frames' times shows one of them (`nearer_in_content`)."""
    src = iter_frames(source, width=width_px, height=height_px)
    cur = next(src)
    nxt = next(src, None)
    for fr in iter_frames(export, width=width_px, height=height_px):
        while nxt is not None and nxt.t_s <= fr.t_s + ALIGNED_S:
            cur, nxt = nxt, next(src, None)
        aligned = fr.t_s - cur.t_s <= ALIGNED_S
        yield fr.t_s, fr.rgb, cur.rgb if aligned else nearer_in_content(fr.rgb, cur.rgb, nxt.rgb if nxt else None)


def frames_at(path: Path, times_s: Iterable[float]) -> Iterator[tuple[float, np.ndarray]]:
    """(t, full-size frame presented at t: the first at or after it) for each time, ascending, in
    ONE decoding pass (exports without frequent keyframes make every seek decode from the start),
    converting only the wanted frames to RGB; MediaError when the file ends first."""
    for t, fr in iter_frames_at(path, times_s):
        yield t, fr.rgb


def _frame_s(path: Path) -> float:
    """The clip's frame duration (1 / its average frame rate; 1/24 when it declares none)."""
    fps = probe(path).first("video").avg_fps
    return 1 / fps if fps else 1 / 24


def paired_frames_at(export: Path, source: Path, times_s: Iterable[float]
                     ) -> Iterator[tuple[float, np.ndarray, np.ndarray]]:
    """(t, export frame, source frame it shows) at each time, ascending; both files decoded once.
    The export frame is the one presented at or after t (time t_e); the source frame is the one
    presented at t_e, or the next one when t_e falls between two source frames and the export
    shows that one (`nearer_in_content`: an export at another frame rate)."""
    times = sorted(set(times_s))
    got = list(iter_frames_at(export, times))
    src_dt = _frame_s(source)
    want: list[float] = []
    for _t, fr in got:  # the source frame presented at t_e, and the next one
        want += [fr.t_s + ALIGNED_S - src_dt + 1e-6, fr.t_s + ALIGNED_S + 1e-6]
    src: dict[float, Frame] = {}
    try:
        for t, fr in iter_frames_at(source, want):
            src[t] = fr
    except MediaError:  # the source ends before a wanted frame: a missing "next" is no candidate
        if any(want[k] not in src for k in range(0, len(want), 2)):
            raise
    for (t, fr), k in zip(got, range(0, len(want), 2), strict=True):
        cur = src[want[k]]
        aligned = fr.t_s - cur.t_s <= ALIGNED_S
        nxt = src.get(want[k + 1])
        yield t, fr.rgb, cur.rgb if aligned else nearer_in_content(fr.rgb, cur.rgb, nxt.rgb if nxt else None)


@dataclass(frozen=True)
class Span:
    start_s: float
    end_s: float  # presentation time of the first frame after the caption
    frames: int
    mid_s: float  # a frame time inside the span, for reading it


@dataclass
class CaptionTrack:
    spans: list[Span]
    frame_s: float
    frames: int
    not_source_frames: int = 0  # frames that differ from the source almost everywhere
    times_s: list[float] = field(default_factory=list)
    on: list[bool] = field(default_factory=list)

    def on_seconds(self) -> float:
        return sum(s.end_s - s.start_s for s in self.spans)


def track_captions(export: Path, source: Path, width_px: int | None = None,
                   height_px: int | None = None) -> CaptionTrack:
    """Caption spans of `export` (see module docstring); MediaError when either file is unreadable."""
    times, masks_on, spans = [], [], []
    prev = None
    start = None
    bad = 0
    run_times: list[float] = []
    for t, e, s in paired_frames(export, source, width_px, height_px):
        m = caption_mask(e, s)
        changed_px = np.count_nonzero(m)
        share = changed_px / m.size  # = m.mean(): an exact count over the size
        min_px = max(20, int(2e-4 * m.size))
        on = min_px <= changed_px and share <= MAX_MASK_SHARE
        bad += share > MAX_MASK_SHARE
        times.append(t)
        masks_on.append(on)
        d = m if on else None
        split = False
        if on and prev is not None:
            inter = np.count_nonzero(np.logical_and(d, prev))
            union = np.count_nonzero(np.logical_or(d, prev))
            split = union > 0 and inter / union < SPLIT_IOU
        if (not on or split) and start is not None:
            spans.append((start, t, list(run_times)))
            start = None
        if on and start is None:
            start, run_times = t, []
        if on:
            run_times.append(t)
        prev = d
    frame_s = float(np.median(np.diff(times))) if len(times) > 1 else 1 / 24
    if start is not None:
        spans.append((start, times[-1] + frame_s, list(run_times)))
    out = [Span(a, b, len(rt), rt[len(rt) // 2]) for a, b, rt in spans if len(rt) >= MIN_SPAN_FRAMES]
    return CaptionTrack(out, frame_s, len(times), bad, times, masks_on)


# ---------------------------------------------------------------- one caption's look


@dataclass(frozen=True)
class Line:
    y0: int
    y1: int  # exclusive
    x0: int
    x1: int

    @property
    def height_px(self) -> int:
        return self.y1 - self.y0


@dataclass
class Look:
    bbox: tuple[int, int, int, int]  # x0, y0, x1, y1 (exclusive) of the caption's text (`caption_bbox`)
    fill_rgb: tuple[int, int, int]
    fill_px: int
    stroke_px: int
    stroke_luma: float  # median luma of the stroke pixels (0-255)
    lines: list[Line]
    fill: np.ndarray  # bool mask of fill pixels
    mask: np.ndarray  # bool mask of every changed pixel (fill, stroke, blends)

    @property
    def stroke_ratio(self) -> float:
        return self.stroke_px / self.fill_px if self.fill_px else 0.0


def text_lines(fill: np.ndarray, max_gap_px: int = 1, min_height_px: int = 3) -> list[Line]:
    """Row runs of fill ink (gaps ≤ max_gap_px bridged), each with its ink's horizontal extent."""
    rows = np.flatnonzero(fill.any(axis=1))
    if rows.size == 0:
        return []
    groups, a, b = [], rows[0], rows[0]
    for r in rows[1:]:
        if r - b - 1 <= max_gap_px:
            b = r
        else:
            groups.append((a, b))
            a = b = r
    groups.append((a, b))
    out = []
    for a, b in groups:
        if b + 1 - a < min_height_px:
            continue
        cols = np.flatnonzero(fill[a:b + 1].any(axis=0))
        out.append(Line(int(a), int(b + 1), int(cols[0]), int(cols[-1] + 1)))
    return out


JOIN_PX = 5  # changed pixels this close belong to one word (glyph parts, a glyph's stroke, letters)
MIN_PART_SHARE = 0.02  # a word holds at least this share of a caption's changed pixels; a codec speck less


def caption_bbox(mask: np.ndarray) -> tuple[int, int, int, int]:
    """x0, y0, x1, y1 (exclusive) of the caption's text: the changed pixels grouped into words
    (dilated by JOIN_PX), groups holding < MIN_PART_SHARE of them dropped. A speck that survives
    `caption_mask` (≥ 3 px) far from the text must not stretch the box: at T13's seed 5 one at y = 47
    of a CRF 23 export put a caption at the frame's bottom outside the safe area."""
    joined = cv2.dilate(mask.astype(np.uint8), np.ones((JOIN_PX, JOIN_PX), np.uint8))
    n, lab = cv2.connectedComponents(joined, connectivity=8)
    counts = np.bincount(lab[mask], minlength=n)
    keep = counts >= MIN_PART_SHARE * counts.sum()
    keep[0] = False
    ys, xs = np.nonzero(mask & keep[lab])
    if ys.size == 0:  # over 50 scattered groups, none a word: the changed pixels as they are
        ys, xs = np.nonzero(mask)
    return int(xs.min()), int(ys.min()), int(xs.max() + 1), int(ys.max() + 1)


def measure_look(export_rgb: np.ndarray, source_rgb: np.ndarray) -> Look | None:
    """Fill, stroke and lines of the caption on one frame; None when nothing is burned in."""
    if source_rgb.shape != export_rgb.shape:
        source_rgb = cv2.resize(source_rgb, (export_rgb.shape[1], export_rgb.shape[0]), interpolation=cv2.INTER_AREA)
    m = caption_mask(export_rgb, source_rgb)
    if m.sum() < 20:
        return None
    le, ls = _luma(export_rgb), _luma(source_rgb)
    # fill vs stroke by the caption's own two tones (Otsu on its luma): a white fill over a bright
    # background is barely brighter than it, so "brighter than the source" would miss it
    vals = np.clip(le[m], 0, 255).astype(np.uint8)
    split, _ = cv2.threshold(vals.reshape(-1, 1), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    light = vals[vals > split]
    if light.size < 10:
        return None
    # the fill's core: halfway from the split up to the light tone (drops fill/stroke blends, which
    # at small sizes are most of a glyph's pixels and would grey the colour and widen the lines)
    fill = m & (le > (split + np.percentile(light, 95)) / 2)
    stroke = m & (le <= split) & (le < ls - LUMA_STEP)
    if fill.sum() < 10:
        return None
    px = export_rgb[fill]
    return Look(bbox=caption_bbox(m),
                fill_rgb=tuple(int(v) for v in np.median(px, axis=0)), fill_px=int(fill.sum()),
                stroke_px=int(stroke.sum()), stroke_luma=float(np.median(le[stroke])) if stroke.any() else 255.0,
                lines=text_lines(fill), fill=fill, mask=m)


def looks_at(export: Path, source: Path, times_s: Iterable[float]) -> Iterator[tuple[float, np.ndarray, Look]]:
    """(t, export frame, its caption's look) at each time that shows a caption, ascending: the one
    way T03 and T13 read a caption (`paired_frames_at`, then `measure_look`); a frame with nothing
    burned in is skipped."""
    for t, e, src in paired_frames_at(export, source, times_s):
        look = measure_look(e, src)
        if look is not None:
            yield t, e, look


def is_white(rgb: tuple[int, int, int], min_level: int = 200, max_spread: int = 35) -> bool:
    """White caption fill: every channel bright and nearly equal (yellow 255,220,0 is not)."""
    return min(rgb) >= min_level and max(rgb) - min(rgb) <= max_spread


def hollow_boxes(fill: np.ndarray, min_height_px: float) -> int:
    """Fill components that are hollow rectangles at least `min_height_px` tall (tofu glyphs):
    their bbox's outer band mostly inked, the inside (inset twice as far) almost empty."""
    n, lab, stats, _ = cv2.connectedComponentsWithStats(fill.astype(np.uint8), connectivity=8)
    count = 0
    for i in range(1, n):
        x, y, w, h = (int(v) for v in stats[i, :4])
        if h < min_height_px or w < 4 or not 0.25 <= w / h <= 1.5:
            continue
        comp = lab[y:y + h, x:x + w] == i
        mg = max(1, round(0.15 * min(w, h)))
        ring = np.ones_like(comp)
        ring[mg:h - mg, mg:w - mg] = False
        inner = comp[2 * mg:h - 2 * mg, 2 * mg:w - 2 * mg]
        if inner.size < 4:
            continue
        if comp[ring].mean() >= 0.6 and inner.mean() <= 0.1:
            count += 1
    return count


def reference_hollow_boxes(lines: list[str], font_px: int, min_height_px: float) -> int:
    """hollow_boxes of the expected text rendered in the CJK reference font (real 口-like glyphs)."""
    from verifiers.synthkit.captions import CJK_FONT, draw_caption

    width = int(font_px * (max((len(s) for s in lines), default=1) + 2))
    height = int(font_px * (1.25 * len(lines) + 1))
    canvas = np.zeros((height, width, 3), np.uint8)
    img = draw_caption(canvas, lines, font_px=font_px, baseline_y_px=height - font_px // 2, font=CJK_FONT,
                       stroke_px=0)
    return hollow_boxes(_luma(img) > 128, min_height_px)


def ocr_lines(rgb: np.ndarray, look: Look, *, fill_only: bool = False) -> list[TextBox]:
    """OCR of the caption alone, one box per text line, top to bottom.

    The changed pixels (grown by 1 px for anti-aliased edges) are copied onto black: footage behind
    the caption (a passing object split "今天我们去西湖散步" into overlapping boxes that read
    "今天我们|门去西|西湖散步") and text in the footage itself are not read. Readability against the
    footage is style_position's business, not the text's.

    Only a square around the caption is read: the detector scales an image's short side to 480 px,
    so a square costs about half a full 16:9 frame (OCR is most of these scorers' time).

    `fill_only`: the fill's core white on black instead (no stroke, no footage halo). The coloured
    read keeps the footage where the stroke did not change it (a dark stroke over dark footage), and
    that halo varies with the footage: at T13's seed 13 it made the model drop 線 and 夕 from 24-px
    Japanese captions on every frame, while the fill alone read them."""
    grown = cv2.dilate(look.mask.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    alone = np.zeros_like(rgb)
    if fill_only:
        alone[look.fill] = 255
    else:
        alone[grown] = rgb[grown]
    x0, y0, x1, y1 = look.bbox
    h, w = rgb.shape[:2]
    side = min(max(x1 - x0, y1 - y0) + 16, max(h, w))
    cx0 = int(min(max(0, (x0 + x1 - side) // 2), max(0, w - side)))
    cy0 = int(min(max(0, (y0 + y1 - side) // 2), max(0, h - side)))
    crop = np.zeros((side, side, 3), np.uint8)
    part = alone[cy0:cy0 + side, cx0:cx0 + side]
    crop[:part.shape[0], :part.shape[1]] = part
    boxes = [TextBox(b.text, b.x0 + cx0, b.y0 + cy0, b.x1 + cx0, b.y1 + cy0, b.confidence) for b in read_text_cached(crop)]
    groups: list[list[TextBox]] = []
    for b in sorted(boxes, key=lambda b: b.center[1]):
        g = groups[-1] if groups else None
        if g and min(g[-1].y1, b.y1) - max(g[-1].y0, b.y0) > 0.5 * min(g[-1].y1 - g[-1].y0, b.y1 - b.y0):
            g.append(b)
        else:
            groups.append([b])
    out = []
    for g in groups:
        g.sort(key=lambda b: b.x0)
        out.append(TextBox("".join(b.text for b in g), min(b.x0 for b in g), min(b.y0 for b in g),
                           max(b.x1 for b in g), max(b.y1 for b in g), min(b.confidence for b in g)))
    return out
