"""Digital-silence runs (verifiers.measure.events) and clicks (verifiers.measure.clicks) on signals
with known defects."""

from __future__ import annotations

import numpy as np
import pytest

from tests.measure.signals import pink_noise
from verifiers.measure.clicks import detect_clicks
from verifiers.measure.events import silence_runs

SR = 48000


def test_silence_runs_exact_and_thresholded() -> None:
    x = np.random.default_rng(0).standard_normal((3 * SR, 2)) * 0.1
    x[SR:SR + 4800] = 0.0  # 100 ms of digital silence on both channels
    x[2 * SR:2 * SR + 960, 0] = 0.0  # only one channel silent: not a run
    runs = silence_runs(x, SR, min_s=0.01)
    assert [(r.start, r.end) for r in runs] == [(SR, SR + 4800)]
    assert runs[0].duration_s == pytest.approx(0.1)
    dithered = x.copy()
    dithered[SR:SR + 4800] = np.random.default_rng(1).uniform(-1, 1, (4800, 2)) * 10 ** (-95 / 20)
    assert silence_runs(dithered, SR, min_s=0.01) == []
    assert len(silence_runs(dithered, SR, min_s=0.01, threshold_dbfs=-90)) == 1


def _music(seconds: float, seed: int) -> np.ndarray:
    """Click-free stand-in for programme: chords of sines with vibrato, a chirp and a little noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * SR)) / SR
    x = np.zeros_like(t)
    for f in rng.uniform(110, 1800, 6):
        x += np.sin(2 * np.pi * f * t + 3 * np.sin(2 * np.pi * 5 * t) + rng.uniform(0, 6)) * rng.uniform(0.02, 0.1)
    x += 0.05 * np.sin(2 * np.pi * (200 * t + 300 * t * t))
    x += pink_noise(len(t), rng) * 0.005
    return x


def test_clicks_found_and_clean_signal_has_none() -> None:
    x = _music(8.0, 2)
    assert detect_clicks(x, SR) == []
    rng = np.random.default_rng(3)
    truth = sorted(rng.choice(np.arange(SR // 2, len(x) - SR // 2, SR // 4), 12, replace=False).tolist())
    y = x.copy()
    for k, pos in enumerate(truth):
        kind = k % 3
        if kind == 0:
            y[pos] += 0.15  # single-sample spike
        elif kind == 1:
            y[pos:pos + 3] += np.array([0.1, -0.12, 0.08])  # short burst
        else:
            y[pos:] = np.concatenate([y[pos + 30:], np.zeros(30)])  # 30 dropped samples: a jump
    found = detect_clicks(y[: len(y) - 200], SR)  # the dropped samples left zeros at the very end
    assert len(found) == len(truth), ([c.sample for c in found], truth)
    for c, pos in zip(found, truth, strict=True):
        assert abs(c.sample - pos) <= 2


def test_click_on_digital_silence() -> None:
    x = np.zeros(SR)
    x[20000] = 0.01
    (click,) = detect_clicks(x, SR)
    assert click.sample == 20000
