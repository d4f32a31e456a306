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


def _picture(seed: int, width_px: int, height_px: int) -> np.ndarray:
    """A made-up frame of a source clip: the bright blurred-noise scene scaled up."""
    import cv2

    return cv2.resize(_scene(seed), (width_px, height_px), interpolation=cv2.INTER_CUBIC)


def _sticker(rgb: np.ndarray) -> np.ndarray:
    """A dark sticker over the middle fifth of the height, 5/8 of the width (an overlay the
    edit adds over the source)."""
    out = rgb.copy()
    h, w = rgb.shape[:2]
    out[2 * h // 5:3 * h // 5, w // 8:3 * w // 4] = 20
    return out


def test_a_sticker_over_stock_footage_still_identifies_the_shot(tmp_path) -> None:
    """T18's StockMatcher (the only stock_footage user; T03 reads no stock) takes the same identify path as ClipMatcher (clips.identify_frame)."""
    from verifiers.measure.fingerprint import match_frame
    from verifiers.synthkit.shortform_video import write_video
    from verifiers.tasks.shortform._shared.stock_footage import StockMatcher, placements

    frames = [_picture(seed, 320, 180) for seed in (11, 12, 13, 14)]  # landscape stock, 4 moments
    write_video(tmp_path / "shot.mp4", frames, 4.0)
    matcher = StockMatcher({"shot": tmp_path / "shot.mp4"}, 90, 160)
    canvas = placements(frames[2], 160, 284)["fill"]  # filled on a 9:16 canvas, 160 px wide
    query = _sticker(canvas)
    assert max(match_frame(matcher.crop(query, r), ix).ncc for r, ix in matcher.index.items()) < MIN_NCC
    m, _ = matcher.identify(query)
    assert m.ncc >= MIN_NCC and matcher.labels[m.index] == "shot" and m.t_s == 0.5
    assert matcher.identify(_sticker(placements(_picture(99, 320, 180), 160, 284)["fill"]))[0].ncc < MIN_NCC


def test_a_sticker_over_the_trailers_bottom_half_still_dates_it() -> None:
    """T16 finds the trailer's moment from the bottom half of the frame through clips.identify_frame."""
    from verifiers.measure.fingerprint import FrameIndex, match_frame
    from verifiers.tasks.shortform.t16_reaction_pip import Trailer

    frames = [_picture(seed, 160, 90) for seed in (21, 22, 23, 24)]
    trailer = Trailer(frames, FrameIndex.from_frames([f[45:] for f in frames], [0.0, 0.5, 1.0, 1.5]))
    query = frames[2].copy()
    query[45:] = _sticker(query[45:])
    assert match_frame(query[45:], trailer.index).ncc < MIN_NCC
    m = trailer.moment(query)
    assert m is not None and m.index == 2
    assert trailer.moment(_picture(98, 160, 90)) is None


def _fill_clip(seed: int) -> list[np.ndarray]:
    """48 frames of a synthetic clip as a 9:16 slot filled with it shows them (160-px frames, centre
    cut): mostly gradient and flat rectangles, so clips of other seeds look alike."""
    from verifiers.synthkit.shortform_video import clip_frames
    from verifiers.tasks.shortform._shared.clips import _to_width, fill_crop

    return [fill_crop(_to_width(f, 160), 9 / 16) for f in clip_frames(seed, 48)]


def test_a_look_alike_of_another_clip_is_not_lifted_but_a_boxed_moment_is() -> None:
    """The re-score passes only at VISIBLE_MIN_NCC: a frame of clip 8 against clip 7 (plain NCC
    0.55-0.6; trimming its residual tails lifts it over MIN_NCC) stays unmatched, while a dark box
    over a frame of clip 1 (plain NCC below MIN_NCC) still finds that frame."""
    from verifiers.measure.fingerprint import FrameIndex, match_frame
    from verifiers.tasks.shortform._shared.clips import VISIBLE_MIN_NCC, identify_frame

    times_s = [i / 24 for i in range(48)]
    other = FrameIndex.from_frames(_fill_clip(7), times_s, keep=True)
    look_alike = _fill_clip(8)[15]
    plain = match_frame(look_alike, other, candidates=48)
    assert 0.55 <= plain.ncc < MIN_NCC
    assert visible_ncc(thumbnail(look_alike), other.thumbs[plain.index]) >= MIN_NCC  # what the old re-score took
    assert identify_frame(look_alike, other, exhaustive=True).ncc < MIN_NCC

    frames = _fill_clip(1)
    own = FrameIndex.from_frames(frames, times_s, keep=True)
    boxed = _sticker(frames[5])
    assert match_frame(boxed, own, candidates=48).ncc < MIN_NCC
    m = identify_frame(boxed, own, exhaustive=True)
    assert m.ncc >= VISIBLE_MIN_NCC and m.index == 5
