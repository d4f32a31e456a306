"""YIN (verifiers.measure.yin) on a Doppler pass and a slide-whistle glissando whose true f0(t) is
known by construction: the conformance side of the tracker tests in tests/sound/test_yin.py."""

from __future__ import annotations

import numpy as np
import pytest

from verifiers.measure.yin import yin

SR = 48000


def _synth(f_of_t: np.ndarray, harmonics: int = 1) -> np.ndarray:
    phase = 2 * np.pi * np.cumsum(f_of_t) / SR
    return sum(np.sin(k * phase) / k for k in range(1, harmonics + 1))


def _truth_at(track_t: np.ndarray, f_of_t: np.ndarray) -> np.ndarray:
    return np.interp(track_t, np.arange(len(f_of_t)) / SR, f_of_t)


def _cents(track, f_of_t: np.ndarray) -> np.ndarray:
    return 1200 * np.log2(track.f0_hz / _truth_at(track.times_s, f_of_t))


def test_doppler_pass_within_cents() -> None:
    # 440 Hz source passing at 30 m/s, closest approach 10 m at t = 2 s, c = 343 m/s
    t = np.arange(4 * SR) / SR
    x_m = 30.0 * (t - 2.0)
    v_radial = 30.0 * x_m / np.hypot(x_m, 10.0)  # positive = receding
    f = 440.0 * 343.0 / (343.0 + v_radial)
    track = yin(_synth(f, 4) * 0.3, SR, fmin_hz=200, fmax_hz=1000)
    cents = np.abs(_cents(track, f))
    voiced = np.isfinite(cents)
    assert voiced.mean() > 0.98
    assert np.median(cents[voiced]) < 2.0
    assert np.percentile(cents[voiced], 95) < 10.0


def test_slide_whistle_glissando() -> None:
    t = np.arange(3 * SR) / SR
    f = 500.0 * 3.0 ** (np.clip(t - 0.5, 0, 2) / 2)  # 500 → 1500 Hz over 2 s, held at both ends
    track = yin(_synth(f, 2) * 0.5 + np.random.default_rng(0).standard_normal(len(t)) * 0.01, SR,
                fmin_hz=300, fmax_hz=2500)
    cents = np.abs(_cents(track, f))
    assert np.nanmedian(cents) < 3.0
    assert np.nanmean(cents < 20) > 0.95


def test_noise_is_unvoiced() -> None:
    x = np.random.default_rng(1).standard_normal(SR)
    track = yin(x, SR)
    assert np.mean(np.isnan(track.f0_hz)) > 0.9


def test_bad_frame_length_raises() -> None:
    with pytest.raises(ValueError):
        yin(np.zeros(SR), SR, fmin_hz=50, frame_length=512)
