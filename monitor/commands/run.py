"""`tally run`: one supervised run of a task, from start to report.json."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from pathlib import Path

from monitor.cli import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="watch one task run live, record a bundle, score it")
    p.add_argument("task")
    p.add_argument("--workdir", required=True, type=Path)
    p.add_argument("--gt", required=True, type=Path)
    p.add_argument("--bundle", type=Path, help="bundle folder (default runs/<run id>)")
    p.add_argument("--obs", metavar="URL", help="obs-websocket, e.g. ws://127.0.0.1:4455")
    p.add_argument("--vmix", metavar="URL", help="vMix API, e.g. http://127.0.0.1:8088 (TCP API port: ?tcp=8099)")
    p.add_argument("--obs-log-dir", type=Path, metavar="DIR",
                   help="OBS's log folder, for the websocket request log (default: WORKDIR/obs-studio/logs)")
    p.add_argument("--obs-proxy-port", type=int, metavar="PORT",
                   help="run tally's obs-websocket proxy on 127.0.0.1:PORT; give the agent's script this port "
                        "and T17 reads every request it sends, exactly (needs --obs)")
    p.add_argument("--x-display", metavar="DISPLAY",
                   help="X display whose user input is recorded (default: $DISPLAY; '' for none)")
    p.add_argument("--mqtt", metavar="URL", help="broker mqtt://host:port (default: an embedded one on 127.0.0.1)")
    p.add_argument("--no-mqtt", action="store_true", help="no MQTT feed at all")
    p.add_argument("--node", help="node name in MQTT topics (default: host name)")
    p.add_argument("--ingest", default="127.0.0.1:1935", metavar="HOST:PORT", help="RTMP ingest address")
    p.add_argument("--timeout", type=float, metavar="S", help="end the run after S seconds")
    p.add_argument("--audit", choices=("auto", "fanotify", "inotify"), default="auto")
    p.add_argument("--tui", action="store_true", help="live dashboard")
    p.add_argument("--json", action="store_true", help="print report.json instead of the summary")
    p.set_defaults(func=run)


def _hostport(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    try:
        return host or "127.0.0.1", int(port)
    except ValueError:
        raise UserError(f"--ingest {text!r}: expected HOST:PORT") from None


def run(args: argparse.Namespace) -> int:
    from monitor.run.serve_common import check_obs_proxy_port, open_feed
    from monitor.run.session import RunConfig, RunSession, default_node

    if args.timeout is not None and args.timeout <= 0:
        raise UserError("--timeout must be positive")
    for name in ("workdir", "gt"):
        if not getattr(args, name).is_dir():
            raise UserError(f"--{name} {getattr(args, name)} is not a directory")
    check_obs_proxy_port(args.obs_proxy_port, args.obs)
    tui = args.tui
    if tui and (args.no_mqtt or not sys.stdout.isatty()):
        why = "--no-mqtt" if args.no_mqtt else "stdout is not a terminal"
        print(f"tally run: --tui needs the MQTT feed and a terminal ({why}); printing plain lines", file=sys.stderr)
        tui = False
    host, port = _hostport(args.ingest)
    config = RunConfig(task_id=args.task, workdir=args.workdir, gt=args.gt, bundle_dir=args.bundle,
                       node=args.node or default_node(), timeout_s=args.timeout, obs_url=args.obs,
                       vmix_url=args.vmix, ingest_host=host, ingest_port=port, audit_mode=args.audit,
                       obs_log_dir=args.obs_log_dir, x_display=args.x_display,
                       obs_proxy_port=args.obs_proxy_port)

    async def main() -> dict:
        try:
            session = RunSession(config)
        except KeyError as exc:
            raise UserError(str(exc.args[0])) from None
        async with contextlib.AsyncExitStack() as stack:
            if not args.no_mqtt:
                session.feed = await open_feed(stack, args.mqtt, config.node,
                                               session.bundle_dir / ".mqtt-outbox", session.on_command,
                                               remove_when_drained=True)
            print(f"tally run: {session.run_id} → {session.bundle_dir}", file=sys.stderr)
            print(f"tally run: done with `touch {session.done.done_file}`, SIGUSR1, or an MQTT "
                  f"{{\"cmd\":\"done\"}} on {_cmd_topic(config.node)}", file=sys.stderr)
            dash_task = _start_dash(session, config.node) if tui else None
            try:
                result = await session.execute()
            finally:
                if dash_task is not None:
                    await _stop_dash(dash_task)
        return result.report

    try:
        report = asyncio.run(main())
    except OSError as exc:
        raise UserError(str(exc)) from None
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False))
    else:
        from monitor.render import print_report

        print_report(report)
    return 0


def _start_dash(session, node: str):  # type: ignore[no-untyped-def]
    """The Textual dashboard in this event loop, fed from this run's MQTT topics."""
    from monitor.dash.app import TallyDash, mqtt_source
    from monitor.mqtt import topics

    assert session.feed is not None
    app = TallyDash(mqtt_source(f"mqtt://{session.feed.broker.host}:{session.feed.broker.port}",
                                topic=topics.run_events(node, session.run_id)), title=session.run_id)
    return app, asyncio.get_running_loop().create_task(app.run_async())


async def _stop_dash(handle) -> None:  # type: ignore[no-untyped-def]
    app, task = handle
    app.exit()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(task, 5)


def _cmd_topic(node: str) -> str:
    from monitor.mqtt import topics

    return topics.command(node)
