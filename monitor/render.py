"""Terminal rendering of reports and self-test tables (rich)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

_STYLE = {"pass": "green", "partial": "yellow", "fail": "red", "error": "magenta"}


def print_report(report: dict[str, Any], console: Console | None = None) -> None:
    console = console or Console()
    table = Table(title=f"{report['task']}  {report['title']}")
    for col in ("check", "weight", "score", "status", "message"):
        table.add_column(col)
    for c in report["checks"]:
        table.add_row(c["name"], f"{c['weight']:g}", f"{c['score']:.3f}",
                      f"[{_STYLE[c['status']]}]{c['status']}[/]", c["message"][:100])
    console.print(table)
    line = f"score {report['score']:.2f} / 100"
    if not report["complete"]:
        line += f"  [magenta]INCOMPLETE: {report['unjudged_weight']:g} points could not be judged[/]"
    console.print(line)


def print_selftest(results: list[dict[str, Any]], console: Console | None = None) -> None:
    console = console or Console()
    table = Table(title="tally selftest")
    for col in ("task", "oracle", "nothing", "mutants", "result"):
        table.add_column(col)
    for r in results:
        muts = r["mutants"]
        good = sum(1 for m in muts.values() if m["ok"])
        table.add_row(r["task"], _num(r["oracle"]), _num(r["nothing"]), f"{good}/{len(muts)}",
                      "[green]ok[/]" if r["ok"] else "[red]FAIL[/]")
    console.print(table)
    for r in results:
        for p in r["problems"]:
            console.print(f"[red]{r['task']}[/]: {p}")


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"
