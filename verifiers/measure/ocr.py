"""OCR of burned-in text (captions, titles, stickers) in decoded frames.

RapidOCR (PP-OCR models run by onnxruntime; the detection/recognition models ship inside the
wheel, so nothing is downloaded at run time). Its default recogniser reads Latin and Chinese.
The engine loads once per process (~0.5 s); one 320x180 frame reads in ~0.2 s on this machine,
so callers sample frames rather than reading every one.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

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


@functools.cache
def _engine():
    try:
        from rapidocr_onnxruntime import RapidOCR
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise OCRUnavailable(f"OCR not available: rapidocr-onnxruntime is not installed ({exc})") from None
    # Small frames are upscaled so their short side is det_limit_side_len; the default (736) makes a
    # 180-px frame 4x larger and costs ~0.8 s per call, 480 keeps captions of >= 10 px readable.
    return RapidOCR(det_limit_side_len=480, det_limit_type="min", intra_op_num_threads=1, inter_op_num_threads=1)


def read_text(rgb: np.ndarray, *, min_confidence: float = 0.5) -> list[TextBox]:
    """Text boxes found in an RGB frame, top-to-bottom then left-to-right."""
    import cv2

    bgr = cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2BGR)
    result, _ = _engine()(bgr)
    boxes = []
    for quad, text, conf in result or []:
        if float(conf) < min_confidence:
            continue
        q = np.asarray(quad, dtype=float)
        boxes.append(TextBox(str(text), float(q[:, 0].min()), float(q[:, 1].min()), float(q[:, 0].max()),
                             float(q[:, 1].max()), float(conf)))
    return sorted(boxes, key=lambda b: (round(b.y0 / 8), b.x0))


def frame_text(rgb: np.ndarray) -> str:
    """All text of a frame joined with spaces ("" when none)."""
    return " ".join(b.text for b in read_text(rgb))


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
