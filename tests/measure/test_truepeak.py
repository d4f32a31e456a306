"""True peak: the skip bound never changes the answer, and the interpolator reads sines right."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import upfirdn

from verifiers.measure.truepeak import _HALF, TruePeakMeter, prototype_filter, true_peak_dbtp


def _brute(x: np.ndarray) -> float:
    """Plain 4× upsampling of the whole signal, values at input times [0, len(x)) kept."""
    y = upfirdn(prototype_filter(4), x, up=4)
    start = 4 * _HALF - 1  # output index of input time 0
    return float(20 * np.log10(np.abs(y[start:start + 4 * len(x)]).max()))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_skip_is_exact_against_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 48000 * 3
    env = np.repeat(rng.uniform(0.01, 0.5, n // 4800), 4800)
    x = rng.standard_normal(n) * env
    x[rng.integers(0, n)] = 0.99  # a lone spike somewhere
    ours = true_peak_dbtp(x, 48000)[0]
    assert ours == pytest.approx(_brute(x), abs=1e-9)
    meter = TruePeakMeter(48000, 1)
    pos = 0
    while pos < n:
        k = int(rng.integers(1, 9000))
        meter.push(x[pos:pos + k, None])
        pos += k
    assert meter.per_channel_dbtp()[0] == pytest.approx(ours, abs=1e-9)


@pytest.mark.parametrize("seed", [3, 4])
def test_meter_on_float32_blocks_is_exact(seed: int) -> None:
    """Files decode straight to float32 for the meter: fed those blocks, the incremental meter must
    give the brute-force float64 answer for the same (float32-representable) values, per channel."""
    rng = np.random.default_rng(seed)
    n = 48000 * 2
    env = np.repeat(rng.uniform(0.01, 0.6, n // 4800), 4800)
    x = (rng.standard_normal((n, 2)) * env[:, None]).astype(np.float32)
    x[rng.integers(0, n), 1] = np.float32(-0.97)
    meter = TruePeakMeter(48000, 2)
    for pos in range(0, n, 7001):
        peaks = meter.push(x[pos:pos + 7001])
        assert peaks.dtype == np.float64 and np.all(peaks == np.abs(x[pos:pos + 7001]).max(axis=0))
    want = [_brute(x[:, ch].astype(np.float64)) for ch in range(2)]
    assert meter.per_channel_dbtp() == pytest.approx(want, abs=1e-9)


def _square_with_quiet_ends(t: np.ndarray) -> np.ndarray:
    """Every edge overshoots by the same amount: ~400 tied maxima, rechecked as float64 rows."""
    x = 0.5 * np.sign(np.sin(2 * np.pi * 100 * t / 48000 + 0.1))
    x[:1000] = 0.0
    x[-1000:] = 0.0
    return x


STEADY = {  # every block can hold the peak: the paths for near-ties (plain passes, float64 rows)
    "dc": lambda t: np.full(len(t), 0.5),
    "square_100hz": _square_with_quiet_ends,
    "sine_1khz_sampled_at_its_peak": lambda t: 0.5 * np.sin(2 * np.pi * 1000 * t / 48000),
    "sine_997hz": lambda t: 0.7 * np.sin(2 * np.pi * 997 * t / 48000 + 0.2),
}


@pytest.mark.parametrize("name", sorted(STEADY))
def test_skip_is_exact_on_steady_signals(name: str) -> None:
    x = STEADY[name](np.arange(48000))
    ours = true_peak_dbtp(x, 48000)[0]
    assert ours == pytest.approx(_brute(x), abs=1e-9)
    meter = TruePeakMeter(48000, 1)
    for pos in range(0, len(x), 4000):
        meter.push(x[pos:pos + 4000, None])
    assert meter.per_channel_dbtp()[0] == pytest.approx(ours, abs=1e-9)


@pytest.mark.parametrize("f_hz", [997.0, 5000.0, 12000.0, 15000.0, 19000.0, 20000.0])
def test_sines_within_0p15_db_of_continuous_peak(f_hz: float) -> None:
    sr = 48000
    for phase in np.linspace(0, np.pi, 7):
        t = np.arange(sr // 2)
        x = 0.5 * np.sin(2 * np.pi * f_hz * t / sr + phase) * np.hanning(len(t)) ** 0.05
        want = 20 * np.log10(0.5)
        assert abs(true_peak_dbtp(x, sr)[0] - want) <= 0.15, (f_hz, phase)


def test_high_rates_oversample_less_and_silence_is_minus_inf() -> None:
    assert true_peak_dbtp(np.zeros(1000), 48000) == [-np.inf]
    # 2× at 96 kHz: a 10 kHz sine is sampled 19× a cycle at 192 kHz, worst case −0.12 dB
    x = 0.25 * np.sin(2 * np.pi * 10000 * np.arange(96000) / 96000 + 0.7)
    assert true_peak_dbtp(x, 96000)[0] == pytest.approx(20 * np.log10(0.25), abs=0.15)


def test_phase_zero_is_the_samples_themselves() -> None:
    """Nyquist interpolator: every factor-th oversampled value is an input sample, exactly."""
    x = np.random.default_rng(5).standard_normal(2000)
    for factor in (2, 4):
        y = upfirdn(prototype_filter(factor), x, up=factor)
        start = factor * _HALF - 1
        assert np.array_equal(y[start:start + factor * len(x):factor], x)


@pytest.mark.parametrize("f_hz", [997.0, 8000.0, 15000.0, 20000.0])
def test_interpolated_values_follow_the_continuous_sine(f_hz: float) -> None:
    """The interpolator itself (not the 4× grid): every oversampled value of a steady sine up to
    20 kHz at 48 kHz is within 0.15 % of the waveform at that instant (±0.013 dB)."""
    sr, n = 48000, 4800
    t = np.arange(n)
    x = np.sin(2 * np.pi * f_hz * t / sr + 0.3)
    y = upfirdn(prototype_filter(4), x, up=4)
    start = 4 * _HALF - 1
    times = np.arange(4 * n) / 4
    want = np.sin(2 * np.pi * f_hz * times / sr + 0.3)
    got = y[start:start + 4 * n]
    mid = slice(4 * 200, 4 * (n - 200))  # away from the hard start and end
    assert np.max(np.abs(got[mid] - want[mid])) <= 0.0015
