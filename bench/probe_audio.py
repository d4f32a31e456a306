"""Benchmark: CPU share of one core taken by the live audio probe at 48 kHz stereo.

The probe runs everything a live meter does (BS.1770 M/S/I, true peak, sample peak, RMS, noise
floor, silence, clipping, Goertzel tones at 2 frequencies, 10 Hz meter frames) on 20 ms blocks, as
a sound card delivers them. Reference measured in the same run: `ffmpeg -af ebur128=peak=true` on
the same audio (child CPU time; it also decodes a WAV, which is nearly free). Target: ≤ 2 % of a
core. Each figure is the best of 5 runs (process CPU time), since the machine is shared.

    .venv/bin/python bench/probe_audio.py [--seconds 120]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import soundfile as sf

from probes.audio_probe import AudioProbe
from probes.types import AudioBlock
from verifiers.measure.loudness import LoudnessMeter

SR = 48000


def programme(seconds: float) -> np.ndarray:
    """Noise bed with a slow level swing, a 1 kHz tone on the left that comes and goes, 1 s gaps."""
    n = int(seconds * SR)
    rng = np.random.default_rng(0)
    t = np.arange(n) / SR
    env = 0.05 * (1.2 + np.sin(2 * np.pi * t / 7.0))[:, None]
    x = env * rng.standard_normal((n, 2))
    x[:, 0] += 0.1 * np.sin(2 * np.pi * 1000 * t) * ((t % 5) < 3)
    x[(t % 10) > 9] = 0.0
    return x.astype(np.float32)


def cpu_share(fn: Callable[[], None], media_s: float, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return 100.0 * best / media_s


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--block-s", type=float, default=0.02)
    args = ap.parse_args()
    x = programme(args.seconds)
    block = round(args.block_s * SR)

    def run_probe(chunk_s: float) -> None:
        probe = AudioProbe(lambda *a: None, SR, 2, tones_hz=[440, 1000], chunk_s=chunk_s)
        for i in range(0, len(x), block):
            probe.push(AudioBlock(x[i:i + block], SR, i / SR))
        probe.flush()

    def run_engine(step: int) -> None:
        meter = LoudnessMeter(SR, 2)
        for i in range(0, len(x), step):
            meter.push(x[i:i + step])

    probe_100 = cpu_share(lambda: run_probe(0.1), args.seconds, 5)
    probe_50 = cpu_share(lambda: run_probe(0.05), args.seconds, 5)
    engine = cpu_share(lambda: run_engine(SR // 10), args.seconds, 5)
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "bench.wav"
        sf.write(wav, x, SR, subtype="FLOAT")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(["ffmpeg", "-v", "error", "-nostats", "-i", str(wav), "-af", "ebur128=peak=true",
                        "-f", "null", "-"], check=True, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    ff = 100.0 * ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) / args.seconds
    print(f"audio probe, 48 kHz stereo, {args.block_s * 1000:g} ms blocks, {args.seconds:g} s of signal")
    print(f"  probe (chunk 100 ms, default): {probe_100:5.2f} % of a core   (target <= 2 %)")
    print(f"  probe (chunk 50 ms):           {probe_50:5.2f} % of a core")
    print(f"  loudness engine alone:         {engine:5.2f} % (LoudnessMeter incl. true peak, 100 ms blocks)")
    print(f"  reference ffmpeg ebur128=peak=true: {ff:5.2f} % of a core")
    print(f"  ratio probe/ffmpeg: {probe_100 / ff:.2f}" if ff > 0 else "  ffmpeg time too small to compare")


if __name__ == "__main__":
    main()
