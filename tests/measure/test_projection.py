"""Projection of a mix onto known references: the routing/ducking measurement of several families."""

from __future__ import annotations

import numpy as np

from verifiers.measure.projection import best_lag, project, shifted

RATE_HZ = 8000


def _refs(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(4 * RATE_HZ) * 0.1, rng.standard_normal(4 * RATE_HZ) * 0.1]


def test_lag_and_gains_recovered():
    voice, music = _refs()
    lag = 123
    gain = np.where(np.arange(len(music)) < 2 * RATE_HZ, 0.5, 0.05)  # music ducked after 2 s
    mix = np.zeros(len(voice))
    mix[lag:] = (0.8 * voice + gain * music)[: len(mix) - lag]
    assert best_lag(mix, [voice, music], RATE_HZ) == lag
    p = project(mix, [voice, music], RATE_HZ, window_s=0.05)
    t_s = np.arange(len(p.coeffs)) * 0.05
    steady = p.active & (np.abs(t_s - 2.0) > 0.1)  # the window holding the gain change fits worse
    early = p.coeffs[steady & (t_s < 2.0)]
    late = p.coeffs[steady & (t_s > 2.0)]
    assert np.allclose(early[:, 0], 0.8, atol=0.01) and np.allclose(early[:, 1], 0.5, atol=0.01)
    assert np.allclose(late[:, 1], 0.05, atol=0.01)
    assert p.fit_ratio[steady].min() > 0.99


def test_shares_tell_tracks_apart():
    voice, music = _refs(1)
    p = project(voice * 0.3, [voice, music], RATE_HZ)
    assert p.total_share(0) > 0.99 and p.total_share(1) < 0.01


def test_per_reference_lag_finds_a_second_source_a_few_samples_off():
    voice, music = _refs(2)
    mix = np.zeros(len(voice))
    mix[10:] += voice[:-10]
    mix[14:] += music[:-14]
    common = project(mix, [voice, music], RATE_HZ)
    own = project(mix, [voice, music], RATE_HZ, per_ref_lag=True)
    assert min(own.total_share(0), own.total_share(1)) > 0.45
    assert min(common.total_share(0), common.total_share(1)) < min(own.total_share(0), own.total_share(1))


def test_shifted_lays_a_reference_on_the_track_timeline():
    ref = np.arange(1.0, 6.0)
    assert shifted(ref, 2, 6).tolist() == [0, 0, 1, 2, 3, 4]
    assert shifted(ref, -2, 4).tolist() == [3, 4, 5, 0]
    assert shifted(ref, 9, 4).tolist() == [0, 0, 0, 0]


def test_explained_tells_the_fed_signals_from_other_sound():
    """Shares are fractions of the *fitted* energy, so noise splits between references too; the
    explained fraction of the track's own energy is what tells a recording of the refs from noise."""
    voice, music = _refs(2)
    rec = project(0.7 * voice + 0.2 * music + 0.001 * np.random.default_rng(3).standard_normal(len(voice)),
                  [voice, music], RATE_HZ)
    noise = project(np.random.default_rng(4).standard_normal(len(voice)) * 0.1, [voice, music], RATE_HZ)
    assert rec.explained() > 0.99
    assert noise.explained() < 0.1 and max(noise.total_share(0), noise.total_share(1)) > 0.2
    assert project(np.zeros(len(voice)), [voice, music], RATE_HZ).explained() == 0.0
