"""Speech-like audio for the short-form T08 instance (tighten a talking head): words a VAD calls speech.

No TTS model may be shipped or downloaded, and Silero VAD (verifiers.measure.vad) ignores tones and
noise, so a "word" here is a few synthetic syllables: a jittery, slowly gliding glottal sawtooth
(f0 ≈ 100-140 Hz) through three formant resonators that move from one vowel's formants to
another's, under a syllable envelope, each syllable led by a short band-passed consonant burst.
Silero scores these at ≈ 1.0 (tests/shortform/test_t08_speech.py) and every word is different
audio, so the scorer can find each one in an export by NCC (verifiers.measure.identify).
"""

from __future__ import annotations

import numpy as np
from scipy import signal

#: (F1, F2, F3) of five vowels, Hz (Peterson & Barney averages, rounded)
VOWELS_HZ = {"a": (730, 1090, 2440), "i": (270, 2290, 3010), "u": (300, 870, 2240),
             "e": (530, 1840, 2480), "o": (570, 840, 2410)}


def syllable(rng: np.random.Generator, dur_s: float, f0_hz: float, sr: int) -> np.ndarray:
    """One consonant burst + voiced vowel glide of `dur_s` seconds (the burst adds 40 ms)."""
    n = int(dur_s * sr)
    t = np.arange(n) / sr
    vib = 1 + 0.08 * np.sin(2 * np.pi * rng.uniform(2, 5) * t + rng.uniform(0, 2 * np.pi))
    drift = 1 + 0.005 * rng.standard_normal(n).cumsum() / np.sqrt(n)
    phase = np.cumsum(f0_hz * vib * drift) / sr
    src = signal.sawtooth(2 * np.pi * phase)
    v1, v2 = rng.choice(list(VOWELS_HZ), 2)
    voiced = np.zeros(n)
    half = n // 2
    for k in range(3):
        for seg, fc in ((slice(0, half), VOWELS_HZ[v1][k]), (slice(half, n), VOWELS_HZ[v2][k])):
            b, a = signal.iirpeak(fc, fc / (80 + 40 * k), fs=sr)
            voiced[seg] += signal.lfilter(b, a, src[seg]) / (k + 1)
    voiced *= np.sin(np.pi * np.linspace(0, 1, n)) ** 0.6
    c = int(0.04 * sr)
    bb, ba = signal.butter(2, [2500, min(6000, 0.45 * sr)], btype="band", fs=sr)
    burst = signal.lfilter(bb, ba, rng.standard_normal(c) * np.hanning(c) * 0.3)
    return np.concatenate([burst, voiced])


def word(rng: np.random.Generator, syllables: int, sr: int, f0_hz: float = 120.0, peak: float = 0.5) -> np.ndarray:
    """A word of `syllables` syllables (0.12-0.22 s each), normalised to `peak`."""
    x = np.concatenate([syllable(rng, rng.uniform(0.12, 0.22), f0_hz * rng.uniform(0.9, 1.15), sr)
                        for _ in range(syllables)])
    return x / np.max(np.abs(x)) * peak
