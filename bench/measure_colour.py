"""Benchmark: per-frame colour checks (ΔE2000 over masks) on 1080p video, in frames scored per second,
beside the decode-only rate of the same file, all in one run. Target (issue 12): ≥ 30 frames/s.

Three scorers: a 200×200 patch mask (40 000 px, every pixel), the same patch every 4th pixel, and
the whole frame every 64th pixel (≈ 32 400 px). Full-frame ΔE2000 at every pixel is shown once for
scale (seconds per frame). The RGB decode (numpy from the Y'CbCr planes, issue 21) is timed against
PyAV's swscale rgb24 path it replaced, interleaved, and the ratio printed.

    .venv/bin/python bench/measure_colour.py [--seconds 6]
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import av
import numpy as np

from verifiers.measure.colour import delta_e_masked, rect_mask
from verifiers.measure.frames import iter_frames, to_rgb


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved numpy/swscale rounds")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench1080.mp4"
        subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi",
                        "-i", f"testsrc2=s=1920x1080:r=30:d={args.seconds}", "-c:v", "libx264", "-preset",
                        "ultrafast", "-pix_fmt", "yuv420p", "-colorspace", "bt709", "-color_range", "tv",
                        str(path)], check=True)

        def rate(fn) -> float:
            t0 = time.perf_counter()
            n = fn()
            return n / (time.perf_counter() - t0)

        def decode_only() -> int:
            with av.open(str(path)) as c:
                c.streams.video[0].thread_type = "AUTO"
                return sum(1 for _ in c.decode(video=0))

        def decode_rgb() -> int:
            with av.open(str(path)) as c:
                c.streams.video[0].thread_type = "AUTO"
                return sum(1 for f in c.decode(video=0) if to_rgb(f)[0] is not None)

        patch = rect_mask(1080, 1920, 860, 440, 200, 200)
        ref = np.array([128, 128, 128], dtype=np.uint8)

        def scored(mask, stride) -> int:
            n = 0
            for frame in iter_frames(path):
                delta_e_masked(frame.rgb, ref, mask, stride=stride)
                n += 1
            return n

        def decode_swscale() -> int:
            """PyAV/swscale rgb24, the path to_rgb replaced (biased 1–3 codes; see verifiers.measure.ycbcr)."""
            with av.open(str(path)) as c:
                c.streams.video[0].thread_type = "AUTO"
                return sum(1 for f in c.decode(video=0) if f.to_ndarray(format="rgb24") is not None)

        r_dec = rate(decode_only)
        # numpy Y'CbCr path vs swscale rgb24, interleaved A B A B so load drifts hit both alike
        r_np, r_sws = [], []
        for _ in range(args.rounds):
            r_np.append(rate(decode_rgb))
            r_sws.append(rate(decode_swscale))
        r_rgb = float(np.median(r_np))
        r_sws_med = float(np.median(r_sws))
        r_patch = rate(lambda: scored(patch, 1))
        r_patch4 = rate(lambda: scored(patch, 4))
        r_full64 = rate(lambda: scored(None, 64))
        frame = next(iter(iter_frames(path)))
        t0 = time.perf_counter()
        delta_e_masked(frame.rgb, ref)
        full_s = time.perf_counter() - t0

    print(f"1080p30 H.264, {args.seconds:g} s")
    print(f"decode only:                        {r_dec:7.1f} frames/s")
    print(f"decode + BT.709 RGB (numpy Y'CbCr): {r_rgb:7.1f} frames/s  (median of {args.rounds})")
    print(f"decode + swscale rgb24 (old path):  {r_sws_med:7.1f} frames/s  (median of {args.rounds})")
    print(f"numpy decode time / swscale decode time: {r_sws_med / r_rgb:.2f}x")
    print(f"ΔE2000, 200×200 mask, every px:     {r_patch:7.1f} frames/s  (ratio to decode {r_patch / r_dec:.2f})")
    print(f"ΔE2000, 200×200 mask, stride 4:     {r_patch4:7.1f} frames/s  (ratio {r_patch4 / r_dec:.2f})")
    print(f"ΔE2000, full frame, stride 64:      {r_full64:7.1f} frames/s  (ratio {r_full64 / r_dec:.2f})")
    print(f"ΔE2000, full frame, every px:       {full_s:7.2f} s/frame")


if __name__ == "__main__":
    main()
