"""`tally ingest`: the RTMP ingest standalone, printing its events as JSON lines on stdout.

The rtmp package reports through a callback; here that callback feeds the monitor's EventBus,
whose sink prints each event (and, with --log, appends it to a JSON-lines file). SIGINT/SIGTERM
stop the server cleanly, so every recording is finalised before exit.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import TextIO

from monitor.bus import EventBus
from monitor.cli import UserError
from monitor.events import Event


def _hostport(text: str, default_port: int) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = text, str(default_port)
    try:
        port_n = int(port)
    except ValueError:
        raise UserError(f"bad address {text!r}: port must be a number") from None
    if not 0 <= port_n <= 65535:
        raise UserError(f"bad address {text!r}: port out of range")
    return host.strip("[]") or "127.0.0.1", port_n


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ingest", help="run the RTMP ingest (record + measure publishers)")
    p.add_argument("--listen", default="127.0.0.1:1935", help="RTMP address (default 127.0.0.1:1935)")
    p.add_argument("--record", type=Path, required=True, metavar="DIR",
                   help="recordings go to DIR/<app>/<key>/<UTC time>.flv")
    p.add_argument("--api", default=None, metavar="HOST:PORT", help="serve /api/streams and /metrics here")
    keys = p.add_mutually_exclusive_group(required=True)
    keys.add_argument("--key", action="append", default=[], metavar="APP/KEY",
                      help="allowed app and stream key, e.g. live/abc (repeatable); a bare KEY means live/KEY")
    keys.add_argument("--allow-any", action="store_true", help="accept any (safe) stream key")
    p.add_argument("--quiet-stats", action="store_true", help="do not print the 1 Hz stats events")
    p.add_argument("--log", type=Path, default=None, help="also append events to this JSON-lines file")
    p.add_argument("--handshake-timeout", type=float, default=10.0, metavar="S")
    p.add_argument("--idle-timeout", type=float, default=30.0, metavar="S",
                   help="drop a connection that completes no message (publishing: no media) for S seconds")
    p.add_argument("--profile", default="", metavar="NAMES",
                   help="check every stream against platform profiles: youtube,twitch,broadcast or YAML paths")
    p.add_argument("--max-connections", type=int, default=256, metavar="N")
    p.add_argument("--max-connections-per-address", type=int, default=64, metavar="N")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rtmp.api import ApiServer
    from rtmp.platforms import ProfileError, load_profiles
    from rtmp.server import IngestConfig, IngestServer
    from rtmp.streams import name_problem

    host, port = _hostport(args.listen, 1935)
    api_addr = _hostport(args.api, 8181) if args.api else None
    allowed: set[str] = set()
    for entry in args.key:
        app, sep, key = entry.rpartition("/")
        app = app if sep else "live"
        for what, name in (("app", app), ("stream key", key)):
            problem = name_problem(name)
            if problem:
                raise UserError(f"{what} {name!r} in --key {entry!r} is unusable: {problem}")
        allowed.add(f"{app}/{key}")
    for name, value in (("--idle-timeout", args.idle_timeout), ("--handshake-timeout", args.handshake_timeout),
                        ("--max-connections", args.max_connections),
                        ("--max-connections-per-address", args.max_connections_per_address)):
        if not value > 0 or value != value:
            raise UserError(f"{name} must be positive")
    try:
        args.record.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create record dir {args.record}: {exc.strerror}") from None
    profiles = [n.strip() for n in args.profile.split(",") if n.strip()]
    try:
        load_profiles(profiles)
    except ProfileError as exc:
        raise UserError(f"--profile: {exc}") from None
    config = IngestConfig(profiles=profiles, host=host, port=port, record_dir=args.record, allowed_keys=allowed,
                          allow_any=args.allow_any, handshake_timeout_s=args.handshake_timeout,
                          idle_timeout_s=args.idle_timeout, max_connections=args.max_connections,
                          max_connections_per_address=args.max_connections_per_address)
    log_file: TextIO | None = None
    if args.log:
        try:
            log_file = open(args.log, "a", encoding="utf-8")  # closed below
        except OSError as exc:
            raise UserError(f"cannot open log {args.log}: {exc.strerror}") from None

    def sink(event: Event) -> None:
        line = event.to_json()
        if not (args.quiet_stats and event.kind == "stats"):
            print(line, flush=True)
        if log_file is not None:
            log_file.write(line + "\n")
            log_file.flush()

    async def main() -> None:
        bus = EventBus()
        bus.add_sink(sink)
        server = IngestServer(config, lambda kind, payload: bus.emit("rtmp", kind, payload))
        api = ApiServer(server, *api_addr) if api_addr else None
        try:
            await server.start()
        except OSError as exc:
            raise UserError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
        try:
            if api is not None:
                try:
                    await api.start()
                except OSError as exc:
                    raise UserError(f"cannot serve API on {api_addr[0]}:{api_addr[1]}: {exc.strerror}") from None
                bus.emit("rtmp", "api_listening", {"host": api.host, "port": api.port})
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)
            await stop.wait()
        finally:
            await server.stop()
            if api is not None:
                await api.stop()
            await bus.stop()

    try:
        asyncio.run(main())
    finally:
        if log_file is not None:
            log_file.close()
    print("tally ingest: stopped, recordings closed", file=sys.stderr)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    return 0
