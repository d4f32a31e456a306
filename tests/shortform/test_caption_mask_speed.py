"""caption_track.caption_mask computes its channel difference with cv2.absdiff on uint8 and skips the
speck filter's lookup when there is no speck; the mask must be exactly the one of the plain formula
(int16 difference, channel max, components of >= 3 px), on random frames with captions, noise and specks."""

from __future__ import annotations

import cv2
import numpy as np

from verifiers.tasks.shortform._shared.caption_track import DIFF_LEVEL, caption_mask, changed_channels


def _plain(export_rgb: np.ndarray, source_rgb: np.ndarray) -> np.ndarray:
    d = np.abs(export_rgb.astype(np.int16) - source_rgb.astype(np.int16)).max(axis=2) > DIFF_LEVEL
    n, lab, stats, _ = cv2.connectedComponentsWithStats(d.astype(np.uint8), connectivity=8)
    keep = np.zeros(n, bool)
    keep[1:] = stats[1:, cv2.CC_STAT_AREA] >= 3
    return keep[lab]


def test_the_mask_is_the_plain_formulas():
    rng = np.random.default_rng(11)
    kinds = set()
    for _ in range(300):
        h, w = (int(v) for v in rng.integers(1, 48, 2))
        src = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        exp = src.copy()
        changed = rng.random((h, w)) < rng.random()
        exp[changed] = rng.integers(0, 256, (int(changed.sum()), 3), dtype=np.uint8)
        got, want = caption_mask(exp, src), _plain(exp, src)
        assert got.dtype == bool and got.shape == want.shape and np.array_equal(got, want)
        d = np.abs(exp.astype(np.int16) - src.astype(np.int16)).max(axis=2)
        assert np.array_equal(changed_channels(exp, src), d)
        kinds.add((bool(want.any()), bool(np.array_equal(want, d > DIFF_LEVEL))))
    assert {(False, True), (True, True), (True, False)} <= kinds  # empty, no specks, specks dropped
