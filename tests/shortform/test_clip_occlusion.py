"""ClipMatcher's occlusion-robust score (issue 21: a title's dark box over a bright clip dropped the
whole-frame NCC of the right moment to 0.47): made-up thumbnails, no media."""

from __future__ import annotations

import numpy as np

from verifiers.measure.fingerprint import thumbnail
from verifiers.tasks.shortform._shared.clips import MIN_NCC, visible_ncc


def _scene(seed: int) -> np.ndarray:
    """A bright 64x36 RGB picture with smooth structure (blurred noise), like a thumbnail."""
    import cv2

    noise = np.random.default_rng(seed).uniform(0, 255, (36, 64)).astype(np.float32)
    grey = cv2.GaussianBlur(noise, (0, 0), 3.0)
    grey = 150 + 100 * (grey - grey.min()) / np.ptp(grey)
    return np.repeat(grey[..., None], 3, axis=2).astype(np.uint8)


def _ncc(a: np.ndarray, b: np.ndarray) -> float:
    return float(thumbnail(a) @ thumbnail(b))


def test_a_dark_box_over_the_right_moment_still_matches() -> None:
    src = _scene(1)
    out = src.copy()
    out[26:32, 12:52] = 20  # a title's dark box over a sixth of the height, 5/8 of the width
    assert _ncc(out, src) < MIN_NCC  # the whole frame misses (the bug)
    assert visible_ncc(thumbnail(out), thumbnail(src)) > 0.95


def test_an_unrelated_black_or_mostly_hidden_frame_does_not_match() -> None:
    src = _scene(1)
    for other in (_scene(2), _scene(3)):
        assert visible_ncc(thumbnail(other), thumbnail(src)) < MIN_NCC
        boxed = other.copy()
        boxed[26:32, 12:52] = 20
        assert visible_ncc(thumbnail(boxed), thumbnail(src)) < MIN_NCC
    black = np.zeros_like(src)
    assert visible_ncc(thumbnail(black), thumbnail(src)) == 0.0
    half = src.copy()
    half[:, :40] = 20  # 5/8 of the frame hidden (> MAX_HIDDEN_SHARE): no match
    assert visible_ncc(thumbnail(half), thumbnail(src)) < MIN_NCC
