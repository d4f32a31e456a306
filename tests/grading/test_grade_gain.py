"""synthkit.grading.grade_gain computes only the pixels whose exposure moves (speed); the result must
be the full formula's, bit for bit (near-miss renders and self-test scores may not change)."""

from __future__ import annotations

import numpy as np
import pytest

from verifiers.synthkit import grading as g


def _full_formula(src8: np.ndarray, alpha: np.ndarray | float, stops: float) -> np.ndarray:
    """grade_gain as written before the speed-up: every pixel through decode, gain, encode."""
    c = src8.astype(np.float64) / 255.0
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    lin = np.clip(lin * (2.0 ** (stops * np.asarray(alpha, dtype=np.float64)))[..., None], 0, 1)
    enc = np.where(lin <= 0.0031308, lin * 12.92, 1.055 * lin ** (1 / 2.4) - 0.055)
    return np.clip(np.round(enc * 255.0), 0, 255).astype(np.uint8)


def test_every_code_survives_gain_one() -> None:
    """Why untouched pixels may be copied: each 8-bit code decodes and encodes back to itself."""
    codes = np.arange(256, dtype=np.uint8).repeat(3).reshape(1, 256, 3)
    assert np.array_equal(_full_formula(codes, 0.0, 0.4), codes)


@pytest.mark.parametrize("stops", [0.4, -0.3, 0.035, 0.0])
def test_same_as_full_formula(stops: float) -> None:
    rng = np.random.default_rng(3)
    src = rng.integers(0, 256, (3, 40, 60, 3), dtype=np.uint8)
    window = np.clip(g.soften(g.ellipse(3, np.tile([30.0, 20.0], (3, 1)), (12, 9), h=40, w=60), 3.0), 0, 1)
    for alpha in (window, window > 0.5, 1.0):
        assert np.array_equal(g.grade_gain(src, alpha, stops), _full_formula(src, alpha, stops))
