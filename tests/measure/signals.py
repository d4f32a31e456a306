"""Synthetic test signals shared by the measurement tests (generated here, never fetched)."""

from __future__ import annotations

import numpy as np


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x))))


def pink_noise(n: int, rng: np.random.Generator) -> np.ndarray:
    """1/f noise by shaping white noise in the frequency domain; unit RMS."""
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.arange(len(spec), dtype=float)
    f[0] = 1.0
    x = np.fft.irfft(spec / np.sqrt(f), n)
    return x / rms(x)


def effect(kind: str, sr: int, rng: np.random.Generator, length_s: float = 0.25) -> np.ndarray:
    """A sound effect with a sharp attack at sample 0, unit RMS over its length."""
    n = int(length_s * sr)
    t = np.arange(n) / sr
    if kind == "burst":
        y = rng.standard_normal(n) * np.exp(-t / 0.05)
    elif kind == "tone":
        f = rng.uniform(300, 3000)
        y = np.sin(2 * np.pi * f * t + rng.uniform(0, 2 * np.pi)) * np.exp(-t / 0.08)
    elif kind == "kick":
        f = 150 * np.exp(-t / 0.03) + 50
        y = np.sin(2 * np.pi * np.cumsum(f) / sr + np.pi / 2) * np.exp(-t / 0.1)
    elif kind == "chirp":
        y = np.sin(2 * np.pi * (500 * t + 4000 * t * t)) * np.minimum(1, t * sr / 24) * np.exp(-t / 0.1)
    else:
        raise ValueError(kind)
    return y / rms(y)


def place(bed: np.ndarray, fx: np.ndarray, at: int, snr_db: float, bed_rms: float) -> None:
    """Add `fx` (unit RMS) at sample `at`, scaled to `snr_db` over the bed's RMS."""
    gain = bed_rms * 10 ** (snr_db / 20) if bed_rms > 0 else 10 ** (snr_db / 20) * 1e-2
    end = min(len(bed), at + len(fx))
    bed[at:end] += gain * fx[: end - at]
