"""Click detector: finds steps and spikes in tones and noise; attacks, noise and clean tones are clean."""

from __future__ import annotations

import numpy as np
import pytest

from verifiers.measure.clicks import detect_clicks
from verifiers.synthkit import sfx

SR = 48_000


def tone(f=440.0, s=1.0, a=0.5):
    t = np.arange(int(s * SR)) / SR
    return a * np.sin(2 * np.pi * f * t)


def test_clean_material_has_no_clicks():
    rng = np.random.default_rng(0)
    for x in (tone(), tone(5000), 0.3 * rng.standard_normal(SR), sfx.footstep(rng, "gravel"),
              sfx.footstep(rng, "wood"), sfx.impact(rng), sfx.click(rng)):
        assert detect_clicks(x, SR) == []


@pytest.mark.parametrize("jump", [0.02, 0.1, 0.5])
def test_step_in_a_tone_is_found_where_it_is(jump):
    x = tone(200)
    x[30_000:] += jump
    clicks = detect_clicks(x, SR)
    assert len(clicks) == 1 and abs(clicks[0].sample - 30_000) <= 1
    assert clicks[0].size == pytest.approx(jump, rel=0.2)


def test_spike_in_a_decaying_tail():
    x = sfx.impact(np.random.default_rng(1), dur_s=0.6)
    x[20_000] += 0.2
    assert [c.sample for c in detect_clicks(x, SR)] == [20_000]


def test_below_min_size_is_ignored():
    x = tone(200)
    x[10_000:] += 0.003
    assert detect_clicks(x, SR) == []
