"""`tally demo`: what `make demo` runs, on embedded defaults with nothing else to configure."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="a real T05 run on embedded defaults (broker, ingest, synthetic publisher)")
    p.add_argument("--out", type=Path, help="where the demo's work dir and bundle go (default out/demo-<time>)")
    p.add_argument("--seconds", type=float, default=60.0, help="how long to publish (T05 asks for 60 s)")
    view = p.add_mutually_exclusive_group()
    view.add_argument("--tui", dest="tui", action="store_true", default=None, help="force the dashboard")
    view.add_argument("--plain", dest="tui", action="store_false", help="plain lines, no dashboard")
    p.add_argument("--hold", type=float, default=8.0, help="seconds the dashboard stays up after scoring")
    p.add_argument("--no-selftest", dest="selftest", action="store_false")
    pub = p.add_mutually_exclusive_group()
    pub.add_argument("--obs", dest="obs", action="store_true", default=None,
                     help="publish with a real headless OBS Studio (default when obs and Xvfb are installed)")
    pub.add_argument("--no-obs", dest="obs", action="store_false",
                     help="publish with the PyAV stand-in (OBS's profile is then not applicable)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from monitor.demo import main

    return main(args.out, args.seconds, args.tui, args.hold, args.selftest, args.obs)
