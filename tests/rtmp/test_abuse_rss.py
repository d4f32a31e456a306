"""Issue 20 acceptance: memory attackers against a real `tally ingest` process, a good publisher
beside them. RSS is the server process's, read with psutil; the good stream's progress is read
from its own API (media seconds received per wall second while the attack runs).

Phase 1: one chunk-size-2 attacker holding two 16 MiB messages. Phase 2: five of them plus a
2-byte AAC flood (one timestamp). Limits: ≤ 64 MB growth per connection, ≤ 256 MB in all,
back within 10 s of them leaving; the good publisher keeps ≥ 95 % of real time.

The real-time rate is media seconds over the *server's* clock (`server_clock_s` of each page): the
test process itself is busy sending the attackers' bytes, so its own clock, read after a response
comes back, would add its scheduling delays to the denominator. On a machine busy with other work
the ingest can fall behind for want of a CPU, not for the attackers: the run-queue wait of the
ingest and of the good publisher (`tests/app_health.py`) is measured over the same window, and a
shortfall that waiting explains is retried once with the reason printed, then skipped, never
failed by chance. Memory bounds are asserted on every try.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.app_health import AppHealth, RunQueueWindow, retry_if_app_lagged, starved_health
from tests.rtmp.attackers import MIB, TinyAudioFlood, TinyChunkAttacker, rss_bytes
from tests.rtmp.helpers import FFMPEG, EncodeSpec, encode, free_port

pytestmark = [pytest.mark.timeout(180), pytest.mark.realtime]  # RSS and a good publisher's real-time rate: serial phase

PER_CONNECTION_LIMIT = 64 * 1000 * 1000
TOTAL_LIMIT = 256 * 1000 * 1000
RETURN_WITHIN_S = 10.0
#: "returned": within this much of the baseline taken before the attack
RETURN_SLACK = 24 * MIB
#: the good publisher's media seconds per server second across the attacks (issue 20's line)
REALTIME_LINE = 0.95


def _get(api_port: int, path: str) -> Any:
    return json.loads(urllib.request.urlopen(f"http://127.0.0.1:{api_port}{path}", timeout=10).read())


def _get_text(api_port: int, path: str) -> str:
    return str(urllib.request.urlopen(f"http://127.0.0.1:{api_port}{path}", timeout=10).read().decode())


def _start_server(rtmp_port: int, api_port: int, record_dir: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "monitor.cli", "ingest", "--listen", f"127.0.0.1:{rtmp_port}",
                             "--record", str(record_dir), "--api", f"127.0.0.1:{api_port}",
                             "--allow-any", "--quiet-stats"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


class _Sampler:
    """Peak RSS of the server and the good stream's (wall, media duration) while running."""

    def __init__(self, pid: int, api_port: int) -> None:
        self.pid, self.api_port = pid, api_port
        self.peak = 0
        self.progress: list[tuple[float, float]] = []
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            self.peak = max(self.peak, rss_bytes(self.pid))
            streams = await asyncio.to_thread(_get, self.api_port, "/api/streams?state=live")
            good = [s for s in streams["streams"] if s["key"] == "good"]
            if good:
                self.progress.append((float(streams["server_clock_s"]), float(good[0]["duration_s"])))
            await asyncio.sleep(0.1)

    def __enter__(self) -> _Sampler:
        self.peak = rss_bytes(self.pid)
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()

    def realtime_ratio(self) -> float:
        (w0, m0), (w1, m1) = self.progress[0], self.progress[-1]
        return (m1 - m0) / (w1 - w0)


async def _settle(pid: int, baseline: int) -> float:
    """Seconds until RSS is back near the baseline (inf if not within RETURN_WITHIN_S)."""
    start = time.monotonic()
    while time.monotonic() - start < RETURN_WITHIN_S:
        if rss_bytes(pid) <= baseline + RETURN_SLACK:
            return time.monotonic() - start
        await asyncio.sleep(0.25)
    return float("inf")


def test_memory_attackers_beside_a_good_publisher(tmp_path: Path, encode_cache: Path) -> None:
    src = encode(EncodeSpec(seconds=30, video_kbps=800), encode_cache)
    tries = iter(range(1, 3))

    def attempt() -> tuple[dict[str, Any], AppHealth]:
        return asyncio.run(_attack_round(tmp_path / f"try{next(tries)}", src))

    report = retry_if_app_lagged(attempt, lambda r: r["good_realtime_overall"] >= REALTIME_LINE)
    assert report["good_realtime_overall"] >= REALTIME_LINE, report


async def _attack_round(work: Path, src: Path) -> tuple[dict[str, Any], AppHealth]:
    """One server, one good publisher, both attack phases; memory bounds asserted here (they hold
    on any machine), the real-time rate and the machine's run-queue evidence returned."""
    rtmp_port, api_port = free_port(), free_port()
    server = _start_server(rtmp_port, api_port, work / "rec")
    good: asyncio.subprocess.Process | None = None
    report: dict[str, Any] = {}
    try:
        for _ in range(100):
            with contextlib.suppress(OSError):
                await asyncio.to_thread(_get, api_port, "/api/streams")
                break
            await asyncio.sleep(0.1)
        good = await asyncio.create_subprocess_exec(
            FFMPEG, "-v", "error", "-nostdin", "-re", "-i", str(src), "-c", "copy", "-f", "flv",
            f"rtmp://127.0.0.1:{rtmp_port}/live/good", stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL)
        for _ in range(300):
            streams = await asyncio.to_thread(_get, api_port, "/api/streams")
            if any(s["duration_s"] >= 1.5 for s in streams["streams"]):
                break
            await asyncio.sleep(0.1)
        baseline = rss_bytes(server.pid)
        assert good.pid is not None
        waits = RunQueueWindow({"ingest": server.pid, "good publisher": good.pid})
        waits.start()

        # Phase 1: one attacker.
        with _Sampler(server.pid, api_port) as one:
            a = TinyChunkAttacker(rtmp_port, "atk0")
            await a.hold()
            await asyncio.sleep(0.5)
            await a.complete()
            await asyncio.sleep(0.3)
            await a.leave()
        report["one_growth_mb"] = (one.peak - baseline) / 1e6
        report["one_return_s"] = await _settle(server.pid, baseline)

        # Phase 2: five attackers (more than the server-wide budget) and a tiny-message flood.
        with _Sampler(server.pid, api_port) as many:
            attackers = [TinyChunkAttacker(rtmp_port, f"atk{i}") for i in range(1, 6)]
            flood = TinyAudioFlood(rtmp_port, "flood")
            await asyncio.gather(*(x.hold() for x in attackers), flood.run(3.0))
            await asyncio.gather(*(x.complete() for x in attackers))
            await asyncio.sleep(0.5)
            for x in [*attackers, flood]:
                await x.leave()
        report["runqueue_wait_share"] = waits.stop()  # the same window as the rate: first sample to last
        report["many_growth_mb"] = (many.peak - baseline) / 1e6
        report["many_return_s"] = await _settle(server.pid, baseline)
        report["flood_sent"], report["flood_cut"] = flood.sent, flood.cut
        metrics = await asyncio.to_thread(_get_text, api_port, "/metrics")
        counters = {line.split()[0]: float(line.split()[1]) for line in metrics.splitlines()
                    if line.startswith(("tally_rtmp_budget_drops_total", "tally_rtmp_pending_bytes"))}
        report.update(counters)
        ratios = [one.realtime_ratio(), many.realtime_ratio()]
        report["good_realtime"] = ratios
        # the good publisher across both attacks, first sample to last: a short phase's own ratio
        # moves with where its ~0.1 s samples fall (seen 0.93 then 1.01, i.e. media caught up: a
        # -re publisher cannot run ahead of real time), so the whole attack period is what is judged
        (w0, m0), (w1, m1) = one.progress[0], many.progress[-1]
        report["good_realtime_overall"] = (m1 - m0) / (w1 - w0)
        streams = await asyncio.to_thread(_get, api_port, "/api/streams")
        assert not any(s["state"] == "live" and s["key"].startswith("atk") for s in streams["streams"])
        print("abuse RSS:", json.dumps(report))
        assert report["one_growth_mb"] * 1e6 <= PER_CONNECTION_LIMIT, report
        assert report["many_growth_mb"] * 1e6 <= TOTAL_LIMIT, report
        assert report["many_growth_mb"] * 1e6 / 6 <= PER_CONNECTION_LIMIT, report
        assert report["one_return_s"] <= RETURN_WITHIN_S and report["many_return_s"] <= RETURN_WITHIN_S, report
        # 5 × 32 MiB held > the 128 MiB server-wide budget: the biggest holders were dropped.
        assert counters["tally_rtmp_budget_drops_total"] >= 1, report
        assert counters["tally_rtmp_pending_bytes"] == 0, report
        assert server.poll() is None  # still up
        return report, starved_health(report["good_realtime_overall"], REALTIME_LINE, report["runqueue_wait_share"])
    finally:
        if good is not None and good.returncode is None:
            good.kill()
            await good.wait()
        server.terminate()
        server.communicate(timeout=20)
