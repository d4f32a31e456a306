"""Benchmark: CPU share of one core taken by the video probe on a 1080p30 H.264 stream, analysing
5 frames per second (flash detection on every frame).

Three figures for the same file, in the same run: ffmpeg decoding it to null (reference: the
decode cost any live analysis has to pay), PyAV decoding through our source without analysis,
and source + VideoProbe (luma stats, black, freeze, cut at 5 fps on a 240 px thumbnail; flash on
every frame; optionally one SSIM region). Process CPU time (all threads) per second of media.

    .venv/bin/python bench/probe_video.py [--seconds 10] [--ssim]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from probes.sources.av import AvSource
from probes.video_probe import SsimRegion, VideoProbe


def child_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rate", type=float, default=5.0)
    ap.add_argument("--ssim", action="store_true", help="add a 640x360 SSIM region")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "1080p30.flv"
        subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i",
                        f"testsrc2=s=1920x1080:r=30:d={args.seconds}", "-c:v", "libx264", "-preset", "veryfast",
                        "-b:v", "6M", "-g", "60", "-pix_fmt", "yuv420p", "-f", "flv", str(path)],
                       check=True, capture_output=True)
        c0 = child_cpu_s()
        subprocess.run(["ffmpeg", "-v", "error", "-nostats", "-i", str(path), "-f", "null", "-"], check=True,
                       capture_output=True)
        ff = child_cpu_s() - c0

        t0 = time.process_time()
        n = sum(1 for _ in AvSource(path, audio=False))
        decode = time.process_time() - t0

        events: list[str] = []
        regions = [SsimRegion("box", np.zeros((180, 320), np.uint8), (0, 0, 640, 360))] if args.ssim else None
        probe = VideoProbe(lambda s, k, p: events.append(k), rate_hz=args.rate, regions=regions)
        t0 = time.process_time()
        analysis = 0.0
        for frame in AvSource(path, audio=False):
            a0 = time.thread_time()  # the probe runs in this thread; decoder threads are not counted
            probe.push(frame)
            analysis += time.thread_time() - a0
        full = time.process_time() - t0

    s = args.seconds
    print(f"video probe, 1080p30 H.264 6 Mb/s, {s:g} s ({n} frames), analysis at {args.rate:g} fps"
          f"{' + SSIM region' if args.ssim else ''}")
    print(f"  reference ffmpeg decode to null:   {100 * ff / s:6.1f} % of a core")
    print(f"  PyAV decode through AvSource:      {100 * decode / s:6.1f} % of a core")
    print(f"  AvSource + VideoProbe:             {100 * full / s:6.1f} % of a core "
          f"(analysis alone, probe thread time: {100 * analysis / s:.2f} %)")
    print(f"  ratio probe/ffmpeg-decode: {full / ff:.2f}; analysed {probe.frames_analysed} of "
          f"{probe.frames_seen} frames")


if __name__ == "__main__":
    main()
