"""`tally demo`: what `make demo` runs, on embedded defaults with nothing else to configure."""

from __future__ import annotations

import argparse

from monitor.commands import selftest


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run the demo on embedded defaults")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    ns = argparse.Namespace(family=None, task=None, seed=args.seed, keep=None, json=False)
    return selftest.run(ns)
