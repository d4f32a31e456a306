"""5.1 panning for synthetic renders: pairwise constant-power gains that put the energy vector
(verifiers.measure.spectral.energy_vector_azimuth_deg) exactly at the asked azimuth.

Channel order FL FR FC LFE BL BR (WAVE 5.1). The centre is never used (beds keep it clear); the
pairs are FL–FR (front), FL–BL (left), BL–BR (back), FR–BR (right). Azimuth in degrees, positive
to the left, 0 = front, as in the measurement.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
from scipy.optimize import brentq

ORDER = ("FL", "FR", "FC", "LFE", "BL", "BR")
_RING = [("FR", -30.0), ("FL", 30.0), ("BL", 110.0), ("BR", 250.0)]  # going left from front-right


def _angle(e1: float, a1: float, a2: float) -> float:
    v = e1 * np.exp(1j * np.radians(a1)) + (1 - e1) * np.exp(1j * np.radians(a2))
    return float(np.degrees(np.angle(v)))


def gains_51(az_deg: float) -> np.ndarray:
    """Six amplitude gains (sum of squares 1) whose energy vector points at az_deg."""
    a = (az_deg + 30.0) % 360.0 - 30.0  # into [-30, 330)
    ring = [*_RING, ("FR", 330.0)]
    for (n1, a1), (n2, a2) in pairwise(ring):
        if a1 <= a <= a2:
            target = a

            def f(e1: float, a1=a1, a2=a2, target=target) -> float:
                d = _angle(e1, a1, a2) - target
                return (d + 180) % 360 - 180

            e1 = 1.0 if abs(a - a1) < 1e-9 else 0.0 if abs(a - a2) < 1e-9 else brentq(f, 0.0, 1.0)
            g = np.zeros(6)
            g[ORDER.index(n1)] = np.sqrt(e1)
            g[ORDER.index(n2)] = np.sqrt(1 - e1)
            return g
    raise ValueError(f"azimuth {az_deg} not covered")


def place_51(mono: np.ndarray, az_deg: float | np.ndarray) -> np.ndarray:
    """(n, 6) render of a mono source at a fixed azimuth or one azimuth per sample (moving source)."""
    if np.ndim(az_deg) == 0:
        return mono[:, None] * gains_51(float(az_deg))[None, :]
    az = np.asarray(az_deg, dtype=float)
    # gains change smoothly; evaluate on a coarse grid and interpolate per channel
    idx = np.linspace(0, len(mono) - 1, min(len(mono), 400)).astype(int)
    g = np.array([gains_51(float(az[i])) for i in idx])
    full = np.stack([np.interp(np.arange(len(mono)), idx, g[:, c]) for c in range(6)], axis=1)
    return mono[:, None] * full



def vbap_gains_51(az_deg: float) -> np.ndarray:
    """Pulkki's 2-D VBAP on the same speaker pairs: the *amplitude* (velocity) vector points at az_deg,
    gains normalised to unit power. Its energy vector lands a few degrees off in wide pairs, as a real
    VBAP panner's does (the self-test's 'another panner' case)."""
    a = (az_deg + 30.0) % 360.0 - 30.0
    ring = [*_RING, ("FR", 330.0)]
    for (n1, a1), (n2, a2) in pairwise(ring):
        if a1 <= a <= a2:
            base = np.array([[np.cos(np.radians(a1)), np.sin(np.radians(a1))],
                             [np.cos(np.radians(a2)), np.sin(np.radians(a2))]])
            g12 = np.linalg.solve(base.T, [np.cos(np.radians(a)), np.sin(np.radians(a))])
            g12 = np.maximum(g12, 0.0) / np.linalg.norm(g12)
            g = np.zeros(6)
            g[ORDER.index(n1)] += g12[0]
            g[ORDER.index(n2)] += g12[1]
            return g
    raise ValueError(f"azimuth {az_deg} not covered")
