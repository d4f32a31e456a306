"""T01's coarse strip search bounds every source frame's score by an FFT estimate and scores with
OpenCV only the frames that can reach the top candidates: it must pick the same candidates with the
same scores as scoring every source frame with OpenCV (the search it replaced; frames with exactly
equal scores may be ordered either way, as numpy's unstable argsort did), including on flat sources
where no bound is trusted."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from verifiers.synthkit.shortform_video import clip_frames, write_video
from verifiers.tasks.shortform.t01_reframe_short import CANDIDATES, StripLocator

FPS = 24.0


def _same_candidates(loc: StripLocator, tmpl: np.ndarray) -> np.ndarray:
    """The top CANDIDATES of `_coarse_scores` are those of OpenCV on every source frame (the search
    before the cut), score for score; bounds never below OpenCV's score."""
    full = np.array([cv2.minMaxLoc(cv2.matchTemplate(s, tmpl, cv2.TM_CCOEFF_NORMED))[1] for s in loc.small])
    got = loc._coarse_scores(tmpl)
    top = np.argsort(got)[::-1][:CANDIDATES]
    assert np.array_equal(got[top], full[top])  # the visited frames carry OpenCV's own score
    assert np.array_equal(got[top], np.sort(full)[::-1][:CANDIDATES])
    assert (loc._upper_bounds(tmpl) >= full).all()
    return got


@pytest.fixture(scope="module")
def locator(tmp_path_factory) -> StripLocator:
    frames = clip_frames(5, 72, 320, 180, FPS)
    for f in frames[::9]:
        f[:, :160] = 90  # flat halves: windows the estimate does not trust
    return StripLocator(write_video(tmp_path_factory.mktemp("t01") / "src.mp4", frames, FPS))


@pytest.mark.parametrize("frame", [3, 18, 40, 63])
@pytest.mark.parametrize("x0_px", [0, 11, 27])
def test_coarse_candidates_equal_opencv_on_every_frame(locator, frame, x0_px):
    grey = locator.small[frame][:, x0_px:x0_px + 25].astype(np.int16)
    grey = np.clip(grey + np.random.default_rng(frame + x0_px).integers(-6, 7, grey.shape), 0, 255).astype(np.uint8)
    got = _same_candidates(locator, grey)
    assert np.isfinite(got).sum() < len(locator.small) / 2  # it did skip frames


def test_flat_template_scores_every_frame(locator):
    flat = np.full((45, 25), 77, np.uint8)
    flat[0, :5] = 78  # grey std 0.15: below RANK_MIN_STD_GREY
    got = _same_candidates(locator, flat)
    assert np.isfinite(got).all()  # no bound: OpenCV scored every frame
