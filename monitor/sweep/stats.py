"""The statistics benchmark papers publish, as small pure functions.

pass@k (Chen et al. 2021, HumanEval): the chance that at least one of k repeats drawn without
replacement from n passes, given c of the n passed: 1 - C(n-c, k) / C(n, k). pass^k (Yao et al.
2024, tau-bench): the chance that all k drawn repeats pass: C(c, k) / C(n, k). Both are unbiased
over the n repeats actually run, unlike 1-(1-p)^k with a plugged-in p. Confidence intervals are
percentile bootstraps with a fixed seed, so the same results give the same report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

BOOTSTRAP_SEED = 0
BOOTSTRAP_RESAMPLES = 2000


def mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def stdev(values: Sequence[float]) -> float | None:
    """Sample standard deviation (n-1); None below two values."""
    return float(np.std(values, ddof=1)) if len(values) >= 2 else None


def bootstrap_ci(values: Sequence[float], level: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES,
                 seed: int = BOOTSTRAP_SEED) -> tuple[float, float] | None:
    """Percentile bootstrap CI of the mean; a single value is its own interval; None when empty."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return None
    if arr.size == 1:
        return (float(arr[0]), float(arr[0]))
    rng = np.random.default_rng(seed)
    means = arr[rng.integers(0, arr.size, size=(resamples, arr.size))].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, 1 - (1 - level) / 2])
    return (float(lo), float(hi))


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Unbiased pass@k from n repeats with c passes; None when fewer than k repeats were run."""
    if not 0 <= c <= n:
        raise ValueError(f"pass_at_k: need 0 <= c <= n, got n={n} c={c}")
    if k < 1 or n < k:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float | None:
    """Unbiased pass^k (all k repeats pass) from n repeats with c passes; None when n < k."""
    if not 0 <= c <= n:
        raise ValueError(f"pass_hat_k: need 0 <= c <= n, got n={n} c={c}")
    if k < 1 or n < k:
        return None
    return math.comb(c, k) / math.comb(n, k)


def paired_difference(a: dict[str, float], b: dict[str, float], level: float = 0.95,
                      seed: int = BOOTSTRAP_SEED) -> dict[str, object]:
    """a - b over the keys (tasks) both have: mean difference, bootstrap CI over tasks, wins."""
    common = sorted(set(a) & set(b))
    diffs = [a[k] - b[k] for k in common]
    ci = bootstrap_ci(diffs, level, seed=seed)
    return {"tasks": len(common), "mean_diff": mean(diffs), "ci95": list(ci) if ci else None,
            "a_better": sum(d > 0 for d in diffs), "b_better": sum(d < 0 for d in diffs),
            "ties": sum(d == 0 for d in diffs), "per_task": dict(zip(common, diffs, strict=True))}
