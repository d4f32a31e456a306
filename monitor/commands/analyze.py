"""`tally analyze FILE [--json]`: what a media file holds (streams, rates, keyframes, loudness).

The measuring is verifiers.measure.summary; this module only prints. Unusable input (missing,
empty, truncated, NaN samples, not media) exits 2 with one line naming the problem.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from monitor.cli import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("analyze", help="probe a media file: streams, bitrate, keyframes, loudness")
    p.add_argument("file", type=Path)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def _fmt(value: object, unit: str = "") -> str:
    if value is None:
        return "-"
    return f"{value}{unit}"


def run(args: argparse.Namespace) -> int:
    from verifiers.measure.errors import MediaError
    from verifiers.measure.summary import analyze_file

    try:
        data = analyze_file(args.file)
    except MediaError as exc:
        raise UserError(str(exc)) from None
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(f"[bold]{args.file}[/bold]  format {data['format']}  duration {_fmt(data['duration_s'], ' s')}")
    for s in data["streams"]:
        table = Table(title=f"stream {s['index']}: {s['type']} ({s['codec']})", show_header=False)
        if s["type"] == "video":
            kf = s["keyframe_interval_s"]
            rows = [("size", f"{s['width']}x{s['height']}"), ("fps", _fmt(s["fps"])),
                    ("bitrate", _fmt(s["bitrate_bps"], " bit/s")),
                    ("keyframe interval", f"mean {_fmt(kf['mean'])} s, min {_fmt(kf['min'])}, max {_fmt(kf['max'])}")]
        else:
            loud = s["loudness"]
            rows = [("sample rate", _fmt(s["sample_rate_hz"], " Hz")), ("channels", _fmt(s["channels"])),
                    ("integrated", _fmt(loud["integrated_lufs"], " LUFS")), ("LRA", _fmt(loud["lra_lu"], " LU")),
                    ("true peak", _fmt(loud["true_peak_dbtp"], " dBTP")),
                    ("sample peak", _fmt(loud["sample_peak_dbfs"], " dBFS")),
                    ("max momentary", _fmt(loud["max_momentary_lufs"], " LUFS")),
                    ("max short-term", _fmt(loud["max_short_term_lufs"], " LUFS"))]
        for k, v in rows:
            table.add_row(k, v)
        console.print(table)
    return 0
