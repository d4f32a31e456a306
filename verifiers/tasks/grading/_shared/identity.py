"""Content identity (policy rule 2, docs/grading.md): is the render derived from the given shot?

A render not derived from the given shot (high-passed luma correlation per frame below
IDENTITY_MIN_CORR on more than 1 frame in 10) fails every check that reads it, saying so.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from verifiers.base import AgentOutputError
from verifiers.tasks.grading._shared.memo import memo
from verifiers.tasks.grading._shared.shot import Shot

#: content identity: per-frame correlation of high-passed luma, source vs render, and the share of
#: frames that must reach it. Measured (docs/grading.md): legitimate grades and exports ≥ 0.80 on every
#: frame of all 20 tasks; another task's render, black, noise ≤ 0.1; a still frame of a moving shot < 0.5
IDENTITY_MIN_CORR = 0.5
IDENTITY_MIN_FRAMES_PCT = 90.0
IDENTITY_HIGHPASS_PX = 2.0
#: …and no other source frame may match a render frame better than its own by more than this
IDENTITY_TEMPORAL_TOL = 0.02


def highpass_luma(rgb8: np.ndarray, sigma_px: float = IDENTITY_HIGHPASS_PX) -> np.ndarray:
    """Per frame: Y' minus its Gaussian blur, the picture's structure whatever a grade did to its levels."""
    from scipy.ndimage import gaussian_filter

    y = np.asarray(rgb8, dtype=np.float32) @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
    return np.stack([f - gaussian_filter(f, sigma_px) for f in y])


def structure_corr(a: np.ndarray, b: np.ndarray, sigma_px: float = IDENTITY_HIGHPASS_PX) -> float:
    """Correlation of two single-channel pictures after removing their Gaussian blur (0 if flat)."""
    from scipy.ndimage import gaussian_filter

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a, b = a - gaussian_filter(a, sigma_px), b - gaussian_filter(b, sigma_px)
    a, b = a - a.mean(), b - b.mean()
    den = float(np.sqrt((a * a).sum() * (b * b).sum()))
    return float((a * b).sum() / den) if den > 1e-9 else 0.0


def _hp_rows(rgb8: np.ndarray) -> np.ndarray:
    """(frames, pixels) high-passed luma, centred and unit-norm per frame, on ≤ 320 px wide frames."""
    step = max(1, int(np.ceil(rgb8.shape[2] / 320)))
    hp = highpass_luma(rgb8[:, ::step, ::step], IDENTITY_HIGHPASS_PX / step if step > 1 else IDENTITY_HIGHPASS_PX)
    rows = hp.reshape(len(hp), -1).astype(np.float64)
    rows -= rows.mean(axis=1, keepdims=True)
    norm = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.where(norm > 1e-6, rows / np.maximum(norm, 1e-12), 0.0)


def identity_matrix(shot: Shot) -> np.ndarray:
    """C[i, j]: correlation of the render's frame i with the source's frame j (high-passed luma)."""
    return _hp_rows(shot.out) @ memo("hp_rows", (shot.src,), (), lambda: _hp_rows(shot.src)).T


def identity_corr(shot: Shot) -> np.ndarray:
    """Per-frame correlation of high-passed luma, source vs render (0 where either is flat)."""
    return np.diag(identity_matrix(shot)).copy()


def require_identity(shot: Shot, rel: str) -> dict[str, Any]:
    """Raise AgentOutputError unless the render is derived from the given shot, frame by frame (rule 2).

    Frame i is derived when its structure matches source frame i (correlation ≥ IDENTITY_MIN_CORR)
    and no other source frame matches it clearly better (a still frame, a shifted or reordered
    render fail here; a static shot, whose frames all match, does not)."""
    c = identity_matrix(shot)
    diag = np.diag(c)
    best_other = np.array([np.max(np.delete(c[i], i)) if shot.n > 1 else -1.0 for i in range(shot.n)])
    ok = (diag >= IDENTITY_MIN_CORR) & (diag >= best_other - IDENTITY_TEMPORAL_TOL)
    pct = 100.0 * float(ok.mean())
    ev = {"min_corr": float(diag.min()), "median_corr": float(np.median(diag)), "frames_derived_pct": pct}
    if pct < IDENTITY_MIN_FRAMES_PCT:
        bad = np.flatnonzero(~ok)
        raise AgentOutputError(
            f"{rel} is not derived from the given shot: only {pct:.0f}% of its frames match their source frame "
            f"(high-passed luma correlation ≥ {IDENTITY_MIN_CORR} and best among the shot's frames; fails on frames "
            f"{', '.join(map(str, bad[:6]))}{'…' if len(bad) > 6 else ''}; median {np.median(diag):.2f})")
    return ev
