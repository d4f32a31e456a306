"""Benchmark: loudness of 10 minutes of 48 kHz stereo, this engine vs `ffmpeg -af ebur128=peak=true`.

Both measure the same WAV in the same run (ffmpeg also decodes it; we time our decode separately).
Prints seconds and the ratio ours/ffmpeg (< 1 means faster). Target (issue 12): no slower than ffmpeg.

    .venv/bin/python bench/measure_loudness.py [--minutes 10]
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from verifiers.measure.audio_io import load_audio
from verifiers.measure.loudness import measure_loudness
from verifiers.measure.truepeak import true_peak_dbtp

SR = 48000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    n = int(args.minutes * 60 * SR)
    rng = np.random.default_rng(0)
    t = np.arange(n) / SR
    env = 0.1 * (1.2 + np.sin(2 * np.pi * t / 7.0))[:, None]
    x = (env * rng.standard_normal((n, 2))).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ten_minutes.wav"
        sf.write(path, x, SR, subtype="PCM_16")
        del x, env

        def run_ffmpeg() -> float:
            t0 = time.perf_counter()
            subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-nostats", "-threads", "1", "-i", str(path),
                            "-af", "ebur128=peak=true", "-f", "null", "-"], capture_output=True, check=True)
            return time.perf_counter() - t0

        def run_ours() -> tuple[float, float, float, object]:
            t0 = time.perf_counter()
            audio = load_audio(path)
            t1 = time.perf_counter()
            res = measure_loudness(audio.samples, SR)
            t2 = time.perf_counter()
            tp_s = time.perf_counter()
            true_peak_dbtp(audio.samples, SR)
            tp_s = time.perf_counter() - tp_s
            return t1 - t0, t2 - t1, tp_s, res

        # alternate and keep each side's best: the machine is shared, load comes and goes
        ff, dec, met, tps = [], [], [], []
        for _ in range(args.rounds):
            ff.append(run_ffmpeg())
            d, m, tp, res = run_ours()
            dec.append(d)
            met.append(m)
            tps.append(tp)
        ffmpeg_s, decode_s, meter_s, tp_s = min(ff), min(dec), min(met), min(tps)

    print(f"signal: {args.minutes:g} min, 48 kHz stereo, PCM_16 WAV")
    print(f"ffmpeg ebur128=peak=true (decode+meter): {ffmpeg_s:7.2f} s")
    print(f"ours: decode {decode_s:.2f} s + meter {meter_s:.2f} s = {decode_s + meter_s:7.2f} s "
          f"(I {res.integrated_lufs:.2f} LUFS, TP {res.true_peak_dbtp:.2f} dBTP)")
    print(f"  of which true peak alone: {tp_s:.2f} s")
    print(f"ratio ours/ffmpeg: {(decode_s + meter_s) / ffmpeg_s:.2f}  (meter only: {meter_s / ffmpeg_s:.2f}; "
          f"best of {args.rounds} alternating rounds each)")


if __name__ == "__main__":
    main()
