"""Helpers behind T08 and T11: synthetic words are speech to Silero, the ordered word search finds
kept words where they landed and misses a cut one, the vectorised strip NCC equals OpenCV's
TM_CCOEFF_NORMED, and speed-ramp positions advance at the asked speed."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from verifiers.measure.identify import match_at
from verifiers.measure.vad import speech_probability
from verifiers.synthkit.t08_speech import word
from verifiers.synthkit.t11_kickflip import ramp_curve, ramp_positions
from verifiers.tasks.shortform.t08_tighten_broll import MIN_WORD_NCC, find_words, long_pauses
from verifiers.tasks.shortform.t11_speed_ramp import largest_speed_jump, ncc_near

SR = 16000


def test_synthetic_words_are_speech_and_tones_are_not():
    rng = np.random.default_rng(3)
    words = [word(rng, 3, SR) for _ in range(4)]
    gap = np.zeros(int(0.15 * SR))
    x = np.concatenate([np.zeros(SR // 2), *[np.concatenate([w, gap]) for w in words], np.zeros(SR // 2)])
    t, p = speech_probability(x, SR)
    speech = (t > 0.6) & (t < len(x) / SR - 0.7)
    assert np.median(p[speech]) > 0.9
    assert np.max(p[t < 0.4]) < 0.2
    tone = 0.4 * np.sin(2 * np.pi * 220 * np.arange(3 * SR) / SR)
    assert np.median(speech_probability(tone, SR)[1]) < 0.2


def test_words_are_mutually_distinct_audio():
    """A cut word must not be "found" as another word: cross-word NCC stays well under the 0.8 bar."""
    rng = np.random.default_rng(4)
    words = [word(rng, int(rng.integers(2, 4)), SR, f0_hz=float(rng.uniform(105, 135))) for _ in range(5)]
    worst = 0.0
    for i, a in enumerate(words):
        for j, b in enumerate(words):
            if i != j:
                mix = np.concatenate([np.zeros(SR), b, np.zeros(SR)])
                m = match_at(mix, SR, {"a": a}, 1.0, search_s=0.9, length_s=len(a) / SR)[0]
                worst = max(worst, m.ncc)
    assert worst < MIN_WORD_NCC - 0.1


def _utterance(rng, n_words: int) -> tuple[np.ndarray, list[dict]]:
    parts, words, t = [np.zeros(SR // 4)], [], 0.25
    for i in range(n_words):
        w = word(rng, 2, SR)
        words.append({"word": f"w{i}", "start_s": t, "end_s": t + len(w) / SR})
        gap = np.zeros(int(0.8 * SR) if i % 2 else int(0.15 * SR))
        parts += [w, gap]
        t += (len(w) + len(gap)) / SR
    return np.concatenate(parts), words


def test_find_words_follows_cuts_and_misses_a_cut_word():
    rng = np.random.default_rng(5)
    src, words = _utterance(rng, 5)
    # tighten: drop 0.5 s from the middle of each long gap, and cut word 2 entirely
    keep = np.ones(len(src), bool)
    for i in (1, 3):
        mid = (words[i]["end_s"] + words[i + 1]["start_s"]) / 2
        keep[int((mid - 0.25) * SR):int((mid + 0.25) * SR)] = False
    keep[int(words[2]["start_s"] * SR):int(words[2]["end_s"] * SR)] = False
    export = src[keep]
    removed_before = np.cumsum(~keep)
    found = find_words(export, src, SR, words)
    assert [f["at_s"] is None for f in found] == [False, False, True, False, False]
    for w, f in zip(words, found, strict=True):
        if f["at_s"] is not None:
            i = int(w["start_s"] * SR)
            assert f["at_s"] == pytest.approx((i - removed_before[i]) / SR, abs=0.005)
            assert f["ncc"] > 0.99


def test_long_pauses_lists_only_gaps_over_the_limit():
    from verifiers.measure.vad import SpeechSegment

    segs = [SpeechSegment(0.0, 1.0, 0.9), SpeechSegment(1.3, 2.0, 0.9), SpeechSegment(2.6, 3.0, 0.9)]
    assert long_pauses(segs, 0.45) == [[2.0, 2.6]]


def test_ncc_near_equals_opencv():
    rng = np.random.default_rng(6)
    frames = rng.integers(0, 255, (5, 72, 128), dtype=np.uint8)
    tmpl = frames[3, :, 30:70].copy()
    got = ncc_near(frames, tmpl, 25, 35)
    for j in range(5):
        ref = cv2.matchTemplate(frames[j], tmpl, cv2.TM_CCOEFF_NORMED)[0, 25:36]
        np.testing.assert_allclose(got[j], ref, atol=2e-4)
    assert np.unravel_index(np.argmax(got), got.shape) == (3, 5)


def test_ramp_positions_speed():
    pos = np.array(ramp_positions(ramp_curve(1000, 1100), 0, 1400, 240.0, 30.0))
    step = np.diff(pos) / 8.0  # source frames per output frame / (240/30) = speed
    assert np.allclose(step[pos[:-1] < 880], 2.0)
    assert np.allclose(step[(pos[:-1] >= 1000) & (pos[:-1] <= 1100)], 0.3)
    assert np.max(np.abs(np.diff(step))) < 0.3  # cosine ramps: well under the 0.5 limit
    abrupt = np.diff(ramp_positions(ramp_curve(1000, 1100, ramp_frames=0), 0, 1400, 240.0, 30.0)) / 8.0
    assert np.max(np.abs(np.diff(abrupt))) == pytest.approx(1.7)


def test_speed_jump_ignores_one_mismatched_frame_but_not_a_step():
    step = np.cumsum([16.0] * 10 + [2.4] * 10)  # 2x then 0.3x at 240 -> 30 fps: 2, 1.15, 0.3
    ok = np.ones(len(step), bool)
    worst, at = largest_speed_jump(step, ok, 30 / 240)
    assert worst == pytest.approx(0.85) and at in (8, 9)
    smooth = np.array(ramp_positions(ramp_curve(1000, 1100), 0, 1400, 240.0, 30.0))
    glitch = smooth.copy()
    glitch[40] += 30  # one frame matched 30 source frames off
    assert largest_speed_jump(glitch, np.ones(len(glitch), bool), 30 / 240)[0] == pytest.approx(
        largest_speed_jump(smooth, np.ones(len(smooth), bool), 30 / 240)[0], abs=0.01)
    assert largest_speed_jump(step, np.zeros(len(step), bool), 30 / 240)[0] == float("inf")
