"""T19's background change is read at the centre of a crossfade, whichever end carries the flux."""

from __future__ import annotations

import numpy as np
import pytest

from verifiers.synthkit import sfx
from verifiers.tasks.sound._shared.render_files import RATE_HZ
from verifiers.tasks.sound.t19_robot_short import FPS, bg_change


@pytest.mark.parametrize("seed, hiss_first", [(0, False), (13, True)])
@pytest.mark.parametrize("fade_frames, late_frames", [(0, 0), (4, 0), (4, 2), (0, 2)])
def test_change_read_at_the_fade_centre(seed: int, hiss_first: bool, fade_frames: int, late_frames: int) -> None:
    # beds of very different spectra (a rumble 60-300 Hz, a hiss 500-9000 Hz): the
    # leaving bed's bands fall into nothing at the fade's end, the dB flux piles up at one end
    rng = np.random.default_rng(seed)
    cut, n = 24, round(48 / FPS * RATE_HZ)
    a, b = sfx.bed(rng, n, 60, 300, -34, tilt_db_oct=-6), sfx.bed(rng, n, 500, 9000, -34, tilt_db_oct=0)
    a, b = (b, a) if hiss_first else (a, b)
    centre = cut + late_frames
    lo, hi = round((centre - fade_frames / 2) / FPS * RATE_HZ), round((centre + fade_frames / 2) / FPS * RATE_HZ)
    w = np.concatenate([np.zeros(lo), np.linspace(0.0, 1.0, hi - lo), np.ones(n - hi)])
    got = bg_change((1 - w) * a + w * b, cut, FPS, 1.0)
    assert got["stands_out"] and got["change_frame"] == centre
