"""`tally scenario run FILE`: play a timed scenario headless and judge its expectations.

Prints the timeline (each action's scheduled and actual time, lateness) and each expectation's
result with the measured latency. Exit 0 when everything passed, 1 when an expectation or action
failed, 2 for an unusable file or an unreachable display/OBS. The OBS password comes from the
environment (TALLY_OBS_PASSWORD by default), never from the command line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from urllib.parse import urlparse

from rich.console import Console
from rich.table import Table

from monitor.bus import EventBus
from monitor.cli import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scenario", help="play timed scenarios (focus windows, press keys) and judge them")
    ssub = p.add_subparsers(dest="scenario_command", metavar="ACTION")
    run_p = ssub.add_parser("run", help="run one scenario file against a display (and OBS)")
    run_p.add_argument("file")
    run_p.add_argument("--obs", metavar="URL", help="OBS websocket, e.g. ws://127.0.0.1:4455 (observed, read-only)")
    run_p.add_argument("--password-env", default="TALLY_OBS_PASSWORD", metavar="VAR",
                       help="environment variable holding the OBS websocket password")
    run_p.add_argument("--display", default=None, help="X display (default $DISPLAY)")
    run_p.add_argument("--obs-wait-s", type=float, default=20.0, metavar="S",
                       help="how long to wait for the OBS observer's first snapshot (default 20)")
    run_p.add_argument("--json", action="store_true", help="machine-readable result")
    run_p.add_argument("--realtime", action="store_true",
                       help="run the scenario thread SCHED_FIFO where permitted (steadier timing on a loaded host)")
    run_p.set_defaults(func=run)
    check_p = ssub.add_parser("check", help="validate scenario files without running them")
    check_p.add_argument("files", nargs="+")
    check_p.set_defaults(func=check)
    p.set_defaults(func=lambda _a: (p.print_help(), 2)[1])


def check(args: argparse.Namespace) -> int:
    from scenarios.loader import ScenarioError, load_scenario
    for f in args.files:
        try:
            sc = load_scenario(f)
        except ScenarioError as exc:
            raise UserError(str(exc)) from None
        print(f"{f}: ok ({len(sc.steps)} steps, {len(sc.expectations)} expectations)")
    return 0


def run(args: argparse.Namespace) -> int:
    from scenarios.loader import ScenarioError, load_scenario
    try:
        scenario = load_scenario(args.file)
    except ScenarioError as exc:
        raise UserError(str(exc)) from None
    result = asyncio.run(_play(scenario, args))
    data = result.to_dict()
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print_result(data)
    return 0 if result.passed else 1


async def _play(scenario, args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from scenarios.engine import run_scenario
    from scenarios.x11 import X11Driver, X11Error

    display = args.display or os.environ.get("DISPLAY")
    needs_x = any(s.action not in ("mark", "wait") for s in scenario.steps)
    driver = None
    if needs_x:
        try:
            driver = X11Driver(display)
        except X11Error as exc:
            raise UserError(str(exc)) from None
    bus = EventBus()
    start = None
    if args.obs:
        url, password = args.obs, os.environ.get(args.password_env, "")
        parse_ws_url(url)  # a bad URL is a usage error before anything starts

        async def start() -> ObserverHandle:  # type: ignore[misc]
            return await start_obs_events(bus, url, password, args.obs_wait_s)
    elif scenario.expectations:
        print("tally scenario: no --obs given; expectations on OBS state will find no events", file=sys.stderr)
    try:
        return await run_scenario(scenario, bus, driver, display, start, realtime=args.realtime)
    finally:
        if driver is not None:
            driver.close()


def parse_ws_url(url: str) -> tuple[str, int]:
    """(host, port) of an obs-websocket URL; UserError naming the expected form otherwise."""
    u = urlparse(url)
    if u.scheme not in ("ws", "wss") or not u.hostname:
        raise UserError(f"OBS websocket URL must look like ws://127.0.0.1:4455 (got {url!r})")
    try:
        return u.hostname, u.port or 4455
    except ValueError:
        raise UserError(f"bad port in OBS websocket URL {url!r}") from None


class ObserverHandle:
    """The product's OBS observer running as a task: the scenarios' EventSource (scenarios.engine)."""

    def __init__(self, observer, task: asyncio.Task) -> None:  # type: ignore[no-untyped-def]
        self.observer, self.task = observer, task

    async def stop(self) -> None:
        await self.observer.stop()
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.task
        self.observer.close()


async def start_obs_events(bus: EventBus, url: str, password: str, timeout_s: float = 20.0) -> ObserverHandle:
    """Start the read-only OBS observer (monitor/observers/obs) on the bus; return once its start
    snapshot is on the bus. The engine must have been created (subscribed) before this is called,
    so the start state reaches it. The one OBS client of this repo: scenarios have none."""
    from monitor.observers.obs import ObsObserver

    host, port = parse_ws_url(url)
    observer = ObsObserver(bus, host, port, password, env_file=None)
    handle = ObserverHandle(observer, asyncio.get_running_loop().create_task(observer.run()))
    deadline = time.monotonic() + timeout_s
    while observer.last_snapshot is None:
        if handle.task.done() or time.monotonic() > deadline:
            await handle.stop()
            why = f" ({observer.last_error})" if observer.last_error else ""
            raise UserError(f"no answer from OBS at {url} within {timeout_s:g} s{why}")
        await asyncio.sleep(0.05)
    return handle


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}"


def print_result(data: dict, console: Console | None = None) -> None:
    console = console or Console()
    t = Table(title=f"scenario {data['name']} — timeline")
    for col in ("step", "action", "argument", "scheduled ms", "actual ms", "late ms", "status"):
        t.add_column(col)
    for a in sorted(data["actions"], key=lambda a: (a["actual_ms"] is None, a["actual_ms"] or 0)):
        status = a["status"] if not a["error"] else f"{a['status']}: {a['error']}"
        t.add_row(a["step"], a["action"], a["arg"], _ms(a["scheduled_ms"]), _ms(a["actual_ms"]),
                  _ms(a["lateness_ms"]), status)
    console.print(t)
    e = Table(title="expectations")
    for col in ("id", "kind", "after", "result", "latency ms", "limit ms", "detail"):
        e.add_column(col)
    for r in data["expectations"]:
        e.add_row(r["id"], r["kind"], r["anchor"] or "-", "[green]pass[/]" if r["passed"] else "[red]FAIL[/]",
                  _ms(r["latency_ms"]), _ms(r["limit_ms"]), r["detail"])
    console.print(e)
    verdict = "[green]PASSED[/]" if data["passed"] else "[red]FAILED[/]"
    console.print(f"{verdict} in {data['duration_ms']:.0f} ms; {data['observed_events']} observed events")
