"""verifiers.measure.zoom searches each scale once per frame (zoom_about_any_centre reuses the
template match of zoom_anywhere's best scale) and remembers a frame pair's answer by content. The
answers must be exactly those of the searches done afresh: the earlier code is kept here as the
reference, on zoomed crops (off-centre, with a caption laid over) and on a flat frame (ECC fails)."""

from __future__ import annotations

import cv2
import numpy as np

from verifiers.measure import memo, zoom


def _reference_anywhere(frame: np.ndarray, photo: np.ndarray) -> float:
    h, w = frame.shape[:2]
    fg = cv2.cvtColor(np.ascontiguousarray(frame), cv2.COLOR_RGB2GRAY).astype(np.float32)
    pg = cv2.resize(cv2.cvtColor(np.ascontiguousarray(photo), cv2.COLOR_RGB2GRAY), (w, h),
                    interpolation=cv2.INTER_AREA).astype(np.float32)
    k = zoom.COARSE_W_PX / w
    cs = (zoom.COARSE_W_PX, max(8, round(h * k)))
    fc, pc = cv2.resize(fg, cs, interpolation=cv2.INTER_AREA), cv2.resize(pg, cs, interpolation=cv2.INTER_AREA)
    coarse = max(np.arange(zoom.ZOOM_RANGE[0], zoom.ZOOM_RANGE[1] + 1e-9, 0.01),
                 key=lambda s: zoom._best_at(fc, pc, s)[0])
    fine = np.arange(max(zoom.ZOOM_RANGE[0], coarse - 0.01), min(zoom.ZOOM_RANGE[1], coarse + 0.01) + 1e-9, 0.0025)
    return float(max(fine, key=lambda s: zoom._best_at(fg, pg, s)[0]))


def _reference_about_any_centre(frame: np.ndarray, photo: np.ndarray) -> tuple[float, float]:
    h, w = frame.shape[:2]
    fg = cv2.cvtColor(np.ascontiguousarray(frame), cv2.COLOR_RGB2GRAY).astype(np.float32)
    pg = cv2.resize(cv2.cvtColor(np.ascontiguousarray(photo), cv2.COLOR_RGB2GRAY), (w, h),
                    interpolation=cv2.INTER_AREA).astype(np.float32)
    s0 = _reference_anywhere(frame, photo)
    _, (x, y) = zoom._best_at(fg, pg, s0)
    warp = np.array([[1 / s0, 0, x / s0], [0, 1 / s0, y / s0]], dtype=np.float32)
    crit = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 60, 1e-5)
    try:
        ncc, warp = cv2.findTransformECC(fg, pg, warp, cv2.MOTION_AFFINE, crit, None, 3)
        mask = zoom._explained(fg, pg, warp)
        if mask is not None:
            ncc, warp = cv2.findTransformECC(fg, pg, warp, cv2.MOTION_AFFINE, crit, mask, 3)
    except cv2.error:
        return s0, zoom._best_at(fg, pg, s0)[0]
    det = float(np.linalg.det(warp[:, :2]))
    return (1.0 / np.sqrt(det) if det > 0 else s0), float(ncc)


def _cases() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)
    photo = cv2.GaussianBlur(rng.integers(0, 256, (180, 320, 3), dtype=np.uint8), (7, 7), 0)
    out = []
    for s, (fx, fy), caption in ((1.0, (0.5, 0.5), False), (1.13, (0.3, 0.6), False), (1.24, (0.7, 0.4), True)):
        cw, ch = round(320 / s), round(180 / s)
        x0, y0 = round(fx * (320 - cw)), round(fy * (180 - ch))
        frame = cv2.resize(photo[y0:y0 + ch, x0:x0 + cw], (320, 180), interpolation=cv2.INTER_AREA)
        if caption:
            cv2.putText(frame, "FAST", (100, 150), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (255, 255, 255), 3)
        out.append((frame, photo))
    out.append((np.full((180, 320, 3), 90, np.uint8), photo))  # flat: ECC cannot align it
    return out


def test_the_searches_give_the_answers_of_the_earlier_code():
    memo.clear()
    for frame, photo in _cases():
        assert zoom.zoom_anywhere(frame, photo) == _reference_anywhere(frame, photo)
        want = _reference_about_any_centre(frame, photo)
        assert zoom.zoom_about_any_centre(frame, photo) == want
        assert zoom.zoom_about_any_centre(frame.copy(), photo.copy()) == want  # remembered by content
