"""The sweep report as one self-contained HTML file: tables and inline SVG plots (matplotlib).

Plots: mean score per task with its 95 % CI (one marker per label), pass@k and pass^k curves per
label, the tasks x checks failure heat map, and the paired per-task difference of two labels.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from monitor.html_report import _CSS, _svg, plt

_CYCLE = ("#0969da", "#cf222e", "#1a7f37", "#9a6700", "#8250df", "#57606a")


def _esc(x: Any) -> str:
    return html.escape(str(x))


def _fmt(x: Any, digits: int = 2) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def _task_plot(rep: dict[str, Any]) -> str | None:
    tasks = list(rep["by_task"])
    if not tasks:
        return None
    groups = rep["by_task_label"].get("agent") or {t: {"all": s} for t, s in rep["by_task"].items()}
    labels = sorted({v for per in groups.values() for v in per})
    fig, ax = plt.subplots(figsize=(9, 0.32 * len(tasks) + 1.4))
    for j, lab in enumerate(labels):
        ys, xs, lo, hi = [], [], [], []
        for i, t in enumerate(tasks):
            s = (groups.get(t) or {}).get(lab)
            if s and s["mean"] is not None:
                ys.append(i + (j - (len(labels) - 1) / 2) * 0.18)
                xs.append(s["mean"])
                ci = s["ci95"] or [s["mean"], s["mean"]]
                lo.append(s["mean"] - ci[0])
                hi.append(ci[1] - s["mean"])
        ax.errorbar(xs, ys, xerr=[lo, hi], fmt="o", ms=4, capsize=2, color=_CYCLE[j % len(_CYCLE)], label=lab)
    ax.set_yticks(range(len(tasks)), tasks, fontsize=7)
    ax.invert_yaxis()
    ax.axvline(rep["pass_line"], color="#57606a", ls=":", lw=1)
    ax.set_xlabel("score (mean, 95 % bootstrap CI)")
    ax.set_xlim(-2, 102)
    if len(labels) > 1:
        ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    return _svg(fig)


def _passk_plot(rep: dict[str, Any]) -> str | None:
    groups = rep["by_label"].get("agent") or {"all": rep["overall"]}
    if not any(g["pass_at_k"] for g in groups.values()):
        return None
    fig, ax = plt.subplots(figsize=(6, 3.2))
    for j, (lab, g) in enumerate(sorted(groups.items())):
        ks = [int(k) for k in g["pass_at_k"]]
        c = _CYCLE[j % len(_CYCLE)]
        ax.plot(ks, list(g["pass_at_k"].values()), "-o", color=c, label=f"{lab} pass@k")
        ax.plot(ks, list(g["pass_hat_k"].values()), "--s", color=c, label=f"{lab} pass^k")
    ax.set_xlabel("k (repeats)")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return _svg(fig)


def _heatmap(rep: dict[str, Any]) -> str | None:
    fails = rep["check_failures"]
    if not fails:
        return None
    tasks = list(fails)
    width = max(len(c) for c in fails.values())
    import numpy as np

    grid = np.full((len(tasks), width), np.nan)
    for i, t in enumerate(tasks):
        for j, v in enumerate(fails[t].values()):
            grid[i, j] = v
    fig, ax = plt.subplots(figsize=(min(2 + 0.9 * width, 12), 0.32 * len(tasks) + 1.4))
    im = ax.imshow(grid, aspect="auto", cmap="Reds", vmin=0, vmax=1)
    for i, t in enumerate(tasks):
        for j, name in enumerate(fails[t]):
            ax.text(j, i, f"{name[:14]}\n{grid[i, j]:.0%}", ha="center", va="center", fontsize=5.5,
                    color="white" if grid[i, j] > 0.6 else "black")
    ax.set_yticks(range(len(tasks)), tasks, fontsize=7)
    ax.set_xticks(range(width), [f"check {j + 1}" for j in range(width)], fontsize=7)
    fig.colorbar(im, ax=ax, label="share of judged items not passing")
    fig.tight_layout()
    return _svg(fig)


def _paired_plot(paired: dict[str, Any] | None) -> str | None:
    if not paired or not paired["per_task"]:
        return None
    items = sorted(paired["per_task"].items(), key=lambda kv: kv[1])
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(items) + 1.2))
    ax.barh([k for k, _ in items], [v for _, v in items],
            color=["#1a7f37" if v > 0 else "#cf222e" for _, v in items])
    ax.axvline(0, color="black", lw=0.8)
    ax.tick_params(axis="y", labelsize=7)
    ax.set_xlabel(f"mean score {paired['a']} − {paired['b']} per task")
    fig.tight_layout()
    return _svg(fig)


def _table(title: str, groups: dict[str, dict[str, Any]]) -> str:
    head = (f"<tr><th>{_esc(title)}</th><th>n</th><th>judged</th><th>unscored</th><th>mean</th><th>stdev</th><th>95 % CI</th>"
            "<th>pass rate</th><th>pass@k</th><th>pass^k</th></tr>")
    body = []
    for name, s in groups.items():
        ci = "–" if not s["ci95"] else f"{s['ci95'][0]:.2f} – {s['ci95'][1]:.2f}"
        pk = " ".join(f"{k}:{v:.2f}" for k, v in s["pass_at_k"].items())
        ph = " ".join(f"{k}:{v:.2f}" for k, v in s["pass_hat_k"].items())
        body.append(f"<tr><td>{_esc(name)}</td><td>{s['n']}</td><td>{s['judged']}</td><td>{_fmt(s['unscored_rate'])}</td>"
                    f"<td>{_fmt(s['mean'])}</td><td>{_fmt(s['stdev'])}</td><td>{ci}</td><td>{_fmt(s['pass_rate'])}</td>"
                    f"<td>{pk}</td><td>{ph}</td></tr>")
    return f"<table>{head}{''.join(body)}</table>"


def render_sweep_html(rep: dict[str, Any]) -> str:
    o = rep["overall"]
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>tally sweep report</title><style>{_CSS}</style>"
             "</head><body>",
             f"<h1>Sweep report</h1><p class='sub'>{rep['rows']} items, pass line {rep['pass_line']:g}, "
             f"bootstrap {rep['bootstrap']['resamples']} resamples (seed {rep['bootstrap']['seed']})</p>",
             f"<p class='score'>{_fmt(o['mean'])}</p><p>mean of {o['judged']} judged items; "
             f"{o['unscored']} unscored (errors, kept apart); pass rate {_fmt(o['pass_rate'])}</p>"]
    for title, svg in (("Per task", _task_plot(rep)), ("pass@k and pass^k", _passk_plot(rep)),
                       ("Checks that fail (tasks × checks)", _heatmap(rep)),
                       ("Paired comparison", _paired_plot(rep.get("paired")))):
        if svg:
            parts.append(f"<h2>{_esc(title)}</h2><figure>{svg}</figure>")
    p = rep.get("paired")
    if p:
        ci = "–" if not p["ci95"] else f"{p['ci95'][0]:.2f} – {p['ci95'][1]:.2f}"
        parts.append(f"<p>{_esc(p['label'])} {_esc(p['a'])} − {_esc(p['b'])} over {p['tasks']} shared tasks: "
                     f"<b>{_fmt(p['mean_diff'])}</b> (95 % CI {ci}); {p['a_better']} better, {p['b_better']} worse, "
                     f"{p['ties']} tied</p>")
    parts.append("<h2>Per family</h2>" + _table("family", rep["by_family"]))
    for lk, groups in rep["by_label"].items():
        parts.append(f"<h2>Per {_esc(lk)}</h2>" + _table(lk, groups))
    parts.append("<h2>Per task</h2>" + _table("task", rep["by_task"]))
    if rep["failures"]:
        parts.append("<h2>Unscored items</h2><table><tr><th>item</th><th>task</th><th>error</th></tr>"
                     + "".join(f"<tr><td>{_esc(f['item'])}</td><td>{_esc(f['task'])}</td><td>{_esc(f['error'])}</td></tr>"
                               for f in rep["failures"]) + "</table>")
    parts.append(f"<details><summary>report JSON</summary><pre>{_esc(json.dumps(rep, indent=1)[:200000])}</pre></details>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_sweep_html(rep: dict[str, Any], path: Path) -> Path:
    path = Path(path)
    path.write_text(render_sweep_html(rep), encoding="utf-8")
    return path
