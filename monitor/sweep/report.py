"""`tally sweep report`: aggregates of results.jsonl per task, label, family and task x label.

An item is *judged* when it was scored and no check was left in error; only judged items enter
means, CIs and pass counts. The rest are counted as `unscored` (failed rows and incomplete
reports), kept apart from the agent's failures, as in single reports. A pass is a judged score
at or above the pass line. pass@k / pass^k are computed per task over its repeats and averaged
over the tasks that have at least k of them.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from monitor.sweep import stats
from monitor.sweep.results import RESULTS_NAME, latest_rows, read_rows

REPORT_SCHEMA = "tally.sweep.report/1"
MAX_K = 5


def _judged(row: dict[str, Any]) -> bool:
    return row.get("status") == "scored" and bool(row.get("complete"))


def _per_task_passes(rows: list[dict[str, Any]], pass_line: float) -> dict[str, tuple[int, int]]:
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        if _judged(r):
            out[r["task"]][0] += 1
            out[r["task"]][1] += int(r["score"] >= pass_line)
    return {t: (n, c) for t, (n, c) in out.items()}


def group_stats(rows: list[dict[str, Any]], pass_line: float) -> dict[str, Any]:
    judged = [r for r in rows if _judged(r)]
    scores = [float(r["score"]) for r in judged]
    passes = sum(s >= pass_line for s in scores)
    ci = stats.bootstrap_ci(scores)
    per_task = _per_task_passes(rows, pass_line)
    pass_k: dict[str, float | None] = {}
    pass_hat: dict[str, float | None] = {}
    for k in range(1, MAX_K + 1):
        at = [stats.pass_at_k(n, c, k) for n, c in per_task.values() if n >= k]
        hat = [stats.pass_hat_k(n, c, k) for n, c in per_task.values() if n >= k]
        if not at:
            break
        pass_k[str(k)] = round(float(sum(at) / len(at)), 6)  # type: ignore[arg-type]
        pass_hat[str(k)] = round(float(sum(hat) / len(hat)), 6)  # type: ignore[arg-type]
    n = len(rows)
    failed = sum(r.get("status") != "scored" for r in rows)
    return {
        "n": n, "judged": len(judged), "unscored": n - len(judged), "failed_rows": failed,
        "unscored_rate": round((n - len(judged)) / n, 6) if n else None,
        "mean": _r(stats.mean(scores)), "stdev": _r(stats.stdev(scores)),
        "ci95": [_r(ci[0]), _r(ci[1])] if ci else None,
        "pass_rate": round(passes / len(judged), 6) if judged else None, "passes": passes,
        "pass_at_k": pass_k, "pass_hat_k": pass_hat, "tasks": len(per_task),
    }


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def check_failures(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """task -> check -> share of judged items where the check did not pass (fail or partial)."""
    counts: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for r in rows:
        if not _judged(r):
            continue
        for name, c in r["checks"].items():
            counts[r["task"]][name][0] += 1
            counts[r["task"]][name][1] += int(c["status"] != "pass")
    return {t: {name: round(bad / n, 6) for name, (n, bad) in checks.items()} for t, checks in sorted(counts.items())}


def _by(rows: list[dict[str, Any]], key) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        k = key(r)
        if k is not None:
            out[str(k)].append(r)
    return dict(sorted(out.items()))


def build_report(sweep_dir: Path, pass_line: float = 99.0, compare: tuple[str, str, str] | None = None) -> dict[str, Any]:
    """compare = (label key, value a, value b); by default the two values of `agent` if there are two."""
    rows = latest_rows(read_rows(Path(sweep_dir) / RESULTS_NAME))
    label_keys = sorted({k for r in rows for k in (r.get("labels") or {})})
    by_label = {lk: {v: group_stats(g, pass_line) for v, g in _by(rows, lambda r, lk=lk: (r.get("labels") or {}).get(lk)).items()}
                for lk in label_keys}
    by_task_label = {lk: {t: {v: group_stats(g2, pass_line)
                              for v, g2 in _by(g, lambda r, lk=lk: (r.get("labels") or {}).get(lk)).items()}
                          for t, g in _by(rows, lambda r: r.get("task")).items()}
                     for lk in label_keys if lk in ("agent", "model")}
    if compare is None and "agent" in by_label and len(by_label["agent"]) == 2:
        a, b = sorted(by_label["agent"])
        compare = ("agent", a, b)
    paired = None
    if compare is not None:
        lk, a, b = compare
        def task_means(value: str) -> dict[str, float]:
            out = {}
            for t, g in _by([r for r in rows if (r.get("labels") or {}).get(lk) == value],
                            lambda r: r.get("task")).items():
                m = stats.mean([float(r["score"]) for r in g if _judged(r)])
                if m is not None:
                    out[t] = m
            return out
        paired = {"label": lk, "a": a, "b": b, **stats.paired_difference(task_means(a), task_means(b))}
    return {
        "schema": REPORT_SCHEMA, "pass_line": pass_line, "rows": len(rows),
        "bootstrap": {"seed": stats.BOOTSTRAP_SEED, "resamples": stats.BOOTSTRAP_RESAMPLES, "level": 0.95},
        "overall": group_stats(rows, pass_line),
        "by_task": {t: group_stats(g, pass_line) for t, g in _by(rows, lambda r: r.get("task")).items()},
        "by_family": {f: group_stats(g, pass_line) for f, g in _by(rows, lambda r: r.get("family")).items()},
        "by_label": by_label, "by_task_label": by_task_label,
        "check_failures": check_failures(rows),
        "failures": [{"item": r["item"], "task": r.get("task"), "error": r.get("error")}
                     for r in rows if r.get("status") != "scored"][:200],
        "paired": paired,
    }
