"""`tally synth`: write a synthetic task instance (inputs, GT, oracle, mutants)."""

from __future__ import annotations

import argparse
from pathlib import Path

from monitor.cli import UserError
from verifiers.scoring import UnusableInput
from verifiers.synth import synth_instance


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("synth", help="write a synthetic instance of a task")
    p.add_argument("task")
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        path = synth_instance(args.task, args.out, args.seed)
    except UnusableInput as exc:
        raise UserError(str(exc)) from None
    mutants = sorted(p.name for p in (path / "mutants").iterdir())
    print(f"{args.task}: instance in {path} (workdir/, gt/, oracle/, {len(mutants)} mutants: {', '.join(mutants)})")
    return 0
