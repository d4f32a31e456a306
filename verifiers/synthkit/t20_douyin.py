"""Drawing and sound for the T20 (Douyin kettle video) synthetic instance.

Still product shots of a procedural kettle (one per feature: spout, handle, base), CJK subtitles
and a price sticker drawn with PIL, callout arrows as filled polygons (a shaft and a triangular
head: the shape the scorer's arrow finder expects of a callout sticker), and a BGM + voice mix
brought to a chosen integrated loudness. Everything is a pure function of its arguments, so the
same seed gives the same bytes.
"""

from __future__ import annotations

import functools
from pathlib import Path

import cv2
import numpy as np

CJK_FONT = Path("/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf")  # Debian fonts-droid-fallback
LATIN_FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")  # its Latin glyphs are tofu
FEATURES = ("spout", "handle", "base")


@functools.cache
def _font(path: Path, size_px: int):
    from PIL import ImageFont

    return ImageFont.truetype(str(path), size_px)


def kettle_shot(seed: int, width_px: int, height_px: int, feature: str) -> tuple[np.ndarray, tuple[int, int]]:
    """One still shot framing the kettle for `feature`, and that feature's point (frame pixels)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height_px, 0:width_px]
    top, bottom = rng.integers(60, 200, size=3), rng.integers(30, 140, size=3)
    f = (top + (bottom - top) * (yy / height_px)[..., None] + 10 * np.sin(xx / 23.0)[..., None]).astype(np.uint8)
    for _ in range(5):  # props on the table: they make each shot tell apart from the others
        c = tuple(int(v) for v in rng.integers(0, 255, size=3))
        x, y = int(rng.integers(0, width_px)), int(rng.integers(height_px // 2, height_px))
        cv2.circle(f, (x, y), int(rng.integers(6, 18)), c, -1, cv2.LINE_AA)
    s = width_px / 270
    cx = int(width_px * rng.uniform(0.42, 0.58))
    cy = int(height_px * rng.uniform(0.45, 0.55))
    body = tuple(int(v) for v in rng.integers(150, 230, size=3))
    bw, bh = int(62 * s), int(80 * s)
    cv2.ellipse(f, (cx, cy + bh // 2), (bw, int(14 * s)), 0, 0, 360, (40, 40, 45), -1, cv2.LINE_AA)  # base
    cv2.rectangle(f, (cx - bw + int(8 * s), cy - bh // 2), (cx + bw - int(8 * s), cy + bh // 2), body, -1)
    cv2.ellipse(f, (cx, cy - bh // 2), (bw - int(8 * s), int(12 * s)), 0, 0, 360, body, -1, cv2.LINE_AA)
    cv2.circle(f, (cx, cy - bh // 2 - int(10 * s)), int(7 * s), (30, 30, 30), -1, cv2.LINE_AA)  # lid knob
    spout = np.array([[cx - bw + 8 * s, cy - 10 * s], [cx - bw - 34 * s, cy - 44 * s],
                      [cx - bw - 30 * s, cy - 50 * s], [cx - bw + 8 * s, cy - 30 * s]], np.int32)
    cv2.fillPoly(f, [spout], body, cv2.LINE_AA)
    cv2.ellipse(f, (cx + bw, cy), (int(22 * s), int(34 * s)), 0, -90, 90, (35, 35, 35), int(7 * s), cv2.LINE_AA)
    points = {"spout": (cx - bw - int(32 * s), cy - int(47 * s)), "handle": (cx + bw + int(22 * s), cy),
              "base": (cx, cy + bh // 2 + int(12 * s))}
    return f, points[feature]


def draw_text(frame: np.ndarray, text: str, centre_xy: tuple[float, float], size_px: int, *,
              fill: tuple[int, int, int] = (255, 255, 255), stroke_px: int = 2,
              stroke_fill: tuple[int, int, int] = (0, 0, 0)) -> np.ndarray:
    """One line centred on `centre_xy`; CJK glyphs from Droid Sans Fallback, the rest from DejaVu."""
    from PIL import Image, ImageDraw

    runs: list[tuple[str, Path]] = []
    for ch in text:
        path = CJK_FONT if ord(ch) >= 0x2E80 else LATIN_FONT
        if runs and runs[-1][1] == path:
            runs[-1] = (runs[-1][0] + ch, path)
        else:
            runs.append((ch, path))
    widths = [_font(p, size_px).getlength(t) for t, p in runs]
    x = centre_xy[0] - sum(widths) / 2
    img = Image.fromarray(frame)
    d = ImageDraw.Draw(img)
    for (t, p), w in zip(runs, widths, strict=True):
        d.text((x, centre_xy[1]), t, font=_font(p, size_px), fill=fill, anchor="lm",
               stroke_width=stroke_px, stroke_fill=stroke_fill)
        x += w
    return np.asarray(img)


def draw_sticker(frame: np.ndarray, text: str, centre_xy: tuple[float, float], size_px: int) -> np.ndarray:
    """A red rounded price sticker with white text."""
    from PIL import Image, ImageDraw

    runs_w = sum(_font(CJK_FONT if ord(ch) >= 0x2E80 else LATIN_FONT, size_px).getlength(ch) for ch in text)
    cx, cy = centre_xy
    img = Image.fromarray(frame)
    ImageDraw.Draw(img).rounded_rectangle((cx - runs_w / 2 - 8, cy - size_px * 0.85, cx + runs_w / 2 + 8,
                                           cy + size_px * 0.85), radius=size_px // 3, fill=(225, 30, 40))
    return draw_text(np.asarray(img), text, centre_xy, size_px, stroke_px=0)


def arrow_polygon(tail_xy: tuple[float, float], tip_xy: tuple[float, float], shaft_px: float,
                  head_px: float, head_len_px: float) -> np.ndarray:
    """Outline of a filled arrow from tail to tip (shaft `shaft_px` wide, head `head_px` wide)."""
    tail, tip = np.asarray(tail_xy, float), np.asarray(tip_xy, float)
    u = (tip - tail) / np.linalg.norm(tip - tail)
    n = np.array([-u[1], u[0]])
    neck = tip - u * head_len_px
    pts = [tail + n * shaft_px / 2, neck + n * shaft_px / 2, neck + n * head_px / 2, tip,
           neck - n * head_px / 2, neck - n * shaft_px / 2, tail - n * shaft_px / 2]
    return np.round(np.array(pts)).astype(np.int32)


def draw_arrow(frame: np.ndarray, tail_xy, tip_xy, *, scale: float = 1.0,
               colour: tuple[int, int, int] = (255, 214, 0)) -> np.ndarray:
    """A callout arrow as a sticker draws it: a filled yellow arrow with a dark outline."""
    f = frame.copy()
    poly = arrow_polygon(tail_xy, tip_xy, 6 * scale, 22 * scale, 18 * scale)
    cv2.fillPoly(f, [poly], colour, cv2.LINE_AA)
    cv2.polylines(f, [poly], True, (40, 30, 0), 1, cv2.LINE_AA)
    return f


def voice_and_music(duration_s: float, word_onsets_s: list[float], seed: int,
                    sample_rate_hz: int = 48_000) -> np.ndarray:
    """Mono BGM (chords with a soft beat) under a voice-like band of syllables starting at
    `word_onsets_s`, through a tanh limiter (a mastered mix: at −14 LUFS its true peak is about
    −7 dBTP, at −10 LUFS about −3; AAC encoding adds ~1.5-2 dB, measured −5.3 and −0.7). Peak 1 before any loudness scaling. (Mono: AAC
    encoding is the slow part of writing a miniature.)"""
    from scipy import signal

    rng = np.random.default_rng(seed)
    n = int(duration_s * sample_rate_hz)
    t = np.arange(n) / sample_rate_hz
    music = sum(0.05 * np.sin(2 * np.pi * f0 * t) for f0 in (220.0, 277.2, 329.6))
    beat = (np.mod(t, 0.5) < 0.06) * np.exp(-np.mod(t, 0.5) * 40) * np.sin(2 * np.pi * 60 * t)
    music = music + 0.06 * beat
    voice = np.zeros(n)
    band = signal.butter(2, [200, 3000], "band", fs=sample_rate_hz, output="sos")
    for onset in word_onsets_s:
        i, m = int(onset * sample_rate_hz), int(0.22 * sample_rate_hz)
        seg = signal.sosfilt(band, rng.standard_normal(m)) * np.hanning(m)
        voice[i:i + m] += 0.3 * seg[: max(0, n - i)]
    mix = music + voice
    return np.tanh(2 * mix / np.abs(mix).max()) / np.tanh(2.0)


def at_loudness(mix: np.ndarray, target_lufs: float, sample_rate_hz: int = 48_000) -> np.ndarray:
    """`mix` scaled so its integrated loudness is `target_lufs` (BS.1770, verifiers.measure.loudness)."""
    from verifiers.measure.loudness import measure_loudness

    now = measure_loudness(mix, sample_rate_hz).integrated_lufs
    return (mix * 10 ** ((target_lufs - now) / 20)).astype(np.float32)


def srt_text(cues: list[tuple[float, float, str]]) -> str:
    """SubRip text for (start_s, end_s, text) cues."""
    def stamp(t_s: float) -> str:
        ms = round(t_s * 1000)
        return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"

    return "\n".join(f"{i}\n{stamp(a)} --> {stamp(b)}\n{text}\n" for i, (a, b, text) in enumerate(cues, 1))
