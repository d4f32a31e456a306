"""Synthetic room impulse responses with a known RT60 and a distinct early-reflection pattern.

direct impulse + sparse early reflections (5–80 ms, decaying) + a late tail of exponentially decaying
Gaussian noise whose energy falls 60 dB in `rt60_s`. Distinct seeds give distinct rooms of the same
RT60, which is what "reverb from the wrong IR" mutants need.
"""

from __future__ import annotations

import numpy as np

SR_HZ = 48_000


def impulse_response(rng: np.random.Generator, rt60_s: float, *, length_s: float | None = None,
                     late_level: float = 0.25, sr: int = SR_HZ) -> np.ndarray:
    n = int((length_s or 1.3 * rt60_s + 0.1) * sr)
    t = np.arange(n) / sr
    ir = np.zeros(n)
    ir[0] = 1.0
    for _ in range(14):
        d = rng.uniform(0.005, 0.08)
        k = int(d * sr)
        ir[k] += rng.choice([-1, 1]) * rng.uniform(0.2, 0.6) * 10 ** (-3 * d / rt60_s)
    onset = 0.01
    late = rng.standard_normal(n) * np.exp(-6.907755 * t / rt60_s) * np.clip((t - onset) / 0.02, 0, 1)
    ir += late_level * late
    return ir
