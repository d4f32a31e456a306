"""How far a frame is zoomed into a photo (centre crop scale), and the zoom itself for synthetic exports."""

from __future__ import annotations

import cv2
import numpy as np


def zoom_of(frame: np.ndarray, photo: np.ndarray) -> float:
    """Scale of the centre crop of `photo` that best matches `frame` (1.0 = whole photo)."""
    h, w = frame.shape[:2]
    ph = cv2.resize(photo, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32)
    f = frame.astype(np.float32).ravel()
    f -= f.mean()
    best, best_s = -2.0, 1.0
    for s in np.arange(1.0, 1.30, 0.0025):
        cw, ch = w / s, h / s
        x0, y0 = (w - cw) / 2, (h - ch) / 2
        m = np.array([[s, 0, -x0 * s], [0, s, -y0 * s]], dtype=np.float32)
        q = cv2.warpAffine(ph, m, (w, h), flags=cv2.INTER_LINEAR).ravel()
        q = q - q.mean()
        c = float(f @ q / (np.linalg.norm(f) * np.linalg.norm(q) + 1e-9))
        if c > best:
            best, best_s = c, float(s)
    return best_s


def zoomed(photo: np.ndarray, s: float) -> np.ndarray:
    h, w = photo.shape[:2]
    x0, y0 = (w - w / s) / 2, (h - h / s) / 2
    m = np.array([[s, 0, -x0 * s], [0, s, -y0 * s]], dtype=np.float32)
    return cv2.warpAffine(photo, m, (w, h), flags=cv2.INTER_LINEAR)
