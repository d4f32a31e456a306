"""`tally selftest`: prove verifiers on synthetic instances (oracle ≈ 100, nothing ≈ 0, mutants)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.progress import Progress

from monitor.cli import UserError
from monitor.render import print_selftest
from verifiers.catalog import FAMILIES, load_catalog
from verifiers.registry import verifier_class
from verifiers.synth import selftest_task


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("selftest", help="self-test verifiers on synthetic instances")
    p.add_argument("--family", choices=FAMILIES)
    p.add_argument("--task", action="append",
                   help="task id, full or short (T11 with --family) (repeatable)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--keep", type=Path, help="keep the generated instances here")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def select_tasks(family: str | None, task_ids: list[str] | None) -> list[str]:
    cat = load_catalog()
    if task_ids:
        try:
            return [cat.resolve(t, family) for t in task_ids]
        except KeyError as exc:
            raise UserError(exc.args[0]) from None
    return [t.id for t in cat if (not family or t.family == family)]


def run(args: argparse.Namespace) -> int:
    ids = select_tasks(args.family, args.task)
    runnable = [t for t in ids if (cls := verifier_class(t)) is not None and cls(load_catalog().get(t)).has_synth]
    skipped = [t for t in ids if t not in runnable]
    results = []
    with Progress(transient=True, disable=args.json) as progress:
        bar = progress.add_task("selftest", total=len(runnable))
        for tid in runnable:
            r = selftest_task(tid, args.seed, args.keep,
                              progress=lambda msg: progress.update(bar, description=msg))
            results.append(r.to_dict())
            progress.advance(bar)
    ok = all(r["ok"] for r in results)
    if args.json:
        print(json.dumps({"ok": ok, "results": results, "not_implemented": skipped}, indent=2))
    else:
        print_selftest(results)
        print(f"{sum(r['ok'] for r in results)}/{len(results)} verifiers proven; "
              f"{len(skipped)} task(s) without a scorer or synth (not implemented, cannot pass)")
    return 0 if ok else 1
