"""Spectral/spatial measures against signals whose answers are known by construction."""

from __future__ import annotations

import numpy as np
import pytest

from verifiers.measure.spectral import (
    energy_vector_azimuth_deg,
    interchannel_correlation,
    long_term_centroid_hz,
    lr_energy_ratio_db,
    spectral_centroid_hz,
    third_octave_levels_db,
)

SR = 48000


def _sine(f: float, s: float = 1.0, amp: float = 1.0) -> np.ndarray:
    return amp * np.sin(2 * np.pi * f * np.arange(int(s * SR)) / SR)


def test_centroid_is_power_weighted() -> None:
    # 1 kHz at amplitude 1 and 4 kHz at amplitude 0.5: power weights 1 : 0.25 → 1600 Hz
    # (a magnitude-weighted centroid would read 2000 Hz)
    x = _sine(1000) + _sine(4000, amp=0.5)
    _, c = spectral_centroid_hz(x, SR)
    assert np.nanmedian(c) == pytest.approx(1600, rel=0.01)
    assert long_term_centroid_hz(x, SR) == pytest.approx(1600, rel=0.01)
    _, silent = spectral_centroid_hz(np.zeros(SR), SR)
    assert np.all(np.isnan(silent))


def test_third_octave_levels_of_sine_and_noise() -> None:
    c, lv = third_octave_levels_db(_sine(1000, 3.0), SR)
    i = int(np.argmin(np.abs(c - 1000)))
    assert c[i] == pytest.approx(1000)
    assert lv[i] == pytest.approx(-3.01, abs=0.1)
    assert np.all(np.delete(lv, [i - 1, i, i + 1]) < lv[i] - 40)
    # white noise: band power grows 1 dB per band (bandwidth ∝ centre), total = variance
    x = np.random.default_rng(0).standard_normal(10 * SR) * 0.1
    c, lv = third_octave_levels_db(x, SR, low_hz=100, high_hz=10000)
    slope = np.polyfit(10 * np.log10(c), lv, 1)[0]
    assert slope == pytest.approx(1.0, abs=0.05)


def test_lr_ratio_and_correlation_over_time() -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal(2 * SR)
    b = rng.standard_normal(2 * SR)
    left = np.concatenate([a, a, a])
    right = np.concatenate([a * 0.5, -a, b])  # -6 dB same signal | inverted | unrelated
    x = np.stack([left, right], axis=1)
    t, ratio = lr_energy_ratio_db(x, SR, window_s=0.5)
    assert len(t) == 12 and t[1] == pytest.approx(0.5)
    assert np.allclose(ratio[:4], 6.02, atol=0.01)
    assert np.allclose(ratio[4:8], 0.0, atol=0.01)
    _, r = interchannel_correlation(x, SR, window_s=0.5)
    assert np.allclose(r[:4], 1.0) and np.allclose(r[4:8], -1.0)
    assert np.all(np.abs(r[8:]) < 0.1)


@pytest.mark.parametrize(("gains", "want_deg"), [
    ({"FC": 1.0}, 0.0), ({"FL": 1.0}, 30.0), ({"BR": 1.0}, -110.0),
    ({"FL": 1.0, "FR": 1.0}, 0.0), ({"FL": 1.0, "BL": 1.0}, 70.0)])
def test_energy_vector_azimuth(gains: dict[str, float], want_deg: float) -> None:
    names = ("FL", "FR", "FC", "LFE", "BL", "BR")
    src = np.random.default_rng(2).standard_normal(SR)
    x = np.zeros((SR, 6))
    for name, g in gains.items():
        x[:, names.index(name)] = g * src
    x[:, 3] = src * 3  # loud LFE must not steer the image
    _, az, mag = energy_vector_azimuth_deg(x, SR, names)
    assert np.allclose(az, want_deg, atol=0.01)
    assert np.all((mag > 0) & (mag <= 1.0 + 1e-12))
