"""`tally vmix-emulator --script FILE`: serve the vMix HTTP and TCP APIs from a scripted timeline.

For trying the vMix observer (or any vMix client) on a machine without vMix. Binds 127.0.0.1 by
default; prints each scripted change as it happens; stops at the end of the script (its last step
or `duration_s`) unless --hold is given, or on Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import sys
import time

from monitor.cli import UserError
from monitor.emulators.vmix import AppliedChange, Script, ScriptError, VmixEmulator, load_script


def _addr(text: str) -> tuple[str, int]:
    """HOST:PORT (HOST an IP address); argparse turns the ValueError into a usage error."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"host must be an IP address, got {host!r}") from None
    return host.strip("[]"), int(port)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("vmix-emulator", help="emulate vMix's HTTP/TCP API from a scripted timeline",
                       description="Serve GET /api and the TCP API (XML, TALLY, SUBSCRIBE TALLY/ACTS) "
                                   "with state following a YAML/JSON script (see docs/vmix.md).")
    p.add_argument("--script", required=True, metavar="FILE", help="timeline script (.yaml/.yml/.json)")
    p.add_argument("--http", type=_addr, default=("127.0.0.1", 8088), metavar="HOST:PORT",
                   help="HTTP API address (default 127.0.0.1:8088)")
    p.add_argument("--tcp", type=_addr, default=("127.0.0.1", 8099), metavar="HOST:PORT",
                   help="TCP API address (default 127.0.0.1:8099)")
    p.add_argument("--time-scale", type=float, default=1.0,
                   help="multiply every step time by this (0.1 runs a 30 s script in 3 s)")
    p.add_argument("--hold", action="store_true", help="keep serving after the last step (until Ctrl-C)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        script = load_script(args.script)
    except ScriptError as exc:
        raise UserError(str(exc)) from None
    if not args.time_scale > 0:
        raise UserError("--time-scale must be > 0")
    return asyncio.run(_serve(script, args))


async def _serve(script: Script, args: argparse.Namespace) -> int:
    emu = VmixEmulator(script, http=args.http, tcp=args.tcp, time_scale=args.time_scale)

    def show(change: AppliedChange) -> None:
        assert emu.t0_ns is not None
        t_s = (change.mono_ns - emu.t0_ns) / 1e9
        print(f"{t_s:8.3f} s  {change.actions}  program={change.active} preview={change.preview} "
              f"tally={change.tally}", flush=True)

    emu.on_change.append(show)
    try:
        await emu.start()
    except OSError as exc:
        raise UserError(f"cannot listen: {exc.strerror or exc}") from None
    try:
        print(f"vMix emulator: http://{args.http[0]}:{emu.http_port}/api  tcp {args.tcp[0]}:{emu.tcp_port}  "
              f"({len(script.steps)} steps, ends at {emu.timeline_end_s():.1f} s)", flush=True)
        await emu.wait_timeline()
        if args.hold:
            await asyncio.Event().wait()
        elif script.duration_s is not None and emu.t0_ns is not None:
            left_s = emu.t0_ns / 1e9 + script.duration_s * emu.time_scale - time.monotonic()
            if left_s > 0:
                await asyncio.sleep(left_s)
    finally:
        await emu.stop()
        print(f"vMix emulator stopped; write attempts received: {len(emu.function_calls)}", file=sys.stderr)
    return 0
