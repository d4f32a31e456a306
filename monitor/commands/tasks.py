"""`tally tasks`: the catalog, with which tasks have a scorer (and, with --where, where it is).

Fast by design: the scorers are not imported (verifiers.registry reads where they are from the
sources), so listing the catalog costs the catalog load only. The table is drawn by rich only on a
terminal; piped (`| grep`, a script) each task is one tab-separated line with the same columns, and
rich is not imported at all (its import and layout were ~35 % of the command's time, issue 17).
"""

from __future__ import annotations

import argparse
import json
import sys

from verifiers.catalog import FAMILIES, load_catalog
from verifiers.registry import scorer_index


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tasks", help="list the task catalog")
    p.add_argument("--family", choices=FAMILIES)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--where", action="store_true", help="each task's scorer module, class and file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    cat = load_catalog()
    index = scorer_index()
    done = set(index)
    tasks = [t for t in cat if not args.family or t.family == args.family]
    if getattr(args, "where", False) and not args.json:
        for t in tasks:
            w = index.get(t.id)
            print(f"{t.id}  {w.module}:{w.cls}  {w.path}" if w else f"{t.id}  (no scorer)")
        return 0
    if args.json:
        out = [{
            "id": t.id, "family": t.family, "title": t.title, "implemented": t.id in done,
            "scorer": ({"module": index[t.id].module, "class": index[t.id].cls} if t.id in done else None),
            "artifacts": [a.path for a in t.artifacts], "live": sorted(t.live), "emulated": t.emulated or None,
            "checks": [{"name": c.name, "weight": c.weight, "evidence": c.evidence, "params": c.params,
                        "group": c.group, "curve": c.curve.describe()} for c in t.checks],
            "weight_total": sum(c.weight for c in t.checks),
        } for t in tasks]
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    columns = ("id", "family", "impl", "live", "checks", "title")
    rows = [(t.id, t.family, "yes" if t.id in done else "-", ",".join(sorted(t.live)),
             " ".join(f"{c.name}:{c.weight:g}" for c in t.checks), t.title) for t in tasks]
    if not sys.stdout.isatty():
        print("\t".join(columns))
        for row in rows:
            print("\t".join(row))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"tally tasks ({len(tasks)})")
    for col in columns:
        table.add_column(col)
    for row in rows:
        table.add_row(*row)
    Console().print(table)
    return 0
