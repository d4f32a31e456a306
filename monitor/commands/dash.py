"""`tally dash`: the Textual dashboard over an MQTT feed or a recorded bundle."""

from __future__ import annotations

import argparse
from pathlib import Path

from monitor.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("dash", help="Textual dashboard of a live run (MQTT) or a recorded bundle")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--mqtt", help="broker URL, e.g. mqtt://127.0.0.1:1883")
    src.add_argument("--bundle", type=Path, help="a run bundle folder")
    p.add_argument("--speed", type=float, default=0.0, help="bundle replay speed (0 = at once, 1 = real time)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from monitor.dash.app import TallyDash, bundle_source, mqtt_source

    if args.bundle is not None:
        if not args.bundle.is_dir():
            raise UserError(f"{args.bundle}: not a bundle directory")
        app = TallyDash(bundle_source(args.bundle, args.speed), title=str(args.bundle))
    else:
        app = TallyDash(mqtt_source(args.mqtt), title=args.mqtt)
    app.run()
    return 0
