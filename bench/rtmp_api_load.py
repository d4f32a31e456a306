"""Benchmark: `GET /api/streams` with 1000 ended streams under 50 concurrent clients (issue 20).

The registry holds 1000 ended streams (each measured: 10 s of 30 fps video and AAC) and one live
stream; 50 aiohttp clients request the first page (default limit 100) and full pages
(`limit=1000`) in a loop for `--seconds`. Printed: request latency p50/p99 for both, and the
largest gap between the server's 1 Hz stats ticks meanwhile (the issue measured p99 5.3 s and
ticks 3–5 s apart when every request recomputed 1000 snapshots). The clients run in a child
process, so their own CPU does not delay the server's loop. Never asserted.

    .venv/bin/python bench/rtmp_api_load.py [--seconds 10] [--clients 50]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rtmp.api import ApiServer  # noqa: E402
from rtmp.server import IngestConfig, IngestServer  # noqa: E402


def _feed(rec: Any, seconds: int = 10) -> None:
    st = rec.stats
    st.video_codec, st.audio_codec = "h264", "aac"
    st.video_config = {"profile": "High", "width": 1920, "height": 1080}
    st.audio_config = {"sample_rate_hz": 48000, "channels": 2}
    for i in range(30 * seconds):
        st.on_video_frame(i * 1000 // 30, 25_000, i % 60 == 0)
    for i in range(seconds * 1000 // 21):
        st.on_audio_frame(i * 21, 400)


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


async def run(seconds: float, clients: int, big: int) -> dict[str, Any]:
    ticks: list[float] = []

    def on_event(kind: str, payload: dict[str, Any]) -> None:
        if kind == "stats":
            ticks.append(time.monotonic())

    server = IngestServer(IngestConfig(port=0, allow_any=True, profiles=["youtube", "twitch"]), on_event)
    await server.start()
    for i in range(1000):
        rec = server.registry.start("live", f"old{i}", "127.0.0.1:1")
        _feed(rec)
        server.registry.end(rec, "closed")
    _feed(server.registry.start("live", "now", "127.0.0.1:2"))
    api = ApiServer(server, "127.0.0.1", 0)
    await api.start()
    child = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--clients-child", str(api.port), str(seconds), str(clients), str(big),
        stdout=asyncio.subprocess.PIPE)
    out, _ = await child.communicate()
    lat = json.loads(out)
    await api.stop()
    await server.stop()
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    return {"lat": lat, "max_tick_gap_s": max(gaps) if gaps else float("nan"), "ticks": len(ticks)}


def clients_main(port: int, seconds: float, clients: int, big: int) -> None:
    """The child: `big` clients ask for limit=1000, the others for the default page."""
    lat: dict[str, list[float]] = {"page": [], "limit=1000": []}

    async def client(i: int, end: float) -> None:
        path = "/api/streams?limit=1000" if i < big else "/api/streams"
        name = "limit=1000" if i < big else "page"
        async with aiohttp.ClientSession() as http:
            while time.monotonic() < end:
                t0 = time.monotonic()
                async with http.get(f"http://127.0.0.1:{port}{path}") as resp:
                    await resp.read()
                lat[name].append(time.monotonic() - t0)

    async def all_clients() -> None:
        end = time.monotonic() + seconds
        await asyncio.gather(*(client(i, end) for i in range(clients)))

    asyncio.run(all_clients())
    print(json.dumps(lat))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--big", type=int, default=25, help="how many of the clients ask for limit=1000")
    args = ap.parse_args()
    res = asyncio.run(run(args.seconds, args.clients, args.big))
    print(f"\n/api/streams, 1000 ended + 1 live stream, {args.clients} concurrent clients "
          f"({args.big} asking for limit=1000), {args.seconds:g} s\n")
    print("| request | n | p50 ms | p99 ms |")
    print("|---|---|---|---|")
    for name, xs in res["lat"].items():
        if not xs:
            continue
        print(f"| {name} | {len(xs)} | {statistics.median(xs) * 1000:.1f} | {pct(xs, 0.99) * 1000:.1f} |")
    print(f"\nstats ticks meanwhile: {res['ticks']}, largest gap {res['max_tick_gap_s']:.2f} s (interval 1 s)")


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--clients-child":
        clients_main(int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    else:
        main()
