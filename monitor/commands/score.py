"""`tally score`: score one task from a work dir, a GT dir and optionally recorded events."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from monitor.bundle import read_events
from monitor.cli import UserError
from monitor.render import print_report
from verifiers.scoring import UnusableInput, score_task


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("score", help="score a task's work dir against hidden GT")
    p.add_argument("task")
    p.add_argument("--workdir", required=True, type=Path)
    p.add_argument("--gt", required=True, type=Path)
    p.add_argument("--events", type=Path, help="events.jsonl of the run (live evidence)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--out", type=Path, help="also write report.json here")
    p.add_argument("--html", type=Path, help="also write a self-contained HTML report here")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    events = None
    if args.events is not None:
        if not args.events.is_file():
            raise UserError(f"events file {args.events} not found")
        log = read_events(args.events)
        events = [e.to_dict() for e in log.events]
    try:
        report = score_task(args.task, args.workdir, args.gt, events)
    except UnusableInput as exc:
        raise UserError(str(exc)) from None
    data = report.to_dict()
    if args.events is not None and log.problems:
        data["notes"].extend(log.problems)
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    if args.html:
        from monitor.html_report import write_html_report

        write_html_report(data, args.html, events)
    if args.json:
        print(text)
    else:
        print_report(data)
    return 0
