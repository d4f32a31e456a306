"""`tally sweep`: score many runs, resumably, and report the statistics benchmarks publish.

    tally sweep score INPUT... --out DIR [--workers N] [--ray auto|ADDRESS [--ship]] [--gt-root DIR]
                      [--label agent=NAME]
    tally sweep report DIR [--pass-line 99] [--compare agent=A,B] [--html]
    tally sweep collect --mqtt URL --out DIR [--seconds S]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from monitor.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sweep", help="score many runs (pool or Ray), resumably; statistics over repeats")
    ss = p.add_subparsers(dest="sweep_command", metavar="SWEEP_COMMAND")
    sc = ss.add_parser("score", help="score bundle dirs, folders of bundles or JSONL items into DIR/results.jsonl")
    sc.add_argument("inputs", nargs="+", type=Path, metavar="INPUT")
    sc.add_argument("--out", required=True, type=Path, metavar="SWEEP_DIR")
    sc.add_argument("--workers", type=int, help="local worker processes (default: one per CPU)")
    sc.add_argument("--ray", metavar="auto|ADDRESS", help="score on Ray: 'auto' (the local cluster, else a new one) "
                                                         "or a cluster address (host:port, ray://...)")
    sc.add_argument("--ship", action="store_true", help="with --ray: send each item's files through Ray's object "
                                                       "store instead of reading them from a shared path")
    sc.add_argument("--gt-root", type=Path, metavar="DIR", help="where bundles' hidden GT dirs are (by id or sha256)")
    sc.add_argument("--label", action="append", default=[], metavar="KEY=VALUE",
                    help="label every item (e.g. agent=NAME); a JSONL line's own labels win")
    sc.set_defaults(func=run_score)
    rp = ss.add_parser("report", help="statistics of a sweep (JSON, and HTML with plots)")
    rp.add_argument("sweep_dir", type=Path, metavar="SWEEP_DIR")
    rp.add_argument("--pass-line", type=float, default=99.0, help="score that counts as a pass (default 99)")
    rp.add_argument("--compare", metavar="KEY=A,B", help="paired comparison of two label values on shared tasks "
                                                        "(default: the two agents, when there are two)")
    rp.add_argument("--html", action="store_true", help="also write SWEEP_DIR/report.html")
    rp.add_argument("--json", action="store_true", help="print the report JSON")
    rp.set_defaults(func=run_report)
    co = ss.add_parser("collect", help="results.jsonl from every node's run/+/score on an MQTT broker")
    co.add_argument("--mqtt", required=True, metavar="URL")
    co.add_argument("--out", required=True, type=Path, metavar="SWEEP_DIR")
    co.add_argument("--seconds", type=float, help="stop after this long (default: until interrupted)")
    co.add_argument("--count", type=int, help="stop after this many new rows")
    co.set_defaults(func=run_collect)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_score(args: argparse.Namespace) -> int:
    from monitor.sweep.items import discover, parse_labels
    from monitor.sweep.runner import run_sweep

    try:
        labels = parse_labels(args.label)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if args.ship and not args.ray:
        raise UserError("--ship needs --ray")
    if args.workers is not None and args.workers < 1:
        raise UserError("--workers must be at least 1")
    if args.ray:
        try:
            import ray  # noqa: F401
        except ImportError:
            raise UserError("--ray needs Ray: pip install 'tally[ray]'") from None
    items = discover(args.inputs, labels)
    if not items:
        raise UserError("no items found in " + ", ".join(map(str, args.inputs)))
    summary = run_sweep(items, args.out, workers=args.workers, gt_root=args.gt_root, ray_address=args.ray,
                        ship=args.ship)
    nodes = ", ".join(f"{k[:12]}: {v}" for k, v in sorted(summary.nodes.items()))
    print(f"tally sweep: {summary.items} items, {summary.skipped} already scored, {summary.scored} scored, "
          f"{summary.failed} failed, {summary.elapsed_s:.1f} s ({summary.backend}{'; ' + nodes if nodes else ''}); "
          f"results in {args.out / 'results.jsonl'}")
    return 0


def run_report(args: argparse.Namespace) -> int:
    from monitor.bundle import write_json_atomic
    from monitor.sweep.report import build_report

    if not (args.sweep_dir / "results.jsonl").is_file():
        raise UserError(f"{args.sweep_dir}: no results.jsonl (run tally sweep score first)")
    compare = None
    if args.compare:
        key, _, pair = args.compare.partition("=")
        a, _, b = pair.partition(",")
        if not key or not a or not b:
            raise UserError(f"--compare {args.compare!r}: expected KEY=A,B")
        compare = (key, a, b)
    rep = build_report(args.sweep_dir, pass_line=args.pass_line, compare=compare)
    write_json_atomic(args.sweep_dir / "report.json", rep)
    if args.html:
        from monitor.sweep.html import write_sweep_html

        write_sweep_html(rep, args.sweep_dir / "report.html")
    if args.json:
        sys.stdout.write(json.dumps(rep, indent=2, sort_keys=True) + "\n")
    else:
        _print_summary(rep)
    return 0


def _print_summary(rep: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"sweep: {rep['rows']} items, pass line {rep['pass_line']:g}")
    for col in ("group", "n", "unscored", "mean", "95 % CI", "pass", "pass@k", "pass^k"):
        table.add_column(col)

    def add(name: str, s: dict) -> None:
        ci = "–" if not s["ci95"] else f"{s['ci95'][0]:.1f}–{s['ci95'][1]:.1f}"
        table.add_row(name, str(s["n"]), f"{s['unscored_rate']:.2f}" if s["unscored_rate"] is not None else "–",
                      "–" if s["mean"] is None else f"{s['mean']:.2f}", ci,
                      "–" if s["pass_rate"] is None else f"{s['pass_rate']:.2f}",
                      " ".join(f"{v:.2f}" for v in s["pass_at_k"].values()),
                      " ".join(f"{v:.2f}" for v in s["pass_hat_k"].values()))

    add("all", rep["overall"])
    for fam, s in rep["by_family"].items():
        add(f"family {fam}", s)
    for lk, groups in rep["by_label"].items():
        if lk in ("agent", "model"):
            for v, s in groups.items():
                add(f"{lk} {v}", s)
    Console().print(table)
    p = rep.get("paired")
    if p and p["mean_diff"] is not None:
        print(f"paired {p['label']} {p['a']} − {p['b']} over {p['tasks']} tasks: {p['mean_diff']:+.2f} "
              f"(95 % CI {p['ci95'][0]:+.2f} … {p['ci95'][1]:+.2f})")


def run_collect(args: argparse.Namespace) -> int:
    import asyncio

    from monitor.mqtt.topics import parse_broker_url
    from monitor.sweep.collect import collect

    try:
        address = parse_broker_url(args.mqtt)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    n = asyncio.run(collect(address, args.out, seconds=args.seconds, count=args.count))
    print(f"tally sweep collect: {n} new rows in {args.out / 'results.jsonl'}")
    return 0
