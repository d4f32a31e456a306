"""YIN: tones and harmonic sounds to a few cents, a Doppler-like glide tracked, noise unvoiced."""

from __future__ import annotations

import numpy as np
import pytest

from verifiers.measure.yin import yin

SR = 48_000


@pytest.mark.parametrize("f0", [55.0, 110.0, 441.3, 1234.0])
def test_harmonic_tone(f0):
    t = np.arange(SR) / SR
    x = sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(1, 6))
    tr = yin(x, SR)
    mid = tr.f0_hz[20:-20]
    cents = 1200 * np.log2(np.nanmedian(mid) / f0)
    assert abs(cents) < 2 and np.isfinite(mid).all()


def test_glide_is_tracked():
    t = np.arange(2 * SR) / SR
    f = 200 * 2 ** (t / 2)  # one octave up over 2 s
    x = np.sin(2 * np.pi * np.cumsum(f) / SR)
    tr = yin(x, SR)
    want = 200 * 2 ** (tr.times_s / 2)
    ok = tr.voiced() & (tr.times_s > 0.05) & (tr.times_s < 1.95)
    err = 1200 * np.abs(np.log2(tr.f0_hz[ok] / want[ok]))
    assert np.median(err) < 5 and ok.sum() > 300


def test_noise_and_silence_are_unvoiced():
    rng = np.random.default_rng(0)
    assert np.mean(yin(rng.standard_normal(SR), SR).voiced()) < 0.1
    assert not yin(np.zeros(SR // 2), SR).voiced().any()
