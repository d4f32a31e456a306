"""Benchmark: live probe delay, from an audio message's arrival at the ingest to its meter value,
through the growing recording (before) and through the per-stream tag tap (after), same stream.

One `ffmpeg -re -c copy` publisher of a pre-encoded 500 kbit/s stream (320x180 H.264 ~400k + AAC
96k) into an in-process ingest with the recording settings `tally run` uses when probes are on
(64 KiB buffer, flush every 250 ms of media). Two consumer threads decode its audio with
probes.sources.av.AvSource: one tails the recording (`live=True`), one reads a TagTap. For every
decoded block the delay is the time its RMS (the meter value) is computed minus the arrival time
of the AAC message with that timestamp (recorded on the loop when the session hands the tag to
the taps). Printed: p50/p99/max for both, after a 2 s warm-up; never asserted.

    .venv/bin/python bench/rtmp_probe_delay.py [--seconds 20] [--kbps 500]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from probes.sources.av import AvSource  # noqa: E402
from probes.types import AudioBlock  # noqa: E402
from rtmp.server import IngestConfig, IngestServer  # noqa: E402
from rtmp.tap import TagTap  # noqa: E402
from tests.rtmp.helpers import FFMPEG, EncodeSpec, encode, free_port  # noqa: E402


class ArrivalTap(TagTap):
    """Not read: only notes when each audio tag reached the taps (loop thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrival: dict[int, float] = {}

    def push(self, tag_type: int, ts_ms: int, body: bytes) -> None:
        if tag_type == 8:
            self.arrival.setdefault(ts_ms, time.monotonic())


def consume(name: str, source: AvSource, out: dict[str, list[tuple[int, float]]]) -> None:
    rows = out.setdefault(name, [])
    for item in source:
        if isinstance(item, AudioBlock):
            float(np.sqrt(np.mean(np.square(item.samples))))  # the meter value
            rows.append((round(item.t_s * 1000), time.monotonic()))


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


async def run(seconds: int, kbps: int, work: Path) -> dict[str, list[float]]:
    audio_kbps = 96
    spec = EncodeSpec(width=320, height=180, seconds=seconds, video_kbps=max(50, kbps - audio_kbps),
                      audio_kbps=audio_kbps)
    src = await asyncio.to_thread(encode, spec, work)
    port = free_port()
    results: dict[str, list[tuple[int, float]]] = {}
    arrival = ArrivalTap()
    threads: list[threading.Thread] = []
    server: IngestServer | None = None

    def on_event(kind: str, payload: dict[str, Any]) -> None:
        if kind != "publish" or server is None:
            return
        rec = server.registry.live[(payload["app"], payload["key"])]
        rec.taps.append(arrival)
        tap = server.open_tap(payload["app"], payload["key"])
        assert tap is not None
        done = threading.Event()
        sources = {"recording (before)": AvSource(payload["recording"], live=True, video=False, done=done.is_set),
                   "tag tap (after)": AvSource(tap, video=False, container_format="flv")}
        for name, s in sources.items():
            t = threading.Thread(target=consume, args=(name, s, results), daemon=True)
            t.start()
            threads.append(t)
        on_event.done = done  # type: ignore[attr-defined]

    server = IngestServer(IngestConfig(port=port, record_dir=work / "rec", allow_any=True), on_event)
    server.ctx.config.record_buffer_bytes = 64 * 1024  # what tally run sets when probes are on
    await server.start()
    proc = await asyncio.create_subprocess_exec(
        FFMPEG, "-v", "error", "-nostdin", "-re", "-i", str(src), "-c", "copy", "-f", "flv",
        f"rtmp://127.0.0.1:{port}/live/probe", stdout=asyncio.subprocess.DEVNULL)
    await proc.wait()
    await asyncio.sleep(0.5)
    getattr(on_event, "done", threading.Event()).set()
    await server.stop()
    for t in threads:
        await asyncio.to_thread(t.join, 10)
    first = min(arrival.arrival.values())
    delays: dict[str, list[float]] = {}
    for name, rows in results.items():
        delays[name] = [(t - arrival.arrival[ts]) * 1000 for ts, t in rows
                        if ts in arrival.arrival and arrival.arrival[ts] - first > 2.0]
    return delays


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--kbps", type=int, default=500)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tally-probe-delay-") as tmp:
        delays = asyncio.run(run(args.seconds, args.kbps, Path(tmp)))
    print(f"\nLive probe delay, audio message arrival → meter value, {args.kbps} kbit/s stream, "
          f"{args.seconds} s (after 2 s warm-up)\n")
    print("| path | blocks | p50 ms | p99 ms | max ms |")
    print("|---|---|---|---|---|")
    for name, xs in delays.items():
        print(f"| {name} | {len(xs)} | {statistics.median(xs):.1f} | {pct(xs, 0.99):.1f} | {max(xs):.1f} |")


if __name__ == "__main__":
    main()
