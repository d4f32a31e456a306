"""Hard-cut detection: where one shot ends and the next begins.

The content measure of PySceneDetect's ContentDetector (mean absolute frame-to-frame difference of
hue, saturation and value on a small thumbnail, 0–255) with its AdaptiveDetector decision: a frame
is a cut when its content change is at least `min_content` and `adaptive_ratio` times the average
change of the `window` frames on either side. Camera motion and noise raise the neighbours too, so
they do not fire; a cut is a lone spike. PySceneDetect itself is not a dependency; the measurement
notes found its Content/Adaptive detectors exact on hard cuts (HashDetector gave false cuts).
Dissolves and fades are not hard cuts and are not reported.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from verifiers.measure.frames import iter_frames


@dataclass(frozen=True)
class Cut:
    frame: int  # index of the first frame of the new shot (decode order)
    t_s: float  # its presentation time
    content: float  # HSV change at the cut (0..255)
    ratio: float  # content / mean of the neighbours' content


def content_changes(frames_rgb: Iterable[np.ndarray]) -> np.ndarray:
    """HSV mean absolute difference between each frame and the previous one (first = 0)."""
    out = [0.0]
    prev = None
    for rgb in frames_rgb:
        hsv = cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2HSV_FULL).astype(np.int16)
        if prev is not None:
            out.append(float(np.abs(hsv - prev).mean()))
        prev = hsv
    return np.array(out[: max(1, len(out))])


def cuts_from_changes(changes: np.ndarray, times_s: np.ndarray, *, min_content: float = 15.0,
                      adaptive_ratio: float = 3.0, window: int = 2, min_shot_frames: int = 5) -> list[Cut]:
    cuts: list[Cut] = []
    n = len(changes)
    for i in range(1, n):
        lo, hi = max(1, i - window), min(n, i + window + 1)
        neigh = [changes[j] for j in range(lo, hi) if j != i]
        base = float(np.mean(neigh)) if neigh else 0.0
        ratio = changes[i] / max(base, 1e-6)
        if changes[i] >= min_content and ratio >= adaptive_ratio:
            if cuts and i - cuts[-1].frame < min_shot_frames:
                continue
            cuts.append(Cut(frame=i, t_s=float(times_s[i]), content=float(changes[i]), ratio=float(ratio)))
    return cuts


def detect_cuts(path: str | Path, *, thumb_width: int = 160, min_content: float = 15.0,
                adaptive_ratio: float = 3.0, window: int = 2, min_shot_frames: int = 5) -> list[Cut]:
    """Hard cuts of a video file's first video stream (decodes every frame as a small thumbnail)."""
    times: list[float] = []
    thumbs: list[np.ndarray] = []
    for frame in iter_frames(path, width=thumb_width, height=None):
        times.append(frame.t_s)
        thumbs.append(frame.rgb)
    changes = content_changes(thumbs)
    return cuts_from_changes(changes, np.array(times), min_content=min_content, adaptive_ratio=adaptive_ratio,
                             window=window, min_shot_frames=min_shot_frames)
