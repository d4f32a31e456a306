"""Self-contained HTML reports: the checks, their evidence, and plots where a picture says more.

One file, no external assets (plots are inline SVG from matplotlib), so a report can be mailed,
archived beside report.json, or opened in a browser on a machine with no network.

Verifiers ask for plots through their evidence, by one convention:
`evidence["plot"]` (or a list under `evidence["plots"]`) = {"kind": "line"|"scatter"|"bar",
"title", "x": [...], "y": {"series name": [...]}, "x_label", "y_label",
"hlines": {"label": value}, "vlines": {"label": value}, "y_min": 0}. Per-event timing evidence
(`evidence["events"]` with `error_frames`) and recorded run events (ingest statistics, scenario
latencies, audio meter frames) are plotted without asking.
"""

from __future__ import annotations

import html
import io
import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

_COLOURS = {"pass": "#1a7f37", "partial": "#9a6700", "fail": "#cf222e", "error": "#8250df"}

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:1100px;color:#1f2328;padding:0 1em}
h1{font-size:1.4em;margin-bottom:.2em} .sub{color:#59636e;margin-top:0}
.score{font-size:2.4em;font-weight:600} .incomplete{color:#8250df;font-weight:600}
table{border-collapse:collapse;width:100%;margin:1em 0} th,td{border-bottom:1px solid #d1d9e0;padding:.4em .6em;text-align:left;vertical-align:top}
th{background:#f6f8fa} .st{font-weight:600;text-transform:uppercase;font-size:.85em}
details{margin:.3em 0} pre{background:#f6f8fa;padding:.6em;overflow:auto;max-height:24em;font-size:12px}
.bar{height:.7em;background:#d1d9e0;border-radius:.35em;min-width:6em} .bar>span{display:block;height:100%;border-radius:.35em}
figure{margin:.6em 0} svg{max-width:100%;height:auto}
"""


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.find("<svg"):]


def plot_spec(spec: dict[str, Any]) -> str:
    """Render one plot spec (see module doc) to inline SVG."""
    fig, ax = plt.subplots(figsize=(7.5, 2.8))
    x = spec.get("x") or []
    for name, ys in (spec.get("y") or {}).items():
        xs = x if len(x) == len(ys) else list(range(len(ys)))
        kind = spec.get("kind", "line")
        if kind == "scatter":
            ax.scatter(xs, ys, s=14, label=name)
        elif kind == "bar":
            ax.bar([str(v) for v in xs], ys, label=name)
        else:
            ax.plot(xs, ys, label=name, linewidth=1.2)
    for label, value in (spec.get("hlines") or {}).items():
        ax.axhline(value, linestyle="--", linewidth=0.9, color="#cf222e")
        ax.annotate(label, (0, value), xycoords=("axes fraction", "data"), fontsize=8, color="#cf222e",
                    va="bottom")
    for label, value in (spec.get("vlines") or {}).items():
        ax.axvline(value, linestyle=":", linewidth=0.9, color="#59636e")
        ax.annotate(label, (value, 1), xycoords=("data", "axes fraction"), fontsize=8, rotation=90, va="top")
    if spec.get("y_min") is not None:
        ax.set_ylim(bottom=spec["y_min"])
    ax.set_title(spec.get("title", ""), fontsize=10)
    ax.set_xlabel(spec.get("x_label", ""))
    ax.set_ylabel(spec.get("y_label", ""))
    ax.grid(alpha=0.3)
    if len(spec.get("y") or {}) > 1:
        ax.legend(fontsize=8)
    return _svg(fig)


def _event_timing_plot(events: list[dict[str, Any]], tolerance: float | None) -> str | None:
    rows = [e for e in events if isinstance(e, dict) and "error_frames" in e]
    if not rows:
        return None
    labels = [str(e.get("label") or e.get("gt_frame")) for e in rows]
    errs = [e["error_frames"] if e["error_frames"] is not None else float("nan") for e in rows]
    fig, ax = plt.subplots(figsize=(7.5, 2.8))
    colours = ["#1a7f37" if e.get("in_sync") else "#cf222e" for e in rows]
    ax.bar(labels, [0 if v != v else v for v in errs], color=colours, width=0.5)
    ax.scatter(labels, [0 if v != v else v for v in errs], color=colours, zorder=3, s=18)
    for i, v in enumerate(errs):
        if v != v:
            ax.annotate("missing", (i, 0), ha="center", fontsize=8, color="#cf222e")
    if tolerance is not None:
        for sign in (1, -1):
            ax.axhline(sign * tolerance, linestyle="--", color="#59636e", linewidth=0.9)
    ax.set_ylabel("onset − GT (frames)")
    ax.set_title("Onset against GT frame, per event", fontsize=10)
    ax.tick_params(axis="x", labelrotation=45, labelsize=8)
    ax.grid(alpha=0.3, axis="y")
    return _svg(fig)


def check_plots(check: dict[str, Any]) -> list[str]:
    ev = check.get("evidence") or {}
    out = []
    specs = ev.get("plots") or ([ev["plot"]] if isinstance(ev.get("plot"), dict) else [])
    out.extend(plot_spec(s) for s in specs if isinstance(s, dict))
    if isinstance(ev.get("events"), list):
        svg = _event_timing_plot(ev["events"], ev.get("tolerance_frames"))
        if svg:
            out.append(svg)
    return out


def run_plots(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Plots of recorded live evidence: ingest bitrate/keyframes, scenario latencies, loudness."""
    plots: list[tuple[str, str]] = []
    t0 = min((e["mono_ns"] for e in events), default=0)
    stats = [e for e in events if e.get("source") == "rtmp" and e.get("kind") == "stats"]
    by_stream: dict[str, list[dict[str, Any]]] = {}
    for e in stats:
        p = e.get("payload", {})
        by_stream.setdefault(f"{p.get('app', '')}/{p.get('key', '')}", []).append(e)
    for name, rows in by_stream.items():
        t = [(e["mono_ns"] - t0) / 1e9 for e in rows]
        br = [((e["payload"].get("video") or {}).get("bitrate_bps") or 0) / 1e6 for e in rows]
        ki = [((e["payload"].get("video") or {}).get("keyframe_interval_s") or {}).get("last") for e in rows]
        plots.append((f"Ingest {name}: video bitrate", plot_spec(
            {"kind": "line", "x": t, "y": {"bitrate (Mbit/s)": br}, "x_label": "run time (s)",
             "y_label": "Mbit/s", "y_min": 0, "title": f"{name} video bitrate over time"})))
        if any(v is not None for v in ki):
            plots.append((f"Ingest {name}: keyframe spacing", plot_spec(
                {"kind": "scatter", "x": t, "y": {"keyframe interval (s)": [v if v is not None else float("nan") for v in ki]},
                 "x_label": "run time (s)", "y_label": "s", "title": f"{name} keyframe interval"})))
    lat = [e for e in events if e.get("source") == "scenario" and "latency_ms" in (e.get("payload") or {})]
    if lat:
        plots.append(("Scenario latencies", plot_spec(
            {"kind": "bar", "x": [str(e["payload"].get("id") or e["seq"]) for e in lat],
             "y": {"latency (ms)": [e["payload"]["latency_ms"] or 0 for e in lat]}, "y_label": "ms",
             "title": "Reaction latency per expectation"})))
    meters = [e for e in events if e.get("source", "").startswith("probe.audio") and e.get("kind") == "meter"]
    if meters:
        t = [(e["mono_ns"] - t0) / 1e9 for e in meters]
        plots.append(("Loudness over time", plot_spec(
            {"kind": "line", "x": t, "y": {
                "momentary": [e["payload"].get("momentary_lufs") for e in meters],
                "short-term": [e["payload"].get("short_term_lufs") for e in meters]},
             "x_label": "run time (s)", "y_label": "LUFS", "title": "Loudness"})))
    return plots


def stream_health_rows(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per ingest stream and platform profile: the last health status and every issue raised
    during the run (from the `rtmp/health` change events), first occurrence kept."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for e in events:
        if e.get("source") != "rtmp" or e.get("kind") != "health":
            continue
        p = e.get("payload") or {}
        row = rows.setdefault((f"{p.get('app', '')}/{p.get('key', '')}", str(p.get("profile", ""))),
                              {"status": None, "issues": {}})
        row["status"] = p.get("status")
        for issue in p.get("issues") or []:
            row["issues"].setdefault(issue.get("type"), issue)
    return [{"stream": k[0], "profile": k[1], "status": v["status"], "issues": list(v["issues"].values())}
            for k, v in rows.items()]


def render_html(report: dict[str, Any], events: list[dict[str, Any]] | None = None) -> str:
    esc = html.escape
    parts = [f"<!doctype html><html lang=en><head><meta charset=utf-8><title>tally — {esc(report['task'])}</title>",
             f"<style>{_CSS}</style></head><body>",
             f"<h1>{esc(report['task'])} — {esc(report['title'])}</h1>",
             f"<p class=sub>{esc(report['family'])} · report schema {esc(report['schema'])} · status {esc(report['status'])}</p>",
             f"<p><span class=score>{report['score']:.1f}</span> / 100</p>"]
    if not report["complete"]:
        parts.append(f"<p class=incomplete>Incomplete: {report['unjudged_weight']:g} points could not be judged "
                     "(see errors); they are not counted as the agent's failure.</p>")
    parts.append("<table><tr><th>check</th><th>weight</th><th>score</th><th>status</th><th>message</th></tr>")
    for c in report["checks"]:
        colour = _COLOURS[c["status"]]
        parts.append(
            f"<tr><td>{esc(c['name'])}</td><td>{c['weight']:g}</td><td><div class=bar><span style='width:"
            f"{100 * c['score']:.0f}%;background:{colour}'></span></div>{c['score']:.3f}</td>"
            f"<td class=st style='color:{colour}'>{esc(c['status'])}</td><td>{esc(c['message'])}</td></tr>")
    parts.append("</table>")
    for c in report["checks"]:
        plots = check_plots(c)
        parts.append(f"<h3>{esc(c['name'])}</h3>")
        parts.extend(f"<figure>{svg}</figure>" for svg in plots)
        parts.append(f"<details><summary>evidence</summary><pre>{esc(json.dumps(c['evidence'], indent=2))}</pre></details>")
    if report["errors"]:
        parts.append("<h2>Errors (not judged)</h2><ul>")
        parts.extend(f"<li><b>{esc(e['check'])}</b> ({e['weight']:g} pts): {esc(e['message'])}</li>"
                     for e in report["errors"])
        parts.append("</ul>")
    health = stream_health_rows(events) if events else []
    if health:
        parts.append("<h2>Ingest stream health</h2><table><tr><th>stream</th><th>profile</th>"
                     "<th>last status</th><th>issues raised during the run</th></tr>")
        for row in health:
            issues = "; ".join(f"{i.get('type')} ({i.get('severity')}): {i.get('measured')} vs {i.get('limit')}"
                               f" from {i.get('since_s')} s" for i in row["issues"]) or "none"
            parts.append(f"<tr><td>{esc(row['stream'])}</td><td>{esc(row['profile'])}</td>"
                         f"<td>{esc(str(row['status']))}</td><td>{esc(issues)}</td></tr>")
        parts.append("</table>")
    if events:
        plots = run_plots(events)
        if plots:
            parts.append("<h2>Live evidence</h2>")
            for title, svg in plots:
                parts.append(f"<h3>{esc(title)}</h3><figure>{svg}</figure>")
    if report.get("notes"):
        parts.append("<h2>Notes</h2>")
        parts.extend(f"<pre>{esc(n)}</pre>" for n in report["notes"])
    parts.append("</body></html>\n")
    return "".join(parts)


def write_html_report(report: dict[str, Any], path: Path, events: list[dict[str, Any]] | None = None) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(report, events), encoding="utf-8")
    return path
