"""Benchmark: loudness of 10 minutes of 48 kHz stereo, this engine vs `ffmpeg -af ebur128=peak=true`.

Both measure the same WAV in the same run. Ours is the whole measurement the way `tally analyze`
does it: `loudness_of_file` streams the file in 10 s float32 blocks through the meter (libebur128
for integrated, LRA, momentary and short-term series; our truepeak.py for sample and true peak), so
decode is included, as it is in ffmpeg's run. Also printed, for reference: the in-memory path
(`load_audio` to float64, then `measure_loudness`), decode and meter timed apart. Prints seconds
and the ratio ours/ffmpeg (< 1 means faster) twice: wall clock, and CPU time (user + sys of
ffmpeg's process; of ours, this process). The machine is shared:
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
from verifiers.measure.loudness import LoudnessResult, loudness_of_file, measure_loudness

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


def run_file(path: Path) -> tuple[float, float, LoudnessResult]:
    """(wall, CPU, result) of the streaming file measurement (decode included)."""
    c0, t0 = time.process_time(), time.perf_counter()
    res = loudness_of_file(path)
    return time.perf_counter() - t0, time.process_time() - c0, res


def run_in_memory(path: Path) -> tuple[float, float, float, float, LoudnessResult]:
    """(decode wall, decode CPU, meter wall, meter CPU, result) of load_audio + measure_loudness."""
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
        file_wall, file_cpu = [], []
        for _ in range(args.rounds):
            w, c, summary = run_ffmpeg(path)
            ff_wall.append(w)
            ff_cpu.append(c)
            w, c, res = run_file(path)
            file_wall.append(w)
            file_cpu.append(c)
            dw, dc, mw, mc, mem = run_in_memory(path)
            dec_wall.append(dw)
            dec_cpu.append(dc)
            met_wall.append(mw)
            met_cpu.append(mc)

    def spread(v: list[float]) -> str:
        return f"best {min(v):.2f} s, worst {max(v):.2f} s"

    print(f"signal: {args.minutes:g} min, 48 kHz stereo, PCM_16 WAV; {args.rounds} alternating rounds")
    print(f"ffmpeg ebur128=peak=true (decode+meter): wall {spread(ff_wall)}; CPU {spread(ff_cpu)}")
    print(f"ours loudness_of_file (decode+meter): wall {spread(file_wall)}; CPU {spread(file_cpu)}")
    print(f"ours in memory: load_audio wall {spread(dec_wall)}; CPU {spread(dec_cpu)}")
    print(f"                measure_loudness wall {spread(met_wall)}; CPU {spread(met_cpu)}")
    print(f"ours: I {res.integrated_lufs:.2f} LUFS, LRA {res.lra_lu:.2f} LU, TP {res.true_peak_dbtp:.2f} dBTP, "
          f"{len(res.momentary_lufs)} M / {len(res.short_term_lufs)} S values")
    print("ffmpeg: " + " ".join(summary.split()))
    if abs(mem.integrated_lufs - res.integrated_lufs) > 1e-6 or abs(mem.true_peak_dbtp - res.true_peak_dbtp) > 1e-6:
        print(f"WARNING: in-memory and streamed results differ: {mem.summary()} vs {res.summary()}")
    mem_wall = min(a + b for a, b in zip(dec_wall, met_wall, strict=True))
    mem_cpu = min(a + b for a, b in zip(dec_cpu, met_cpu, strict=True))
    print(f"ratio ours/ffmpeg, loudness_of_file: wall {min(file_wall) / min(ff_wall):.2f}, "
          f"CPU {min(file_cpu) / min(ff_cpu):.2f}")
    print(f"ratio ours/ffmpeg, load_audio+measure_loudness: wall {mem_wall / min(ff_wall):.2f}, "
          f"CPU {mem_cpu / min(ff_cpu):.2f}  (meter only: wall {min(met_wall) / min(ff_wall):.2f}, "
          f"CPU {min(met_cpu) / min(ff_cpu):.2f})")


if __name__ == "__main__":
    main()
