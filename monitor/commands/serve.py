"""`tally serve`: the daemon, controlled over MQTT (start a run, mark it done, abort)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from pathlib import Path

from monitor.cli import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="daemon: runs tasks on MQTT command, status retained")
    p.add_argument("--mqtt", metavar="URL", help="broker mqtt://host:port (default: an embedded one on 127.0.0.1)")
    p.add_argument("--node", help="node name in MQTT topics (default: host name)")
    p.add_argument("--runs", type=Path, default=Path("runs"), help="where run bundles go (default ./runs)")
    p.add_argument("--state", type=Path, default=Path(".tally-state"),
                   help="daemon state (the MQTT outbox survives restarts here)")
    p.add_argument("--ingest", default="127.0.0.1:1935", metavar="HOST:PORT")
    p.add_argument("--obs", metavar="URL")
    p.add_argument("--obs-proxy-port", type=int, metavar="PORT",
                   help="tally's obs-websocket proxy on 127.0.0.1:PORT for the agents' scripts (needs --obs)")
    p.add_argument("--vmix", metavar="URL")
    p.add_argument("--allow-root", type=Path, action="append", default=[], metavar="DIR",
                   help="a start's workdir and gt must lie inside one of these (repeatable); default: "
                        "anything but /, system directories and bare top-level directories")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from monitor.mqtt import topics
    from monitor.run.daemon import Daemon
    from monitor.run.serve_common import check_obs_proxy_port, open_feed
    from monitor.run.session import default_node

    host, _, port = args.ingest.rpartition(":")
    try:
        ingest_port = int(port)
    except ValueError:
        raise UserError(f"--ingest {args.ingest!r}: expected HOST:PORT") from None
    check_obs_proxy_port(args.obs_proxy_port, args.obs)
    node = args.node or default_node()
    for root in args.allow_root:
        if not root.is_absolute() or not root.is_dir() or root.resolve() == Path("/"):
            raise UserError(f"--allow-root {root}: must be an existing absolute directory other than /")
    daemon = Daemon(node, args.runs, ingest_host=host or "127.0.0.1", ingest_port=ingest_port,
                    obs_url=args.obs, vmix_url=args.vmix, obs_proxy_port=args.obs_proxy_port,
                    allow_roots=args.allow_root)

    async def main() -> None:
        async with contextlib.AsyncExitStack() as stack:
            feed = await open_feed(stack, args.mqtt, node, args.state / "outbox", daemon.on_command)
            print(f"tally serve: node {node}, broker {feed.broker}, commands on {topics.command(node)}",
                  file=sys.stderr, flush=True)
            await daemon.serve(feed)

    try:
        asyncio.run(main())
    except OSError as exc:
        raise UserError(str(exc)) from None
    return 0
