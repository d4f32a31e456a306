"""The near-miss makers (verifiers/tasks/grading/_shared/near_miss.py, synthkit.grading.bisect_region) on
small arrays: the region they move reads just inside / just outside the asked-for line, measured as the
scorers measure it, and nothing outside the region moves."""

from __future__ import annotations

import numpy as np
from scipy.ndimage import gaussian_filter

from verifiers.measure.colour import delta_e2000, rgb_to_lab
from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.gain import linear_y, log2_gain
from verifiers.tasks.grading._shared.near_miss import bisect_frames, gain_to_p95


def _shot(n: int = 3, h: int = 40, w: int = 48) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    tex = np.stack([gaussian_filter(rng.standard_normal((h, w)), 2.0) for _ in range(n)])
    rgb = np.stack([90 + 400 * tex, 110 + 300 * tex, 70 + 200 * tex], axis=-1)
    mask = np.zeros((n, h, w), dtype=bool)
    mask[:, 8:30, 10:34] = True
    return np.clip(np.round(rgb), 0, 255).astype(np.uint8), mask


def _mean_de_every_3rd(src: np.ndarray, out: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return np.array([float(delta_e2000(rgb_to_lab(src[i][mask[i]][::3]), rgb_to_lab(out[i][mask[i]][::3])).mean())
                     for i in range(len(src))])


def test_lift_to_de_sits_either_side_of_the_line_and_leaves_the_rest() -> None:
    src, mask = _shot()
    inside = g.lift_to_de(src, src, mask, 1.3, above=False)
    outside = g.lift_to_de(src, src, mask, 1.7, above=True)
    de_in, de_out = _mean_de_every_3rd(src, inside, mask), _mean_de_every_3rd(src, outside, mask)
    assert np.all(de_in <= 1.3) and np.all(de_in > 1.0), de_in
    assert np.all(de_out >= 1.7) and np.all(de_out < 2.1), de_out
    assert np.array_equal(inside[~mask], src[~mask]) and np.array_equal(outside[~mask], src[~mask])


def test_gain_to_p95_reads_the_line_on_the_scorers_gain_map() -> None:
    src, mask = _shot()
    y0 = linear_y(src)
    for target, above in ((0.025, False), (0.035, True)):
        out = gain_to_p95(src, src, mask, target, above=above)
        gm = np.abs(log2_gain(y0, linear_y(out)))
        p95 = np.array([np.percentile(gm[i][mask[i]], 95) for i in range(len(src))])
        assert np.all(p95 >= target) if above else np.all(p95 <= target), p95
        assert np.all(np.abs(p95 - target) < 0.015), p95


def test_bisect_frames_returns_each_frame_on_the_asked_side_whichever_way_the_statistic_runs() -> None:
    src, _mask = _shot()

    def darker(i: int, x: float) -> np.ndarray:  # the mean falls as x grows, like an edge softening
        return np.clip(np.round(src[i:i + 1] * (1.0 - x)), 0, 255).astype(np.uint8)

    def mean(i: int, frame: np.ndarray) -> float:
        return float(frame.mean())

    line = 0.6 * float(src.mean())
    below = bisect_frames(len(src), darker, mean, line, x_below=1.0, x_above=0.0, above=False)
    above = bisect_frames(len(src), darker, mean, line, x_below=1.0, x_above=0.0, above=True)
    m_below, m_above = below.reshape(len(src), -1).mean(axis=1), above.reshape(len(src), -1).mean(axis=1)
    assert np.all(m_below <= line) and np.all(m_above > line), (m_below, m_above, line)
    assert np.all(m_above - m_below < 1.0), (m_below, m_above)  # adjacent: 12 steps over the whole range
