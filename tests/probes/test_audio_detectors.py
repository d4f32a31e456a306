"""Goertzel tone tracking, silence, noise floor and clipping on synthetic signals with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from probes.audio_probe import AudioProbe
from probes.detectors.goertzel import ToneTracker, tone_amplitude
from probes.types import AudioBlock

SR = 48000


def sine(f: float, level_dbfs: float, seconds: float, phase: float = 0.0) -> np.ndarray:
    t = np.arange(round(seconds * SR)) / SR
    return 10 ** (level_dbfs / 20) * np.sin(2 * np.pi * f * t + phase)


@pytest.mark.parametrize("freq", [100.0, 997.0, 1000.0, 3150.5, 15000.0])
def test_goertzel_amplitude_any_frequency(freq: float) -> None:
    x = sine(freq, -20, 0.05, phase=0.7)
    assert 20 * np.log10(tone_amplitude(x, freq, SR)) == pytest.approx(-20.0, abs=0.05)
    # 200 Hz away the bin sees (almost) nothing
    assert 20 * np.log10(tone_amplitude(x, freq + 200, SR) + 1e-12) < -60


def push_all(tracker: ToneTracker, x: np.ndarray, block: int) -> list:
    out = []
    for i in range(0, len(x), block):
        out += tracker.push(x[i:i + block], i / SR)
    return out


@pytest.mark.parametrize("block", [256, 4800])
def test_tone_on_off_times_and_channels(block: int) -> None:
    """L: 1 kHz 0.3–1.3 s; R: 1 kHz + 1.2 kHz 0.8–1.05 s over white noise at −50 dBFS."""
    n = round(1.6 * SR)
    rng = np.random.default_rng(3)
    x = 10 ** (-50 / 20) * rng.standard_normal((n, 2)) / np.sqrt(2)
    a, b = round(0.3 * SR), round(1.3 * SR)
    x[a:b, 0] += sine(1000, -20, 1.0, 0.4)
    c, d = round(0.8 * SR), round(1.05 * SR)
    x[c:d, 1] += sine(1000, -26, 0.25) + sine(1200, -26, 0.25, 1.0)
    tr = ToneTracker(SR, 2, [1000, 1200, 440])
    changes = push_all(tr, x, block)
    got = {(ch.channel, ch.freq_hz, ch.on): ch for ch in changes}
    assert len(changes) == 6, changes
    assert got[(0, 1000.0, True)].t_s == pytest.approx(0.3, abs=0.003)
    assert got[(0, 1000.0, False)].t_s == pytest.approx(1.3, abs=0.003)
    assert got[(1, 1000.0, True)].t_s == pytest.approx(0.8, abs=0.003)
    assert got[(1, 1200.0, False)].t_s == pytest.approx(1.05, abs=0.003)
    assert got[(0, 1000.0, True)].level_dbfs == pytest.approx(-20, abs=0.1)
    assert got[(1, 1200.0, True)].level_dbfs == pytest.approx(-26, abs=0.05)


def test_noise_is_not_a_tone() -> None:
    rng = np.random.default_rng(1)
    x = 0.1 * rng.standard_normal((SR, 1))
    assert push_all(ToneTracker(SR, 1, [1000.0, 3000.0]), x, 1024) == []


def test_probe_silence_floor_and_clipping() -> None:
    events: list[tuple[str, dict]] = []
    probe = AudioProbe(lambda s, k, p: events.append((k, p)), SR, 1, silence_min_s=0.3)
    rng = np.random.default_rng(2)
    x = np.concatenate([sine(440, -12, 1.0), np.zeros(round(0.5 * SR)), sine(440, -12, 0.5),
                        10 ** (-70 / 20) * rng.standard_normal(round(3.5 * SR)), np.clip(sine(440, 3, 0.2), -1, 1)])
    for i in range(0, len(x), 960):
        probe.push(AudioBlock(x[i:i + 960, None].astype(np.float32), SR, 10.0 + i / SR))
    probe.flush()
    stamps = [p["t_s"] for k, p in events if k != "meter"]
    assert stamps == sorted(stamps)  # changes go out in time order
    kinds = [(k, p["t_s"]) for k, p in events if k in ("silence_start", "silence_end")]
    assert [k for k, _ in kinds] == ["silence_start", "silence_end", "silence_start", "silence_end"]
    t = [t for _, t in kinds]
    assert t[0] == pytest.approx(11.0, abs=0.011) and t[1] == pytest.approx(11.5, abs=0.011)
    assert t[2] == pytest.approx(12.0, abs=0.011) and t[3] == pytest.approx(15.5, abs=0.011)
    clips = [p["t_s"] for k, p in events if k == "clip"]
    assert len(clips) == 2  # one per channel per meter frame: the 0.2 s clipped sine spans two
    assert clips[0] == pytest.approx(15.5, abs=0.002)  # first clipped sample of the +3 dB sine
    meters = [p for k, p in events if k == "meter"]
    in_noise = [p for p in meters if 15.0 <= p["t_s"] <= 15.5]
    assert in_noise and in_noise[0]["noise_floor_dbfs"][0] == pytest.approx(-70.0, abs=1.0)
    # 3 s earlier the window still held digital silence: no floor above it (−inf → None)
    assert [p["noise_floor_dbfs"][0] for p in meters if p["t_s"] == pytest.approx(13.0)] == [None]
    assert sum(p["clipped_samples"][0] for p in meters) > 0.2 * 0.2 * SR
    assert meters[0]["t_s"] == pytest.approx(10.1, abs=1e-6)
    assert all(m["silent"] == [False] for m in meters if m["t_s"] <= 11.0)
