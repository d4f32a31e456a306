"""T17's request evidence, both ways, on the same real runs: tally's proxy vs OBS's debug log.

Each run starts a headless OBS 29 (debug log on, password set), tally's log follower and proxy,
and runs T17's oracle script (17 requests, tests/streaming/real_obs.build_weekly_stream) through
the proxy while tally's read-only observer-style reader polls OBS directly, so the log is under
the same load it has in a real run. Printed per run and in total: requests the script sent, how
many each source reported, how many carry OBS's answer (`ok` not null), and inputs named. Then
the relay's cost: the round-trip time of GetVersion straight to OBS and through the proxy,
interleaved, median of each and their ratio (the reference measured in the same run).

    .venv/bin/python bench/ws_evidence.py [--runs N] [--rtt-requests N]
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.streaming.real_obs (the oracle script)

from monitor.bus import EventBus
from monitor.events import Event
from monitor.observers.obs_log import ObsLogFollower
from monitor.observers.obs_ws_proxy import SOURCE, ObsWsProxy
from tests.streaming.real_obs import build_weekly_stream, weekly_obs

SENT = 17  # build_weekly_stream's requests: 3 CreateScene, 7 CreateInput, 7 others


def _poll_directly(port: int, password: str, stop: threading.Event) -> None:
    """Another client reading OBS while the script runs (as tally's observer does)."""
    import obsws_python as obsws

    c = obsws.ReqClient(host="127.0.0.1", port=port, password=password, timeout=10)
    try:
        while not stop.is_set():
            c.get_scene_list()
            c.get_input_list()
            time.sleep(0.02)
    finally:
        c.disconnect()


def _script(port: int, password: str, workdir: Path) -> None:
    import obsws_python as obsws

    c = obsws.ReqClient(host="127.0.0.1", port=port, password=password, timeout=10)
    try:
        build_weekly_stream(c, workdir)
    finally:
        c.disconnect()


def _rtts(direct_port: int, proxy_port: int, password: str, n: int) -> tuple[list[float], list[float]]:
    import obsws_python as obsws

    direct = obsws.ReqClient(host="127.0.0.1", port=direct_port, password=password, timeout=10)
    via = obsws.ReqClient(host="127.0.0.1", port=proxy_port, password=password, timeout=10)
    out: tuple[list[float], list[float]] = ([], [])
    try:
        for _ in range(n):
            for client, times in ((direct, out[0]), (via, out[1])):
                t0 = time.perf_counter()
                client.get_version()
                times.append((time.perf_counter() - t0) * 1000)
    finally:
        direct.disconnect()
        via.disconnect()
    return out


def _summary(got: list[Event], source: str) -> tuple[int, int, int]:
    reqs = [e.payload for e in got if e.source == source and e.kind == "ws/request"
            and e.payload.get("client") == "other" and e.payload.get("request_type") != "GetSceneList"
            and e.payload.get("request_type") != "GetInputList" and e.payload.get("request_type") != "GetVersion"]
    answered = sum(1 for r in reqs if r.get("ok") is not None)
    named = sum(1 for r in reqs if r.get("request_type") == "CreateInput" and r.get("names", {}).get("inputName"))
    return len(reqs), answered, named


async def one_run(i: int, root: Path, rtt_n: int) -> tuple[tuple[int, int, int], tuple[int, int, int], tuple]:
    password = "pw-" + secrets.token_hex(6)
    bus = EventBus()
    got: list[Event] = []
    bus.add_sink(got.append)
    workdir = root / f"w{i}"
    workdir.mkdir()
    async with weekly_obs(password) as o:
        follower = ObsLogFollower(bus, o.config_dir / "logs", poll_s=0.1)
        await follower.start()
        proxy = ObsWsProxy(bus, "127.0.0.1", o.ws_port)
        await proxy.start()
        stop = threading.Event()
        poller = asyncio.create_task(asyncio.to_thread(_poll_directly, o.ws_port, password, stop))
        await asyncio.sleep(0.3)
        await asyncio.to_thread(_script, proxy.port, password, workdir)
        await asyncio.sleep(0.3)
        stop.set()
        await poller
        rtts = await asyncio.to_thread(_rtts, o.ws_port, proxy.port, password, rtt_n) if rtt_n else ([], [])
        await asyncio.sleep(1.5)  # the follower reports a request without a readable reply after 1 s
        await proxy.stop()
        await follower.stop()
        await o.astop()
    return _summary(got, SOURCE), _summary(got, "obs"), rtts


async def main(runs: int, rtt_n: int) -> None:
    totals = {"proxy": [0, 0, 0], "log": [0, 0, 0]}
    direct_all: list[float] = []
    via_all: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'run':>4} | {'proxy: reported answered inputs named':>38} | {'OBS log: reported answered inputs named':>40}")
        for i in range(runs):
            proxy, log, (direct, via) = await one_run(i, Path(tmp), rtt_n)
            direct_all += direct
            via_all += via
            for k, v in (("proxy", proxy), ("log", log)):
                totals[k] = [a + b for a, b in zip(totals[k], v, strict=True)]
            print(f"{i + 1:>4} | {proxy[0]:>15}/{SENT} {proxy[1]:>8} {proxy[2]:>9}/7 | "
                  f"{log[0]:>16}/{SENT} {log[1]:>8} {log[2]:>10}/7", flush=True)
    n = runs * SENT
    for k, (rep, ans, named) in totals.items():
        print(f"{k:>5}: {rep}/{n} requests reported, {ans}/{n} with OBS's answer, {named}/{runs * 7} inputs named")
    if direct_all:
        d, v = statistics.median(direct_all), statistics.median(via_all)
        print(f"GetVersion round trip, median of {len(direct_all)}: direct {d:.2f} ms, through the proxy {v:.2f} ms, "
              f"ratio {v / d:.2f}x (+{v - d:.2f} ms)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rtt-requests", type=int, default=200)
    args = ap.parse_args()
    asyncio.run(main(args.runs, args.rtt_requests))
