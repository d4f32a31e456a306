"""`tally replay BUNDLE`: re-score a recorded run offline; same bundle, same report, byte for byte."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from monitor.bundle import REPORT_NAME, BundleError
from monitor.cli import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="re-score a run bundle offline")
    p.add_argument("bundle", type=Path)
    p.add_argument("--json", action="store_true", help="print the report as report.json would hold it")
    p.add_argument("--out", type=Path, help="also write the report here")
    p.add_argument("--gt-root", type=Path, metavar="DIR",
                   help="find the hidden GT here (by the manifest's GT id or sha256) instead of its recorded path")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from monitor.run.rescore import ReplayError, report_bytes, score_bundle

    try:
        report = score_bundle(args.bundle, gt_root=args.gt_root)
    except (BundleError, ReplayError) as exc:
        raise UserError(str(exc)) from None
    data = report_bytes(report)
    if args.out:
        args.out.write_bytes(data)
    if args.json:
        sys.stdout.write(data.decode("utf-8"))
    else:
        from monitor.render import print_report

        print_report(report)
        run_info = report["run"]
        recorded = args.bundle / REPORT_NAME
        same = recorded.is_file() and recorded.read_bytes() == data
        print(f"run {run_info['run_id']}: ended={run_info['ended']} events={run_info['event_count']} "
              f"clean={run_info['clean']} recorded report.json {'identical' if same else 'absent or different'}")
        if run_info.get("scored_from"):
            print(f"scored from the {run_info['scored_from']}"
                  + (f"; GT {(run_info.get('gt') or {}).get('id')} verified by sha256"
                     if (run_info.get("gt") or {}).get("verified") else ""))
        for item in run_info["missing"]:
            print(f"  missing: {item}")
    return 0
