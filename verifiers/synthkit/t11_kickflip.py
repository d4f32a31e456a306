"""A miniature 240 fps "kickflip" source and speed-ramp renders of it, for the short-form T11 instance.

The source is landscape (128x72): a fixed background, a skater (body, head, board) rolling left to
right who jumps between takeoff and landing while the board flips, and a band of random blocks at
the bottom that changes every frame. At 240 fps neighbouring frames of real footage are nearly
identical; the band makes every source frame identifiable from any vertical crop, so a scorer can
map each output frame to its source frame index by image matching alone.

A render is a list of fractional source positions (one per output frame, from a speed curve) and
a vertical crop per frame; frames are the nearest source frame (no frame blending).
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np

BAND_H_PX = 8  # two rows of random 2-px blocks: any 9:16 strip shows ~40 random bits
BLOCK_PX = 2


def skater_source(rng: np.random.Generator, n_frames: int, takeoff: int, landing: int,
                  width_px: int = 128, height_px: int = 72) -> tuple[list[np.ndarray], list[list[int]]]:
    """(RGB frames, skater bbox [x, y, w, h] per frame in source px)."""
    yy, _xx = np.mgrid[0:height_px, 0:width_px]
    bg = np.empty((height_px, width_px, 3), np.uint8)
    bg[...] = (np.array([90, 140, 200]) * (1 - yy / height_px)[..., None] + 40).clip(0, 255).astype(np.uint8)
    ground = int(height_px * 0.72)
    bg[ground:] = (120, 110, 100)
    for _ in range(10):  # fixed scenery: tells where a crop sits
        x0, y0 = int(rng.integers(0, width_px)), int(rng.integers(0, ground - 4))
        c = tuple(int(v) for v in rng.integers(0, 255, size=3))
        cv2.rectangle(bg, (x0, y0), (x0 + int(rng.integers(3, 12)), y0 + int(rng.integers(3, 16))), c, -1)
    band = rng.integers(0, 2, size=(n_frames, 2, width_px // BLOCK_PX + 1)).astype(np.uint8) * 255
    frames, boxes = [], []
    air = max(1, landing - takeoff)
    for i in range(n_frames):
        f = bg.copy()
        cx = 24 + 80 * i / n_frames
        lift = 0.0
        if takeoff <= i <= landing:
            u = (i - takeoff) / air
            lift = 4 * 22 * u * (1 - u)  # 22 px at the top of the jump
        feet = ground - 2 - lift
        bw, bh = 8, 14
        x0, y0 = round(cx - bw / 2), round(feet - bh)
        cv2.rectangle(f, (x0, y0 + 4), (x0 + bw, y0 + bh), (230, 110, 40), -1)
        cv2.circle(f, (round(cx), y0 + 2), 3, (240, 200, 170), -1)
        angle = 0.0 if lift == 0 else 2 * np.pi * (i - takeoff) / air  # one flip in the air
        half = 6 * np.cos(angle)
        cv2.line(f, (round(cx - 6), round(feet + 1 - half / 3)),
                 (round(cx + 6), round(feet + 1 + half / 3)), (30, 30, 30), 2)
        rows = np.repeat(np.repeat(band[i], BLOCK_PX, axis=1)[:, :width_px], BAND_H_PX // 2, axis=0)
        f[height_px - BAND_H_PX:] = rows[..., None]
        frames.append(f)
        boxes.append([round(cx - 6), y0, 12, bh + 3])  # board width, head to board
    return frames, boxes


def ramp_positions(speed_at: Callable[[float], float], start: float, end: float, src_fps: float,
                   out_fps: float) -> list[float]:
    """Source positions of output frames: ds/dt = speed(s) · src_fps, from `start` until `end`."""
    step = src_fps / out_fps
    out, s = [], float(start)
    while s < end:
        out.append(s)
        s += speed_at(s) * step
    return out


def ramp_curve(slow_from: int, slow_to: int, fast: float = 2.0, slow: float = 0.3,
               ramp_frames: int = 120) -> Callable[[float], float]:
    """`fast` outside, `slow` on [slow_from, slow_to], cosine ramps of `ramp_frames` source frames
    just outside the slow window (ramp_frames=0: abrupt jumps)."""
    def speed(s: float) -> float:
        if slow_from <= s <= slow_to:
            return slow
        d = slow_from - s if s < slow_from else s - slow_to
        if ramp_frames <= 0 or d >= ramp_frames:
            return fast
        w = 0.5 - 0.5 * np.cos(np.pi * d / ramp_frames)
        return slow + (fast - slow) * w
    return speed


def render(frames: list[np.ndarray], boxes: list[list[int]], positions: list[float], size_px: tuple[int, int],
           follow: bool = True) -> list[np.ndarray]:
    """Vertical full-height crops (9:16 of the source height) at `size_px` (w, h); the crop centres on
    the skater when `follow`, else stays in the middle of the source."""
    h, w = frames[0].shape[:2]
    cw = round(h * 9 / 16)
    out = []
    for s in positions:
        i = min(len(frames) - 1, round(s))
        x, _y, bw, _bh = boxes[i]
        cx = x + bw / 2 if follow else w / 2
        x0 = int(np.clip(round(cx - cw / 2), 0, w - cw))
        out.append(cv2.resize(frames[i][:, x0:x0 + cw], size_px, interpolation=cv2.INTER_LINEAR))
    return out
