"""Benchmark: loudness of 10 minutes of 48 kHz stereo, this engine vs `ffmpeg -af ebur128=peak=true`.

Both measure the same WAV in the same run (ffmpeg also decodes it; we time our decode separately).
Ours is the whole measurement: integrated, LRA, momentary and short-term series, sample and true
peak (`measure_loudness`). Prints seconds and the ratio ours/ffmpeg (< 1 means faster) twice: wall
clock, and CPU time (user + sys of ffmpeg's process; of ours, this process). The machine is shared:
wall clock moves with other people's load, CPU time much less, so both are printed. Rounds
alternate and each side keeps its best. Target (issue 12): no slower than ffmpeg.

ffmpeg runs with `-threads 1` (its ebur128 filter is single-threaded anyway); ours is pinned to one
BLAS thread here, so the comparison is one core against one core.

    .venv/bin/python bench/measure_loudness.py [--minutes 10] [--rounds 3]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads OpenBLAS: one core each

import argparse
import resource
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from verifiers.measure.audio_io import load_audio
from verifiers.measure.loudness import LoudnessResult, measure_loudness

SR = 48000


def _children_cpu_s() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def run_ffmpeg(path: Path) -> tuple[float, float, str]:
    """(wall s, CPU s, summary text) of ffmpeg's ebur128=peak=true over the file."""
    cpu0, t0 = _children_cpu_s(), time.perf_counter()
    out = subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-nostats", "-threads", "1", "-i", str(path),
                          "-af", "ebur128=peak=true", "-f", "null", "-"], capture_output=True, text=True, check=True)
    wall, cpu = time.perf_counter() - t0, _children_cpu_s() - cpu0
    return wall, cpu, out.stderr[out.stderr.rfind("Summary:"):]


def run_ours(path: Path) -> tuple[float, float, float, float, LoudnessResult]:
    """(decode wall, decode CPU, meter wall, meter CPU, result)."""
    c0, t0 = time.process_time(), time.perf_counter()
    audio = load_audio(path)
    c1, t1 = time.process_time(), time.perf_counter()
    res = measure_loudness(audio.samples, SR)
    c2, t2 = time.process_time(), time.perf_counter()
    return t1 - t0, c1 - c0, t2 - t1, c2 - c1, res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    n = int(args.minutes * 60 * SR)
    rng = np.random.default_rng(0)
    t = np.arange(n) / SR
    env = 0.1 * (1.2 + np.sin(2 * np.pi * t / 7.0))[:, None]
    x = (env * rng.standard_normal((n, 2))).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ten_minutes.wav"
        sf.write(path, x, SR, subtype="PCM_16")
        del x, env, t

        ff_wall, ff_cpu, dec_wall, dec_cpu, met_wall, met_cpu = [], [], [], [], [], []
        for _ in range(args.rounds):
            w, c, summary = run_ffmpeg(path)
            ff_wall.append(w)
            ff_cpu.append(c)
            dw, dc, mw, mc, res = run_ours(path)
            dec_wall.append(dw)
            dec_cpu.append(dc)
            met_wall.append(mw)
            met_cpu.append(mc)

    def spread(v: list[float]) -> str:
        return f"best {min(v):.2f} s, worst {max(v):.2f} s"

    print(f"signal: {args.minutes:g} min, 48 kHz stereo, PCM_16 WAV; {args.rounds} alternating rounds")
    print(f"ffmpeg ebur128=peak=true (decode+meter): wall {spread(ff_wall)}; CPU {spread(ff_cpu)}")
    print(f"ours decode: wall {spread(dec_wall)}; CPU {spread(dec_cpu)}")
    print(f"ours meter:  wall {spread(met_wall)}; CPU {spread(met_cpu)}")
    print(f"ours: I {res.integrated_lufs:.2f} LUFS, LRA {res.lra_lu:.2f} LU, TP {res.true_peak_dbtp:.2f} dBTP, "
          f"{len(res.momentary_lufs)} M / {len(res.short_term_lufs)} S values")
    print("ffmpeg: " + " ".join(summary.split()))
    ours_wall = min(a + b for a, b in zip(dec_wall, met_wall, strict=True))
    ours_cpu = min(a + b for a, b in zip(dec_cpu, met_cpu, strict=True))
    print(f"ratio ours/ffmpeg, decode+meter: wall {ours_wall / min(ff_wall):.2f}, CPU {ours_cpu / min(ff_cpu):.2f}  "
          f"(meter only: wall {min(met_wall) / min(ff_wall):.2f}, CPU {min(met_cpu) / min(ff_cpu):.2f})")


if __name__ == "__main__":
    main()
