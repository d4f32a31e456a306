"""How far a frame is zoomed into a picture: the scale of the crop of the picture it shows.

Measurement for any task that judges a punch-in or a slow zoom (short-form T04 photo zooms, T07
punch-ins): whole-pixel template matching finds the crop to about 1 %, an ECC affine alignment
refines it to sub-pixel. Kept here, not in a task's helpers, so tasks share it without importing
each other.
"""

from __future__ import annotations

import cv2
import numpy as np

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
    return _anywhere(*_greys(frame, photo))[0]


def _greys(frame: np.ndarray, photo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The frame and the photo (resized to the frame) as float32 grey, as both searches use them."""
    h, w = frame.shape[:2]
    fg = cv2.cvtColor(np.ascontiguousarray(frame), cv2.COLOR_RGB2GRAY).astype(np.float32)
    pg = cv2.resize(cv2.cvtColor(np.ascontiguousarray(photo), cv2.COLOR_RGB2GRAY), (w, h),
                    interpolation=cv2.INTER_AREA).astype(np.float32)
    return fg, pg


def _anywhere(fg: np.ndarray, pg: np.ndarray) -> tuple[float, tuple[float, tuple[int, int]]]:
    """zoom_anywhere on the greys: (scale, its full-size `_best_at`), so a caller that needs where
    the crop is does not search that scale again."""
    h, w = fg.shape
    k = COARSE_W_PX / w
    cs = (COARSE_W_PX, max(8, round(h * k)))
    fc, pc = cv2.resize(fg, cs, interpolation=cv2.INTER_AREA), cv2.resize(pg, cs, interpolation=cv2.INTER_AREA)
    coarse = max(np.arange(ZOOM_RANGE[0], ZOOM_RANGE[1] + 1e-9, 0.01), key=lambda s: _best_at(fc, pc, s)[0])
    fine = np.arange(max(ZOOM_RANGE[0], coarse - 0.01), min(ZOOM_RANGE[1], coarse + 0.01) + 1e-9, 0.0025)
    s, best = max(((s, _best_at(fg, pg, s)) for s in fine), key=lambda sb: sb[1][0])  # the first best, as before
    return float(s), best


#: grey levels by which a pixel may differ from the aligned photo (gain and offset fitted) and still
#: be the photo: far above 8-bit codec and resampling error (a few levels), far below what a caption
#: or sticker over the zoom differs by. Such pixels skew the affine fit by 1-2 % of scale
#: (short-form T07 at seed 7: a keyword popped over a 124 % punch-in read as 126.6 %)
NOT_PHOTO_LEVELS = 48.0
NOT_PHOTO_GROW_PX = 2  # the mask grows this much around them (anti-aliased edges of the text)
MIN_EXPLAINED_SHARE = 0.5  # fewer explained pixels than this: the first pass is kept as it is


def _explained(fg: np.ndarray, pg: np.ndarray, warp: np.ndarray) -> np.ndarray | None:
    """Mask (uint8) of the frame's pixels the aligned photo explains (ECC's correlation ignores
    gain and offset, so they are fitted first); None when all are explained or too few."""
    h, w = fg.shape
    pred = cv2.warpAffine(pg, warp, (w, h), flags=cv2.INTER_LINEAR + cv2.WARP_INVERSE_MAP,
                          borderMode=cv2.BORDER_REPLICATE)
    a, b = np.polyfit(pred.ravel(), fg.ravel(), 1)
    bad = (np.abs(fg - (a * pred + b)) > NOT_PHOTO_LEVELS).astype(np.uint8)
    if not bad.any():
        return None
    k = 2 * NOT_PHOTO_GROW_PX + 1
    keep = 1 - cv2.dilate(bad, np.ones((k, k), np.uint8))
    return keep.astype(np.uint8) if keep.mean() >= MIN_EXPLAINED_SHARE else None


def zoom_about_any_centre(frame: np.ndarray, photo: np.ndarray) -> tuple[float, float]:
    """(scale, NCC) of the zoom of `photo` (about any centre) that `frame` shows.

    `zoom_anywhere` gives the scale to about 1 %: its integer canvas sizes and integer template
    positions cannot place a crop to a fraction of a pixel. Here that estimate seeds an ECC
    alignment (OpenCV `findTransformECC`, affine, correlation-based so a grade does not matter)
    that refines scale and offset to sub-pixel; the scale is sqrt(det) of the frame-to-photo map
    inverted. Returns the refined NCC too, so a caller can tell a frame that is not the photo.

    Remembered by content (verifiers.measure.memo: both frames' pixels): a self-test's oracle,
    mutants and exports share many decoded frames (those before a mutant's change decode to the same
    pixels), and this search is most of a zoom scorer's time."""
    from verifiers.measure.memo import memo

    return memo("zoom_about_any_centre", (frame, photo), lambda: _about_any_centre(frame, photo))


def _about_any_centre(frame: np.ndarray, photo: np.ndarray) -> tuple[float, float]:
    """zoom_about_any_centre, computed."""
    fg, pg = _greys(frame, photo)
    s0, (mx0, (x, y)) = _anywhere(fg, pg)
    # frame pixel u shows photo pixel (u + loc) / s0
    warp = np.array([[1 / s0, 0, x / s0], [0, 1 / s0, y / s0]], dtype=np.float32)
    crit = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 60, 1e-5)
    try:
        ncc, warp = cv2.findTransformECC(fg, pg, warp, cv2.MOTION_AFFINE, crit, None, 3)
        mask = _explained(fg, pg, warp)
        if mask is not None:  # second pass on the pixels the photo explains
            ncc, warp = cv2.findTransformECC(fg, pg, warp, cv2.MOTION_AFFINE, crit, mask, 3)
    except cv2.error:  # flat frame or no convergence: keep the template-match estimate
        return s0, mx0
    det = float(np.linalg.det(warp[:, :2]))
    return (1.0 / np.sqrt(det) if det > 0 else s0), float(ncc)
