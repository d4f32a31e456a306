"""Burned-in caption drawing and SRT writing for the short-form caption tasks (T03, T13).

OpenCV's Hershey fonts have no CJK glyphs, so captions are drawn with PIL and a TrueType font:
Debian's Droid Sans Fallback (fonts-droid-fallback) covers Chinese and Japanese kana; DejaVu Sans
has neither, so Japanese drawn with it shows the font's .notdef "tofu" boxes — exactly what an
editor shows when the caption font lacks the glyphs.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

CJK_FONT = Path("/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf")
LATIN_FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")


class FontMissing(RuntimeError):
    """A caption font is not installed (Debian fonts-droid-fallback / fonts-dejavu-core)."""


@functools.cache
def _font(path: str, size_px: int):
    from PIL import ImageFont

    try:
        return ImageFont.truetype(path, size_px)
    except OSError:
        raise FontMissing(f"caption font {path} not installed (Debian fonts-droid-fallback for CJK, "
                          "fonts-dejavu-core for Latin)") from None


def draw_caption(frame: np.ndarray, lines: Sequence[str], *, font_px: int, baseline_y_px: float,
                 centre_x_px: float | None = None, font: Path = CJK_FONT,
                 fill: tuple[int, int, int] = (255, 255, 255), stroke_px: int = 1,
                 stroke_fill: tuple[int, int, int] = (0, 0, 0), line_gap: float = 1.25) -> np.ndarray:
    """A copy of `frame` with `lines` drawn centred; the *last* line's baseline sits at
    `baseline_y_px` and earlier lines stack upwards `line_gap` × font size apart (as editors place a
    bottom-anchored subtitle)."""
    layer = caption_layer(frame.shape[0], frame.shape[1], lines, font_px=font_px, baseline_y_px=baseline_y_px,
                          centre_x_px=centre_x_px, font=font, fill=fill, stroke_px=stroke_px,
                          stroke_fill=stroke_fill, line_gap=line_gap)
    return composite(frame, layer)


@dataclass(frozen=True)
class Layer:
    """A drawn caption: its RGBA ink box and where that box sits in the frame."""

    rgba: np.ndarray
    y0: int
    x0: int


def caption_layer(height_px: int, width_px: int, lines: Sequence[str], **style) -> Layer:
    """The caption alone (draw_caption's arguments) as a Layer: draw once, composite on every frame
    the caption covers (drawing CJK text with PIL per frame is slow)."""
    from PIL import Image, ImageDraw

    img = Image.new("RGBA", (width_px, height_px), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    font_px = int(style.pop("font_px"))
    f = _font(str(style.pop("font", CJK_FONT)), font_px)
    base_y = style.pop("baseline_y_px")
    cx = style.pop("centre_x_px", None)
    cx = width_px / 2 if cx is None else cx
    gap = style.pop("line_gap", 1.25)
    fill = (*style.pop("fill", (255, 255, 255)), 255)
    stroke_fill = (*style.pop("stroke_fill", (0, 0, 0)), 255)
    stroke_px = int(style.pop("stroke_px", 1))
    if style:
        raise TypeError(f"unknown caption style {sorted(style)}")
    for k, line in enumerate(reversed(list(lines))):
        d.text((cx, base_y - k * gap * font_px), line, font=f, fill=fill, anchor="ms", stroke_width=stroke_px,
               stroke_fill=stroke_fill)
    rgba = np.asarray(img)
    ys, xs = np.nonzero(rgba[..., 3])
    if ys.size == 0:
        return Layer(rgba[:0, :0], 0, 0)
    y0, x0 = int(ys.min()), int(xs.min())
    return Layer(rgba[y0:ys.max() + 1, x0:xs.max() + 1].copy(), y0, x0)


def composite(frame: np.ndarray, layer: Layer) -> np.ndarray:
    """`layer` over `frame` (RGB); a copy."""
    out = frame.copy()
    h, w = layer.rgba.shape[:2]
    if h == 0 or w == 0:
        return out
    y0, x0 = layer.y0, layer.x0
    a = layer.rgba[..., 3:4].astype(np.float32) / 255
    region = out[y0:y0 + h, x0:x0 + w]
    out[y0:y0 + h, x0:x0 + w] = np.round(region * (1 - a) + layer.rgba[..., :3] * a).astype(np.uint8)
    return out


def srt_time(t_s: float) -> str:
    ms = round(t_s * 1000)
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    s, ms = divmod(ms, 1000)
    return f"{h:02d}:{m:02d}:{s:02d},{ms:03d}"


def srt_text(cues: Sequence[tuple[float, float, str]]) -> str:
    """SubRip text for (start_s, end_s, text) cues; a text's "\\n" becomes a line break."""
    blocks = [f"{i}\n{srt_time(a)} --> {srt_time(b)}\n{text}\n" for i, (a, b, text) in enumerate(cues, 1)]
    return "\n".join(blocks)
