"""Synthetic material for short-form T06 (15-s brand ad) and T18 (60-s explainer).

Brand-coloured captions drawn with PIL (a real TrueType font, as CapCut would), a geometric logo,
the brand kit as a one-page PDF (PIL writes it), and audio stems: a voice-over of band-passed noise
bursts (300-3000 Hz, coherent so a projection can find it after AAC) and a broadband music bed.
Known stems are what lets the scorers measure ducking by projecting the mix onto each reference.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path

import numpy as np

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")  # Debian fonts-dejavu-core
PILL_RGB = (18, 18, 18)


def hex_rgb(hex_colour: str) -> tuple[int, int, int]:
    h = hex_colour.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


@functools.cache
def _font(size_px: int):
    from PIL import ImageFont

    return ImageFont.truetype(str(FONT), size_px)


def text_size(text: str, size_px: int) -> tuple[int, int]:
    x0, y0, x1, y1 = _font(size_px).getbbox(text)
    return x1 - x0, y1 - y0


def draw_text(frame: np.ndarray, text: str, *, x_px: int | None, y_px: int, size_px: int,
              colour: tuple[int, int, int], pill: bool = True) -> np.ndarray:
    """Text with its top-left at (x_px, y_px) (x centred when None) on a dark pill; returns a copy."""
    from PIL import Image, ImageDraw

    img = Image.fromarray(frame)
    d = ImageDraw.Draw(img)
    font = _font(size_px)
    bx0, by0, bx1, by1 = font.getbbox(text)
    w, h = bx1 - bx0, by1 - by0
    x = (frame.shape[1] - w) // 2 if x_px is None else x_px
    if pill:
        d.rounded_rectangle((x - 5, y_px - 4, x + w + 5, y_px + h + 5), radius=4, fill=PILL_RGB)
    d.text((x - bx0, y_px - by0), text, font=font, fill=tuple(colour))
    return np.asarray(img).copy()


def logo_image(size_px: int, colours: list[tuple[int, int, int]]) -> np.ndarray:
    """A wordless geometric logo (ring, bar and triangle in the brand colours on white)."""
    import cv2

    s = size_px
    img = np.full((s, s, 3), 255, np.uint8)
    c1, c2 = colours[0], colours[1 % len(colours)]
    cv2.circle(img, (s // 2, s // 2), int(s * 0.42), c1, -1, cv2.LINE_AA)
    cv2.circle(img, (s // 2, s // 2), int(s * 0.26), (255, 255, 255), -1, cv2.LINE_AA)
    pts = np.array([[s * 0.5, s * 0.28], [s * 0.7, s * 0.66], [s * 0.3, s * 0.66]], np.int32)
    cv2.fillPoly(img, [pts], c2, cv2.LINE_AA)
    cv2.rectangle(img, (int(s * 0.12), int(s * 0.84)), (int(s * 0.88), int(s * 0.92)), c1, -1)
    return img


def brand_kit_pdf(path: Path, colours_hex: list[str], logo_rgb: np.ndarray, font_name: str,
                  copy_lines: list[str]) -> Path:
    """The kit as the agent gets it: swatches with hex labels, the logo, the font name, the copy."""
    from PIL import Image, ImageDraw

    page = Image.new("RGB", (600, 800), "white")
    d = ImageDraw.Draw(page)
    f = _font(18)
    d.text((30, 20), "Brand kit", font=_font(28), fill="black")
    for i, hx in enumerate(colours_hex):
        d.rectangle((30 + 150 * i, 70, 150 + 150 * i, 150), fill=hex_rgb(hx))
        d.text((30 + 150 * i, 158), hx, font=f, fill="black")
    page.paste(Image.fromarray(logo_rgb).resize((160, 160)), (30, 200))
    d.text((30, 380), f"Font: {font_name}", font=f, fill="black")
    for i, line in enumerate(copy_lines):
        d.text((30, 420 + 28 * i), line, font=f, fill="black")
    path.parent.mkdir(parents=True, exist_ok=True)
    fixed = time.strptime("20260101", "%Y%m%d")  # PIL stamps "now" otherwise: same seed, same bytes
    page.save(path, "PDF", resolution=72.0, creationDate=fixed, modDate=fixed)
    return path


def band_noise(rng: np.random.Generator, n: int, lo_hz: float, hi_hz: float, rate_hz: int) -> np.ndarray:
    from scipy.signal import butter, sosfilt

    x = sosfilt(butter(4, [lo_hz, hi_hz], "bandpass", fs=rate_hz, output="sos"), rng.normal(0, 1, n))
    return x / (np.std(x) + 1e-12)


def voice_over(rng: np.random.Generator, dur_s: float, speech_s: list[list[float]], rate_hz: int,
               rms: float = 0.12) -> np.ndarray:
    """Syllable-modulated 300-3000 Hz noise inside the speech segments, silence elsewhere."""
    n = round(dur_s * rate_hz)
    x = band_noise(rng, n, 300, 3000, rate_hz) * rms
    t = np.arange(n) / rate_hz
    env = np.zeros(n)
    for a, b in speech_s:
        i0, i1 = int(a * rate_hz), int(b * rate_hz)
        env[i0:i1] = 0.7 + 0.3 * np.sin(2 * np.pi * 4.0 * t[i0:i1]) ** 2
    return (x * env).astype(np.float32)


def music_bed(rng: np.random.Generator, dur_s: float, rate_hz: int) -> np.ndarray:
    """A steady 60-8000 Hz bed with a slow pulse (unit RMS: callers set the level)."""
    n = round(dur_s * rate_hz)
    t = np.arange(n) / rate_hz
    x = band_noise(rng, n, 60, 8000, rate_hz) * (0.85 + 0.15 * np.sin(2 * np.pi * 2.0 * t))
    return (x / np.std(x)).astype(np.float32)


def gain_curve(n: int, speech_s: list[list[float]], duck_db: float, rate_hz: int, ramp_s: float = 0.08,
               offset_s: float = 0.0) -> np.ndarray:
    """Linear gain: 1 outside speech, duck_db down inside (with short ramps), speech shifted by offset_s."""
    g_db = np.zeros(n)
    for a, b in speech_s:
        g_db[max(0, int((a + offset_s - ramp_s) * rate_hz)): int((b + offset_s + ramp_s) * rate_hz)] = duck_db
    from scipy.ndimage import uniform_filter1d

    g_db = uniform_filter1d(g_db, max(1, int(ramp_s * rate_hz)), mode="nearest")
    return (10 ** (g_db / 20)).astype(np.float32)


def level_to_lufs(x: np.ndarray, rate_hz: int, target_lufs: float) -> np.ndarray:
    """Scale a (frames,) or (frames, ch) signal so its BS.1770 integrated loudness is target_lufs."""
    from verifiers.measure.loudness import measure_loudness

    cur = measure_loudness(x, rate_hz).integrated_lufs
    return (x * 10 ** ((target_lufs - cur) / 20)).astype(np.float32)
