"""Tiny procedural clips for the short-form family's synthetic instances.

Every clip is a coloured gradient with moving discs whose positions depend on time, so a frame
fingerprint (verifiers.measure.fingerprint) can tell which clip *and* which moment a frame shows.
Sizes are miniatures (320x180 sources): see docs/shortform.md on the `scale` of an instance.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import cv2
import numpy as np


def clip_frames(seed: int, n_frames: int, width_px: int = 320, height_px: int = 180,
                fps: float = 24.0) -> list[np.ndarray]:
    """`n_frames` RGB frames of one procedural clip; the seed picks palette and motion."""
    rng = np.random.default_rng(seed)
    base = rng.integers(30, 200, size=3)
    yy, xx = np.mgrid[0:height_px, 0:width_px]
    grad = (xx / width_px)[..., None] * rng.integers(-60, 60, size=3) + (yy / height_px)[..., None] * rng.integers(-60, 60, size=3)
    bg = np.clip(base + grad, 0, 255).astype(np.uint8)
    # fixed texture blobs make the clip's identity; moving discs make the time
    for _ in range(6):
        c = tuple(int(v) for v in rng.integers(0, 255, size=3))
        cv2.rectangle(bg, (int(rng.integers(0, width_px)), int(rng.integers(0, height_px))),
                      (int(rng.integers(0, width_px)), int(rng.integers(0, height_px))), c, -1)
    discs = [(rng.uniform(0, width_px), rng.uniform(0, height_px), rng.uniform(-90, 90), rng.uniform(-60, 60),
              int(rng.integers(8, 22)), tuple(int(v) for v in rng.integers(0, 255, size=3))) for _ in range(5)]
    frames = []
    for i in range(n_frames):
        t = i / fps
        f = bg.copy()
        for x0, y0, vx, vy, r, c in discs:
            x = int((x0 + vx * t) % width_px)
            y = int((y0 + vy * t) % height_px)
            cv2.circle(f, (x, y), r, c, -1)
        # a bar sweeping across encodes time unambiguously within the clip
        bx = int((i * 7) % width_px)
        cv2.rectangle(f, (bx, 0), (bx + 4, height_px // 6), (255, 255, 255), -1)
        frames.append(f)
    return frames


def write_video(path: Path, frames: Iterable[np.ndarray], fps: float = 24.0, *,
                audio: np.ndarray | None = None, sample_rate_hz: int = 48_000, crf: int = 16) -> Path:
    """H.264/yuv420p MP4 (and AAC audio when given, mono or (n, ch)) written with PyAV."""
    from fractions import Fraction

    import av

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frames = list(frames)
    h, w = frames[0].shape[:2]
    with av.open(str(path), "w") as out:
        vs = out.add_stream("libx264", rate=Fraction(fps).limit_denominator(1001))
        vs.width, vs.height, vs.pix_fmt = w, h, "yuv420p"
        vs.options = {"crf": str(crf), "preset": "ultrafast"}
        ast = None
        if audio is not None:
            a = np.asarray(audio, dtype=np.float32)
            if a.ndim == 1:
                a = a[:, None]
            ast = out.add_stream("aac", rate=sample_rate_hz)
            ast.layout = "mono" if a.shape[1] == 1 else "stereo"
        for f in frames:
            for pkt in vs.encode(av.VideoFrame.from_ndarray(np.ascontiguousarray(f), format="rgb24")):
                out.mux(pkt)
        for pkt in vs.encode():
            out.mux(pkt)
        if ast is not None:
            encode_audio(out, ast, np.ascontiguousarray(a.T), sample_rate_hz, 1024)
    return path


def encode_audio(out, stream, planar: np.ndarray, sample_rate_hz: int, frame_samples: int) -> None:
    """Encode float samples (channels x n, planar) into the PyAV audio `stream` of container `out`,
    `frame_samples` per frame with pts in samples, and flush the encoder (AAC, MP3 alike)."""
    import av

    for s in range(0, planar.shape[1], frame_samples):
        af = av.AudioFrame.from_ndarray(planar[:, s:s + frame_samples], format="fltp", layout=stream.layout.name)
        af.sample_rate = sample_rate_hz
        af.pts = s
        for pkt in stream.encode(af):
            out.mux(pkt)
    for pkt in stream.encode():
        out.mux(pkt)


def busy_background(width_px: int, height_px: int, seed: int) -> np.ndarray:
    """A smooth colour gradient with blobs and noise: busier than a flat plate, like footage, so an
    OCR detector has more than the caption to sort out (tests/measure/test_ocr_sizes.py, bench)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height_px, 0:width_px].astype(np.float32)
    img = np.stack([80 + 60 * np.sin(x / width_px * 3 + seed), 90 + 50 * np.cos(y / height_px * 4),
                    100 + 40 * np.sin((x + y) / (width_px + height_px) * 5)], axis=-1)
    for _ in range(6):
        cx, cy, r = rng.uniform(0, width_px), rng.uniform(0, height_px), rng.uniform(0.05, 0.2) * width_px
        img[(x - cx) ** 2 + (y - cy) ** 2 < r * r] += rng.uniform(-50, 50, 3)
    img += rng.normal(0, 6, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def resize(frame: np.ndarray, width_px: int, height_px: int) -> np.ndarray:
    return cv2.resize(frame, (width_px, height_px), interpolation=cv2.INTER_AREA)


def warm(frame: np.ndarray, amount: float = 18.0) -> np.ndarray:
    """A 'Warm' preset stand-in: red up, blue down (raises CIELAB b*)."""
    f = frame.astype(np.float32)
    f[..., 0] += amount * 0.6
    f[..., 2] -= amount
    return np.clip(f, 0, 255).astype(np.uint8)


def burn_text(frame: np.ndarray, text: str, *, y_px: int | None = None, x_px: int | None = None,
              scale: float = 0.8, colour: tuple[int, int, int] = (255, 255, 255), thickness: int = 2,
              box: bool = True) -> np.ndarray:
    """Latin text drawn with OpenCV on a dark box (centred unless x_px is given); returns a copy."""
    f = frame.copy()
    (tw, th), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thickness)
    x = (f.shape[1] - tw) // 2 if x_px is None else x_px
    y = f.shape[0] // 2 if y_px is None else y_px
    if box:
        cv2.rectangle(f, (x - 4, y - th - 4), (x + tw + 4, y + base + 2), (20, 20, 20), -1)
    cv2.putText(f, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, scale, colour, thickness, cv2.LINE_AA)
    return f
