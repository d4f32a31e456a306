"""`tally` command line. Each subcommand lives in monitor/commands/<name>.py and exposes
`register(subparsers)`; modules not written yet are simply absent from the help.

Exit codes: 0 done (a score of any size is success), 1 a self-test or check failed,
2 unusable input (one line on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from monitor.errors import UserError

__all__ = ["UserError", "main"]

#: Subcommand modules, in help order. Each is monitor.commands.<name>.
COMMANDS = ("tasks", "score", "synth", "selftest", "analyze", "run", "serve", "replay", "demo", "ingest",
            "obs", "vmix_emulator", "scenario", "dash", "sweep")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """All subcommands, or only `only` (the command being run: importing every command module costs
    ~1 s of aiohttp/numpy/PyAV imports, and `tally tasks` must start in 0.5 s)."""
    parser = argparse.ArgumentParser(prog="tally", description="Watch media apps at work and score the result.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if only is None else (only,):
        importlib.import_module(f"monitor.commands.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    parser = build_parser(args_in[0] if args_in and args_in[0] in COMMANDS else None)
    args = parser.parse_args(args_in)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"tally {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"tally {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
