"""Benchmark: tally's RTMP ingest against nginx-rtmp, same publishers, same run.

N concurrent `ffmpeg -re -c copy` publishers of one pre-encoded 1080p30 CBR 6000k + AAC 160k file
go into tally's ingest (recording, measuring and checking health against youtube+twitch) and
into nginx with libnginx-mod-rtmp (`record all`), interleaved A B A B for `--rounds` rounds (3 by
default) so a busy machine weighs on both alike; the median of the per-round CPU ratios and
their spread (min–max) are printed with every round's numbers. For each server: CPU seconds per stream-minute (and % of one core per stream),
the ratio, peak RSS, and for tally the p99 delay from a media message's last byte being handed to
the session until it is handled (recorded, measured: the point where its events are emitted),
plus the event loop's p99 lag (how long bytes can wait in the socket before that starts).

The ingest runs in its own child process (this file with --child) so its CPU and memory are its
own. Printed, never asserted. Usage: .venv/bin/python bench/rtmp_ingest.py [--streams 10] [--seconds 20]
[--rounds 3] [--py-spy PATH/TO/py-spy --flame out.svg] (an extra, uncounted round profiles tally's child).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NGINX_MODULE = Path("/usr/lib/nginx/modules/ngx_rtmp_module.so")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def proc_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def proc_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(d.name))
            except (OSError, IndexError, ValueError):
                continue
    return out


# --- the ingest child ---------------------------------------------------------------------------

def child_main(port: int, record_dir: Path, result_path: Path, profiles: list[str]) -> None:
    from rtmp.server import IngestConfig, IngestServer

    async def run() -> dict:
        events = {"n": 0}

        def on_event(kind: str, payload: dict) -> None:
            events["n"] += 1
            json.dumps(payload)  # what a real consumer (the bus → JSON lines) would do

        server = IngestServer(IngestConfig(port=port, record_dir=record_dir, allow_any=True, profiles=profiles),
                              on_event)
        if "TALLY_READ_LOWAT_MS" in os.environ:  # compare with the kernel default: 0
            server.ctx.config.read_lowat_s = float(os.environ["TALLY_READ_LOWAT_MS"]) / 1000
        server.metrics.keep_recent = 5_000_000
        await server.start()
        lags: list[float] = []
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        print("ready", flush=True)
        while not stop.is_set():
            t = loop.time()
            await asyncio.sleep(0.1)  # sparse: the sampler's own wakeups cost CPU too
            lags.append(loop.time() - t - 0.1)
        await server.stop()
        delays = sorted(server.metrics.recent_delays_ns)
        lags.sort()
        ru = resource.getrusage(resource.RUSAGE_SELF)

        def pct(xs: list, q: float) -> float:
            return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")

        return {
            "messages": len(delays), "delay_p50_ms": pct(delays, 0.5) / 1e6, "delay_p99_ms": pct(delays, 0.99) / 1e6,
            "delay_max_ms": (delays[-1] / 1e6) if delays else None,
            "loop_lag_p99_ms": pct(lags, 0.99) * 1000, "events": events["n"], "maxrss_kib": ru.ru_maxrss,
            "reads": server.metrics.reads_total, "bytes": server.metrics.bytes_received_total}

    result_path.write_text(json.dumps(asyncio.run(run())))


# --- the driver ---------------------------------------------------------------------------------

def encode_source(path: Path, seconds: int) -> None:
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30",
                    "-f", "lavfi", "-i", "sine=f=440:sample_rate=48000", "-t", str(seconds),
                    "-c:v", "libx264", "-preset", "ultrafast", "-b:v", "6000k", "-minrate", "6000k",
                    "-maxrate", "6000k", "-bufsize", "6000k", "-x264-params", "nal-hrd=cbr:force-cfr=1",
                    "-g", "60", "-keyint_min", "60", "-sc_threshold", "0", "-pix_fmt", "yuv420p",
                    "-c:a", "aac", "-b:a", "160k", "-ar", "48000", "-ac", "2", "-f", "flv", str(path)],
                   check=True)


def run_publishers(url_of: callable, src: Path, n: int) -> float:  # type: ignore[valid-type]
    procs = [subprocess.Popen(["ffmpeg", "-v", "error", "-nostdin", "-re", "-i", str(src), "-c", "copy",
                               "-f", "flv", url_of(i)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for i in range(n)]
    t0 = time.monotonic()
    failures = 0
    for p in procs:
        _out, err = p.communicate(timeout=600)
        if p.returncode != 0:
            failures += 1
            print(f"  publisher failed: {err.decode(errors='replace').strip()[:200]}", file=sys.stderr)
    if failures:
        print(f"  {failures}/{n} publishers failed", file=sys.stderr)
    return time.monotonic() - t0


def bench_tally(src: Path, n: int, seconds: int, work: Path, profiles: str = "youtube,twitch",
                py_spy: str | None = None, flame: Path | None = None) -> dict:
    port = free_port()
    result = work / "tally-result.json"
    rec = work / "tally-rec"
    shutil.rmtree(rec, ignore_errors=True)
    child = subprocess.Popen([sys.executable, __file__, "--child", str(port), str(rec), str(result), profiles],
                             stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert child.stdout is not None
    if child.stdout.readline().strip() != "ready":
        raise SystemExit("tally ingest child did not start")
    spy = None
    if py_spy and flame:
        spy = subprocess.Popen([py_spy, "record", "--pid", str(child.pid), "--rate", "200", "--format", "flamegraph",
                                "-o", str(flame), "--duration", str(seconds + 2)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)
        spy_raw = flame.with_suffix(".txt")
        spy_raw_proc = subprocess.Popen([py_spy, "record", "--pid", str(child.pid), "--rate", "200",
                                         "--format", "raw", "-o", str(spy_raw), "--duration", str(seconds + 1)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base_rss = proc_rss_kib(child.pid)
    cpu0 = proc_cpu_s(child.pid)
    wall = run_publishers(lambda i: f"rtmp://127.0.0.1:{port}/live/s{i}", src, n)
    time.sleep(1.5)
    cpu1 = proc_cpu_s(child.pid)
    peak = proc_hwm_kib(child.pid)
    if spy is not None:
        spy.wait(timeout=60)
        spy_raw_proc.wait(timeout=60)
    child.send_signal(signal.SIGTERM)
    child.wait(timeout=30)
    res = json.loads(result.read_text())
    files = list(rec.rglob("*.flv"))
    return {"cpu_s": cpu1 - cpu0, "wall_s": wall, "peak_rss_mib": peak / 1024, "base_rss_mib": base_rss / 1024,
            "recordings": len(files), "recorded_mib": sum(f.stat().st_size for f in files) / 2**20, **res}


def bench_nginx(src: Path, n: int, seconds: int, work: Path) -> dict | None:
    if shutil.which("nginx") is None or not NGINX_MODULE.exists():
        print("nginx or libnginx-mod-rtmp missing: skipping the reference", file=sys.stderr)
        return None
    port = free_port()
    prefix = work / "nginx"
    shutil.rmtree(prefix, ignore_errors=True)
    rec = prefix / "rec"
    rec.mkdir(parents=True)
    # The worker runs unprivileged: without a writable record dir it silently records nothing.
    os.chmod(rec, 0o777)
    os.chmod(prefix, 0o755)
    conf = prefix / "nginx.conf"
    conf.write_text(f"""
load_module {NGINX_MODULE};
worker_processes 1;
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 1024; }}
rtmp {{
    server {{
        listen 127.0.0.1:{port};
        chunk_size 4096;
        max_message 16M;
        application live {{
            live on;
            record all;
            record_path {rec};
            record_unique on;
        }}
    }}
}}
""")
    master = subprocess.Popen(["nginx", "-p", str(prefix), "-c", str(conf)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while True:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        if time.monotonic() > deadline or master.poll() is not None:
            master.kill()
            raise SystemExit(f"nginx did not start: {master.stderr.read().decode() if master.stderr else ''}")
        time.sleep(0.1)
    workers: list[int] = []
    while not workers and time.monotonic() < deadline + 5:
        workers = children(master.pid)
        time.sleep(0.05)
    if not workers:
        master.kill()
        raise SystemExit("nginx started no worker process")
    pids = [master.pid, *workers]
    base_rss = sum(proc_rss_kib(p) for p in pids)
    cpu0 = sum(proc_cpu_s(p) for p in pids)
    wall = run_publishers(lambda i: f"rtmp://127.0.0.1:{port}/live/s{i}", src, n)
    time.sleep(1.5)
    cpu1 = sum(proc_cpu_s(p) for p in pids)
    peak = sum(proc_hwm_kib(p) for p in pids)
    master.send_signal(signal.SIGQUIT)
    try:
        master.wait(timeout=15)
    except subprocess.TimeoutExpired:
        master.kill()
        master.wait()
    files = list(rec.rglob("*.flv"))
    return {"cpu_s": cpu1 - cpu0, "wall_s": wall, "peak_rss_mib": peak / 1024, "base_rss_mib": base_rss / 1024,
            "recordings": len(files), "recorded_mib": sum(f.stat().st_size for f in files) / 2**20}


def _row(name: str, r: dict, streams: int, seconds: int) -> str:
    stream_min = streams * seconds / 60
    per_min = r["cpu_s"] / stream_min
    core = r["cpu_s"] / (streams * seconds) * 100
    p99 = f"{r['delay_p99_ms']:.3f}" if "delay_p99_ms" in r else "n/a"
    lag = f"{r['loop_lag_p99_ms']:.2f}" if "loop_lag_p99_ms" in r else "n/a"
    return (f"| {name} | {per_min:.3f} | {core:.2f} % | {r['peak_rss_mib']:.1f} ({r['base_rss_mib']:.1f}) "
            f"| {r['recordings']} ({r['recorded_mib']:.0f} MiB) | {p99} | {lag} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--streams", type=int, default=10)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3, help="A B rounds (tally, nginx), interleaved")
    ap.add_argument("--profiles", default="youtube,twitch", help="health profiles in tally ('' for none)")
    ap.add_argument("--py-spy", default=None, help="py-spy binary: profile tally's child in round 1")
    ap.add_argument("--flame", type=Path, default=Path("rtmp-ingest-flame.svg"))
    ap.add_argument("--keep", type=Path, default=None, help="keep the work dir here")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tally-rtmp-bench-"))
    os.chmod(work, 0o755)
    try:
        src = work / "src.flv"
        print(f"encoding {args.seconds} s of 1080p30 CBR 6000k + AAC 160k ...", file=sys.stderr)
        encode_source(src, args.seconds)
        mbps = src.stat().st_size * 8 / args.seconds / 1e6
        if args.py_spy:
            # A separate, uncounted round: py-spy stops the process for each sample.
            print("profiling round (not counted): tally ingest under py-spy ...", file=sys.stderr)
            bench_tally(src, args.streams, args.seconds, work, args.profiles, args.py_spy, args.flame)
            print(f"py-spy: flame graph {args.flame}, raw stacks {args.flame.with_suffix('.txt')}", file=sys.stderr)
        rounds: list[tuple[dict, dict | None]] = []
        for i in range(args.rounds):
            print(f"round {i + 1}/{args.rounds}: tally ingest, {args.streams} publishers × {args.seconds} s ...",
                  file=sys.stderr)
            tally = bench_tally(src, args.streams, args.seconds, work, args.profiles)
            print(f"round {i + 1}/{args.rounds}: nginx-rtmp ...", file=sys.stderr)
            nginx = bench_nginx(src, args.streams, args.seconds, work)
            rounds.append((tally, nginx))
        print(f"\nRTMP ingest benchmark: {args.streams} × {mbps:.2f} Mbit/s publishers × {args.seconds} s "
              f"(ffmpeg -re -c copy, 1080p30), {os.cpu_count()} cores, {args.rounds} interleaved rounds, "
              f"tally health profiles: {args.profiles or 'none'}")
        print()
        print("| round | server | CPU s / stream-minute | % of a core per stream | peak RSS MiB (idle) | recordings "
              "| p99 msg→handled ms | p99 loop lag ms |")
        print("|---|---|---|---|---|---|---|---|")
        ratios = []
        for i, (tally, nginx) in enumerate(rounds, 1):
            print(f"| {i} " + _row("tally ingest", tally, args.streams, args.seconds))
            if nginx:
                print(f"| {i} " + _row("nginx-rtmp (record all)", nginx, args.streams, args.seconds))
                if nginx["cpu_s"] > 0:
                    ratios.append(tally["cpu_s"] / nginx["cpu_s"])
        if ratios:
            ratios.sort()
            median = statistics.median(ratios)
            print(f"\nCPU ratio tally / nginx-rtmp per round: {', '.join(f'{r:.2f}' for r in ratios)}; "
                  f"median {median:.2f}×, spread {ratios[0]:.2f}–{ratios[-1]:.2f}× (target ≤ 1.5×)")
        delays = [t["delay_p99_ms"] for t, _ in rounds]
        last = rounds[-1][0]
        print(f"tally socket reads: {last['reads'] / (args.streams * args.seconds):.0f} per stream-second, "
              f"{last['bytes'] / max(1, last['reads']) / 1024:.1f} KiB per read (last round)")
        print(f"tally p99 message delay per round: {', '.join(f'{d:.3f}' for d in delays)} ms; "
              f"handled {rounds[-1][0]['messages']} media messages, {rounds[-1][0]['events']} events in the last round")
    finally:
        if args.keep:
            shutil.copytree(work, args.keep, dirs_exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        child_main(int(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]),
                   [x for x in sys.argv[5].split(",") if x])
    else:
        main()
