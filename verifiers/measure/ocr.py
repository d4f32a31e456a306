"""OCR of burned-in text (captions, titles, stickers) in decoded frames.

RapidOCR (PP-OCR models run by onnxruntime; the detection/recognition models ship inside the
wheel, so nothing is downloaded at run time). Its default recogniser reads Latin and Chinese.
The engine loads once per process (~0.5 s); one 320x180 frame reads in ~0.2 s on this machine,
so callers sample frames rather than reading every one.

Detection and recognition are separate stages, and detection at native size is what makes a large
frame expensive (a 1080x1920 frame: ~1.5 s idle, 3-4 s on a loaded machine). Frames whose short side
exceeds DET_MAX_SHORT_SIDE_PX are read in two passes: the detector *locates* text on a copy
downscaled to that short side, then each located region (padded, at native size) is detected again
and recognised exactly as the one-pass reader would. A region is a small strip, so the boxes, and the
crops the recogniser reads, are the native-size ones at a fraction of the cost (bench/ocr_speed.py);
boxes found on the downscaled copy alone are ~20% taller and made the recogniser drop kanji.
Frames at or under the cap are read in one pass, exactly as before; so are images with a side over
RapidOCR's max_side_len (2000 px; rows of tiled frames), which RapidOCR itself shrinks first. The
located copy is never under half size.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np


class OCRUnavailable(RuntimeError):
    """No OCR engine installed: text checks cannot be judged (report them as errors)."""


@dataclass(frozen=True)
class TextBox:
    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    confidence: float

    @property
    def center(self) -> tuple[float, float]:
        return (self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2


DET_MIN_SIDE_PX = 480
"""Small frames are upscaled so their short side is this long: the default (736) makes a 180-px
frame 4x larger and costs ~0.8 s per call, 480 keeps captions of >= 10 px readable."""

DET_MAX_SHORT_SIDE_PX = 540
"""Larger frames are located on a copy with this short side (half a 1080x1920 frame): the shortest
captions our tasks use at full size (46-48 px) are then ~23 px there, the size the 540x960 synthetic
T13 instances are detected at (tests/measure/test_ocr_sizes.py). Text under ~20 px on a 1080-px
frame may go unlocated; no short-form check reads text that small."""

REGION_PAD_PX = 32
"""Native-size context kept around a located box (at least the box's height) for the second pass."""


@functools.cache
def _engine():
    try:
        from rapidocr_onnxruntime import RapidOCR
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise OCRUnavailable(f"OCR not available: rapidocr-onnxruntime is not installed ({exc})") from None
    with _memory_arena():
        engine = RapidOCR(det_limit_side_len=DET_MIN_SIDE_PX, det_limit_type="min", intra_op_num_threads=1,
                          inter_op_num_threads=1)
    plain_preprocess = getattr(engine.text_det, "get_preprocess", None)
    if plain_preprocess is not None:
        engine.text_det.get_preprocess = lambda max_wh: _tabled(plain_preprocess(max_wh))
    return engine


def _tabled(pre):
    """`pre` (RapidOCR's DetPreProcess) with its normalize done by a 256-entry table when it can be.

    Its normalize is `(img.astype(float32) * scale - mean) / std` with float64 mean/std: four
    float64 passes over an upscaled frame (~4 % of a small frame's OCR). On uint8 pixels with one
    mean and one std for every channel, each output value depends on the pixel's value alone, so the
    same expression evaluated on the 256 possible values and looked up gives the same numbers (as
    float32, the type the network gets: the caller casts to it anyway)."""
    plain = pre.normalize
    mean, std = np.asarray(pre.mean, dtype=float).ravel(), np.asarray(pre.std, dtype=float).ravel()
    if mean.size == 0 or std.size == 0 or np.ptp(mean) != 0 or np.ptp(std) != 0:
        return pre
    table = plain(np.arange(256, dtype=np.uint8)[:, None].repeat(mean.size, axis=1))[:, 0].astype(np.float32)

    def normalize(img: np.ndarray) -> np.ndarray:
        if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != mean.size:
            return plain(img)
        return table[img]

    pre.normalize = normalize
    return pre


@contextlib.contextmanager
def _memory_arena():
    """RapidOCR builds its onnxruntime sessions with the CPU memory arena off, so every inference
    maps and unmaps its ~100 MB of activations afresh (page faults: ~0.02 s of system time a frame,
    10-20 % of a small frame's OCR). With the arena the buffers are kept between runs; the arithmetic
    is the same, so the readings are identical (tests/measure/test_ocr_arena.py). Only the sessions
    built inside the `with` are affected; a RapidOCR without that hook is built as it is."""
    try:
        from rapidocr_onnxruntime.utils import infer_engine
    except ImportError:  # pragma: no cover - another layout: no arena
        yield
        return
    cls = getattr(infer_engine, "OrtInferSession", None)
    plain = getattr(cls, "_init_sess_opts", None)
    if plain is None:  # pragma: no cover - another layout
        yield
        return

    def with_arena(config):
        opts = plain(config)
        opts.enable_cpu_mem_arena = True
        return opts

    cls._init_sess_opts = staticmethod(with_arena)
    try:
        yield
    finally:
        cls._init_sess_opts = staticmethod(plain)


def _two_pass_ok(engine) -> bool:
    """The two-pass reader drives RapidOCR's stages itself (layout of rapidocr-onnxruntime 1.4);
    another layout gets the one-pass reader."""
    det = getattr(engine, "text_det", None)
    return all(hasattr(det, a) for a in ("infer", "postprocess_op", "filter_tag_det_res", "mean", "std")) and all(
        hasattr(engine, a) for a in ("sorted_boxes", "get_crop_img_list", "text_cls", "text_rec", "text_score"))


def _detect(engine, bgr: np.ndarray, short_side_px: int | None) -> np.ndarray:
    """Text quads (N, 4, 2) in `bgr`'s pixels, detected on a copy whose short side is `short_side_px`
    (None: native size). RapidOCR's own resize, but also downwards (its "min" mode only upscales)."""
    import cv2
    from rapidocr_onnxruntime.ch_ppocr_det.utils import DetPreProcess

    h, w = bgr.shape[:2]
    ratio = 1.0 if short_side_px is None else short_side_px / min(h, w)
    size_px = (max(32, round(w * ratio / 32) * 32), max(32, round(h * ratio / 32) * 32))  # the net wants x32
    # INTER_AREA when shrinking: a 2x linear shrink aliases thin strokes; native size resizes as RapidOCR does
    img = cv2.resize(bgr, size_px, interpolation=cv2.INTER_AREA if ratio < 1 else cv2.INTER_LINEAR)
    det = engine.text_det
    pre = _tabled(DetPreProcess(DET_MIN_SIDE_PX, "min", det.mean, det.std))
    preds = det.infer(pre.permute(pre.normalize(img))[None].astype(np.float32))[0]
    boxes, _ = det.postprocess_op(preds, (h, w))
    return det.filter_tag_det_res(boxes, (h, w))


def _regions(quads: np.ndarray, height_px: int, width_px: int) -> list[tuple[int, int, int, int]]:
    """Padded boxes around the located quads, overlapping ones merged (a line is read in one region)."""
    out: list[tuple[int, int, int, int]] = []  # pairwise disjoint
    for q in quads:
        pad = max(REGION_PAD_PX, int(q[:, 1].max() - q[:, 1].min()))
        r = (max(0, int(q[:, 0].min()) - pad), max(0, int(q[:, 1].min()) - pad),
             min(width_px, int(q[:, 0].max()) + pad + 1), min(height_px, int(q[:, 1].max()) + pad + 1))
        while (hit := next((o for o in out if o[0] < r[2] and r[0] < o[2] and o[1] < r[3] and r[1] < o[3]), None)):
            out.remove(hit)  # the union may reach further regions: keep merging
            r = (min(r[0], hit[0]), min(r[1], hit[1]), max(r[2], hit[2]), max(r[3], hit[3]))
        out.append(r)
    return out


def _read_two_pass(engine, bgr: np.ndarray, locate_short_px: int) -> list[tuple[np.ndarray, str, float]]:
    """(quad, text, score) of a large frame: located on a downscaled copy, read per region at native size."""
    out = []
    h, w = bgr.shape[:2]
    for x0, y0, x1, y1 in _regions(_detect(engine, bgr, locate_short_px), h, w):
        crop = np.ascontiguousarray(bgr[y0:y1, x0:x1])
        quads = _detect(engine, crop, None)
        if len(quads) == 0:
            continue
        quads = engine.sorted_boxes(quads)
        crops = engine.get_crop_img_list(crop, quads)
        if engine.use_cls:
            crops, _, _ = engine.text_cls(crops)
        rec, _ = engine.text_rec(crops, False)
        out += [(q + np.array([x0, y0], np.float32), str(r[0]), float(r[1]))
                for q, r in zip(quads, rec, strict=True) if float(r[1]) >= engine.text_score]
    return out


def read_text(rgb: np.ndarray, *, min_confidence: float = 0.5,
              det_max_short_px: int | None = DET_MAX_SHORT_SIDE_PX) -> list[TextBox]:
    """Text boxes found in an RGB frame, top-to-bottom then left-to-right.

    Frames whose short side exceeds `det_max_short_px` are read in two passes (module docstring);
    None reads every frame in one pass at native size (the old way, kept for bench/ocr_speed.py).
    With OCR_CACHE_DIR_ENV set, a reading another process already made of the same content is
    taken from that folder (`_disk_cached`)."""
    folder = os.environ.get(OCR_CACHE_DIR_ENV)
    if not folder:
        return _read_text(rgb, min_confidence, det_max_short_px)
    return _disk_cached(Path(folder), rgb, min_confidence, det_max_short_px)


def _read_text(rgb: np.ndarray, min_confidence: float, det_max_short_px: int | None) -> list[TextBox]:
    """read_text by the engine itself."""
    import cv2

    bgr = cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2BGR)
    engine = _engine()
    short, long = sorted(bgr.shape[:2])
    if (det_max_short_px is not None and short > det_max_short_px and long <= getattr(engine, "max_side_len", 2000)
            and _two_pass_ok(engine)):
        # never under half size: 46-px captions stay >= 23 px where they are located
        result = _read_two_pass(engine, bgr, max(det_max_short_px, (short + 1) // 2))
    else:  # RapidOCR shrinks a long side over max_side_len itself (a row of tiled frames): as before
        result, _ = engine(bgr)
    boxes = []
    for quad, text, conf in result or []:
        if float(conf) < min_confidence:
            continue
        q = np.asarray(quad, dtype=float)
        boxes.append(TextBox(str(text), float(q[:, 0].min()), float(q[:, 1].min()), float(q[:, 0].max()),
                             float(q[:, 1].max()), float(conf)))
    return sorted(boxes, key=lambda b: (round(b.y0 / 8), b.x0))


OCR_CACHE_DIR_ENV = "TALLY_OCR_CACHE_DIR"
"""A folder where `read_text` keeps every reading as one small JSON file named by the frame's content
and the reader's identity, shared by every process that has the variable (tests/conftest.py makes one
per test session, so both pytest workers and their `tally` subprocesses read a frame once). Unset
(the default outside the tests): nothing is written to disk. The folder is not bounded: give it to a
session, not to a daemon."""


@functools.cache
def _reader_identity() -> bytes:
    """What a reading depends on besides the frame: this module's code (its constants and two-pass
    reader) and the engine's versions. A reading made by another version is never taken."""
    from importlib.metadata import PackageNotFoundError, version

    def ver(dist: str) -> str:
        try:
            return version(dist)
        except PackageNotFoundError:
            return "-"

    code = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    return f"{code}|{ver('rapidocr-onnxruntime')}|{ver('onnxruntime')}".encode("ascii")


def _disk_cached(folder: Path, rgb: np.ndarray, min_confidence: float,
                 det_max_short_px: int | None) -> list[TextBox]:
    """The engine's reading of `rgb`, or the one another process stored under the same key.

    Key: blake2b of the frame's bytes, shape, dtype, the options and `_reader_identity`. Floats are
    stored as JSON numbers (repr round-trips exactly), so a stored reading equals a fresh one. A file
    is written to a temporary name and renamed into place, so a reader never sees half of it; two
    processes reading the same frame at once both compute it and write the same content. A file that
    cannot be read is a miss; one that cannot be written is skipped (the reading is still returned)."""
    key = hashlib.blake2b(_content_key(rgb, min_confidence, det_max_short_px) + _reader_identity(),
                          digest_size=20).hexdigest()
    path = folder / f"{key}.json"
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
        return [TextBox(str(t), float(x0), float(y0), float(x1), float(y1), float(c)) for t, x0, y0, x1, y1, c in rows]
    except (OSError, ValueError, TypeError):
        pass
    boxes = _read_text(rgb, min_confidence, det_max_short_px)
    tmp = folder / f".{key}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps([[b.text, b.x0, b.y0, b.x1, b.y1, b.confidence] for b in boxes],
                                  ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
    return boxes


CACHE_MAX_FRAMES = 256
"""Frames whose OCR the process remembers (least recently used dropped first): a few MB of boxes."""

_cache: OrderedDict[bytes, tuple[TextBox, ...]] = OrderedDict()
_cache_lock = threading.Lock()


def _content_key(rgb: np.ndarray, min_confidence: float, det_max_short_px: int | None) -> bytes:
    arr = np.ascontiguousarray(rgb)
    head = f"{arr.shape}|{arr.dtype}|{min_confidence}|{det_max_short_px}".encode("ascii")
    return hashlib.blake2b(arr.tobytes(), digest_size=16).digest() + head


def read_text_cached(rgb: np.ndarray, *, min_confidence: float = 0.5,
                     det_max_short_px: int | None = DET_MAX_SHORT_SIDE_PX) -> list[TextBox]:
    """`read_text`, remembered by the frame's content (digest of its pixels, shape and the reader's
    options), bounded to CACHE_MAX_FRAMES. OCR is the slow part of a text check (~0.2-1 s a frame);
    scoring several solutions of one instance (the self-test: oracle, nothing, mutants) meets the
    same decoded frames again. One cache per process, shared by every scorer (thread-safe)."""
    key = _content_key(rgb, min_confidence, det_max_short_px)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return list(hit)
    boxes = tuple(read_text(rgb, min_confidence=min_confidence, det_max_short_px=det_max_short_px))
    with _cache_lock:
        _cache[key] = boxes
        _cache.move_to_end(key)
        while len(_cache) > CACHE_MAX_FRAMES:
            _cache.popitem(last=False)
    return list(boxes)


def clear_text_cache() -> None:
    """Forget every remembered reading (tests; a process that changes OCR engines)."""
    with _cache_lock:
        _cache.clear()


def frame_text(rgb: np.ndarray) -> str:
    """All text of a frame joined with spaces ("" when none); remembered by the frame's content
    (`read_text_cached`), so the oracle, a mutant and an export showing the same frame read it once."""
    return " ".join(b.text for b in read_text_cached(rgb))


def normalise(text: str) -> str:
    """Lower case, punctuation and spaces dropped: OCR of styled captions loses both."""
    return "".join(ch for ch in text.lower() if ch.isalnum())


def edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def error_rate(hyp: str, ref: str) -> float:
    """Edit distance over the reference length (CER on characters, WER on word lists)."""
    if not ref:
        return 0.0 if not hyp else 1.0
    return edit_distance(hyp, ref) / len(ref)


def resplit(tokens: list[str], vocabulary: set[str]) -> list[str]:
    """Split normalised OCR tokens at vocabulary words (longest first).

    OCR of small caption fonts often drops the spaces ("stiritgently"); WER needs words, so run-on
    tokens are cut where known words fit end to end. A token that cannot be fully covered is kept
    whole (and counts as one wrong word), so misreadings are never hidden.
    """
    words = sorted(vocabulary, key=len, reverse=True)

    def cover(rest: str, parts: list[str]) -> bool:
        if not rest:
            return True
        for w in words:
            if w and rest.startswith(w):
                parts.append(w)
                if cover(rest[len(w):], parts):
                    return True
                parts.pop()
        return False

    out: list[str] = []
    for tok in tokens:
        parts: list[str] = []
        if tok in vocabulary or not cover(tok, parts):
            out.append(tok)
        else:
            out += parts
    return out
