"""pass@k / pass^k against values worked out by hand; bootstrap CIs narrow as n grows; the report
aggregates a hand-made results table the same way."""

from __future__ import annotations

import json

import numpy as np
import pytest

from monitor.sweep import stats
from monitor.sweep.report import build_report

# (n, c, k, pass@k, pass^k), by hand: pass@k = 1 - C(n-c,k)/C(n,k), pass^k = C(c,k)/C(n,k)
TABLE = [
    (5, 2, 1, 2 / 5, 2 / 5),
    (5, 2, 2, 1 - 3 / 10, 1 / 10),
    (5, 2, 3, 1 - 1 / 10, 0.0),
    (5, 2, 4, 1.0, 0.0),
    (3, 3, 2, 1.0, 1.0),
    (4, 0, 2, 0.0, 0.0),
    (10, 7, 3, 1 - 1 / 120, 35 / 120),
    (10, 1, 5, 1 - 126 / 252, 0.0),
]


@pytest.mark.parametrize(("n", "c", "k", "at_k", "hat_k"), TABLE)
def test_pass_at_k_and_pass_hat_k_by_hand(n, c, k, at_k, hat_k):
    assert stats.pass_at_k(n, c, k) == pytest.approx(at_k, abs=1e-12)
    assert stats.pass_hat_k(n, c, k) == pytest.approx(hat_k, abs=1e-12)


def test_too_few_repeats_is_none_and_bad_counts_raise():
    assert stats.pass_at_k(2, 1, 3) is None and stats.pass_hat_k(2, 1, 3) is None
    with pytest.raises(ValueError):
        stats.pass_at_k(3, 4, 1)


def test_bootstrap_ci_narrows_with_n_and_is_seeded():
    rng = np.random.default_rng(7)
    population = rng.uniform(0, 100, 4000)
    widths = []
    for n in (10, 40, 160, 640):
        lo, hi = stats.bootstrap_ci(population[:n])
        assert lo <= float(np.mean(population[:n])) <= hi
        widths.append(hi - lo)
    assert widths == sorted(widths, reverse=True) and widths[-1] < widths[0] / 4
    assert stats.bootstrap_ci(population[:50]) == stats.bootstrap_ci(population[:50])


def _row(task, agent, rep, score, checks, status="scored", complete=True):
    return {"key_id": f"{task}-{agent}-{rep}", "item": f"{task}/{agent}/{rep}", "task": task, "family": "sound",
            "labels": {"agent": agent, "repeat": str(rep)}, "status": status, "score": score,
            "complete": complete, "checks": checks, "error": None if status == "scored" else "boom"}


def test_report_on_a_fixed_table(tmp_path):
    ok, bad = {"a": {"status": "pass", "score": 1.0}}, {"a": {"status": "fail", "score": 0.0}}
    rows = []
    # task X: agent A passes 2 of 5 repeats, agent B 3 of 3; task Y: A 1 of 2 plus one unscored row
    for r, passed in enumerate([1, 1, 0, 0, 0]):
        rows.append(_row("X", "A", r, 100.0 if passed else 40.0, ok if passed else bad))
    for r in range(3):
        rows.append(_row("X", "B", r, 100.0, ok))
    rows.append(_row("Y", "A", 0, 100.0, ok))
    rows.append(_row("Y", "A", 1, 0.0, bad))
    rows.append(_row("Y", "A", 2, None, {}, status="failed", complete=False))
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    rep = build_report(tmp_path, pass_line=99)
    a = rep["by_label"]["agent"]["A"]
    assert a["n"] == 8 and a["judged"] == 7 and a["unscored"] == 1 and a["unscored_rate"] == pytest.approx(1 / 8)
    assert a["pass_rate"] == pytest.approx(3 / 7)
    # pass@2 averaged over the tasks with >= 2 repeats: X (n5 c2) 0.7, Y (n2 c1) 1.0
    assert a["pass_at_k"]["2"] == pytest.approx((0.7 + 1.0) / 2)
    assert a["pass_hat_k"]["2"] == pytest.approx((0.1 + 0.0) / 2)
    assert a["pass_at_k"]["3"] == pytest.approx(0.9)  # only X has 3 repeats
    assert rep["check_failures"]["X"]["a"] == pytest.approx(3 / 8)
    assert rep["by_task"]["X"]["mean"] == pytest.approx((200 + 120 + 300) / 8)
    paired = rep["paired"]
    assert (paired["a"], paired["b"], paired["tasks"]) == ("A", "B", 1)
    assert paired["mean_diff"] == pytest.approx(64.0 - 100.0)
