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


COARSE_W_PX = 64  # coarse search width: scale steps of 1 % are still 0.6 px apart there
ZOOM_RANGE = (1.0, 1.30)


def _best_at(frame_g: np.ndarray, photo_g: np.ndarray, s: float) -> tuple[float, tuple[int, int]]:
    """Best NCC of the frame against the photo scaled by s (any position) and where."""
    h, w = frame_g.shape
    big = cv2.resize(photo_g, (max(w, round(w * s)), max(h, round(h * s))), interpolation=cv2.INTER_AREA)
    res = cv2.matchTemplate(big, frame_g, cv2.TM_CCOEFF_NORMED)
    _, mx, _, loc = cv2.minMaxLoc(res)
    return float(mx), loc


def zoom_anywhere(frame: np.ndarray, photo: np.ndarray) -> float:
    """Scale of the crop of `photo` (any position, same aspect) that best matches `frame`.

    Why not `zoom_of`: a slow zoom need not be centred (ffmpeg's zoompan anchors top-left unless
    told otherwise; apps offer Ken Burns towards a corner). The frame is template-matched in the
    photo scaled by s: coarse on 64-px-wide greys in 1 % steps, then at full size in 0.25 % steps
    around the coarse best."""
    h, w = frame.shape[:2]
    fg = cv2.cvtColor(np.ascontiguousarray(frame), cv2.COLOR_RGB2GRAY).astype(np.float32)
    pg = cv2.resize(cv2.cvtColor(np.ascontiguousarray(photo), cv2.COLOR_RGB2GRAY), (w, h),
                    interpolation=cv2.INTER_AREA).astype(np.float32)
    k = COARSE_W_PX / w
    cs = (COARSE_W_PX, max(8, round(h * k)))
    fc, pc = cv2.resize(fg, cs, interpolation=cv2.INTER_AREA), cv2.resize(pg, cs, interpolation=cv2.INTER_AREA)
    coarse = max(np.arange(ZOOM_RANGE[0], ZOOM_RANGE[1] + 1e-9, 0.01), key=lambda s: _best_at(fc, pc, s)[0])
    fine = np.arange(max(ZOOM_RANGE[0], coarse - 0.01), min(ZOOM_RANGE[1], coarse + 0.01) + 1e-9, 0.0025)
    return float(max(fine, key=lambda s: _best_at(fg, pg, s)[0]))


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
