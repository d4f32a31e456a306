"""Zoom helpers for short-form tasks: synthetic zooms and zoomed index variants (the zoom
measurement itself is `verifiers.measure.zoom`)."""

from __future__ import annotations

import cv2
import numpy as np


def zoomed(photo: np.ndarray, s: float, centre: tuple[float, float] = (0.5, 0.5)) -> np.ndarray:
    """`photo` zoomed in by `s` about the point `centre` (fractions of width and height), which stays put."""
    h, w = photo.shape[:2]
    cx, cy = centre[0] * w, centre[1] * h
    m = np.array([[s, 0, (1 - s) * cx], [0, s, (1 - s) * cy]], dtype=np.float32)
    return cv2.warpAffine(photo, m, (w, h), flags=cv2.INTER_LINEAR)


def zoom_variants(photo: np.ndarray, scales: tuple[float, ...] = (1.1, 1.2)) -> list[np.ndarray]:
    """The photo zoomed in by each scale towards its centre and each corner: index entries so a
    frame deep into a slow zoom (any anchor) is still recognised as its photo."""
    h, w = photo.shape[:2]
    out = []
    for s in scales:
        cw, ch = round(w / s), round(h / s)
        for fx, fy in ((0.5, 0.5), (0, 0), (1, 0), (0, 1), (1, 1)):
            x0, y0 = round((w - cw) * fx), round((h - ch) * fy)
            out.append(cv2.resize(photo[y0:y0 + ch, x0:x0 + cw], (w, h), interpolation=cv2.INTER_AREA))
    return out
