"""A synthetic RTMP publisher (PyAV): the demo's stand-in for OBS, at a task's encoder settings.

Run as its own process (`python -m monitor.publisher URL ...`): PyAV holds the GIL while it
connects and writes, so a publisher in the same process as the asyncio ingest would stall it.

The picture is a moving colour-bar pattern with a frame counter band and the audio a 1 kHz
tone at −20 dBFS over a −30 dBFS noise bed, so what arrives can be checked, not only counted. Encoding is x264 CBR
(nal-hrd=cbr, VBV = bitrate) with a fixed keyframe interval, like OBS's x264 in CBR mode.
"""

from __future__ import annotations

import argparse
import sys
import time
from fractions import Fraction

import av
import numpy as np


def _frames(width_px: int, height_px: int, count: int) -> list[np.ndarray]:
    """Pre-rendered RGB frames (bars sliding one step per frame) so encoding is the only per-frame cost."""
    x = np.arange(width_px)
    bars = np.array([[235, 235, 235], [235, 235, 16], [16, 235, 235], [16, 235, 16],
                     [235, 16, 235], [235, 16, 16], [16, 16, 235], [16, 16, 16]], dtype=np.uint8)
    out = []
    for i in range(count):
        idx = ((x + i * width_px // count) * len(bars) // width_px) % len(bars)
        img = np.repeat(bars[idx][None, :, :], height_px, axis=0)
        band = slice(height_px * 7 // 8, height_px)
        img[band, : (i + 1) * width_px // count] = 128
        out.append(img)
    return out


def publish(url: str, width_px: int, height_px: int, fps: float, video_kbps: int, keyint_s: float,
            audio_kbps: int, sample_rate_hz: int, seconds: float, progress: bool = False) -> None:
    out = av.open(url, mode="w", format="flv", timeout=10)
    rate = Fraction(fps).limit_denominator(1001)
    vs = out.add_stream("libx264", rate=rate)
    vs.width, vs.height, vs.pix_fmt = width_px, height_px, "yuv420p"
    vs.bit_rate = video_kbps * 1000
    keyint = max(1, round(keyint_s * fps))
    vs.options = {"preset": "ultrafast", "tune": "zerolatency", "maxrate": f"{video_kbps}k", "minrate": f"{video_kbps}k",
                  "bufsize": f"{video_kbps}k",
                  "x264-params": f"keyint={keyint}:min-keyint={keyint}:scenecut=0:nal-hrd=cbr:force-cfr=1"}
    aus = out.add_stream("aac", rate=sample_rate_hz)
    aus.bit_rate = audio_kbps * 1000
    aus.layout = "stereo"
    images = _frames(width_px, height_px, 30)
    frames = [av.VideoFrame.from_ndarray(img, format="rgb24").reformat(format="yuv420p") for img in images]
    n_video = round(seconds * fps)
    samples_per_video_frame = sample_rate_hz / fps
    audio_pts = 0
    # A tone alone lets the AAC encoder spend well under its bitrate; a noise bed makes it use what
    # it is given, as programme audio would.
    noise = np.random.default_rng(0).standard_normal(sample_rate_hz) * 0.03
    tone = (0.1 * np.sin(2 * np.pi * 1000 * np.arange(sample_rate_hz) / sample_rate_hz) + noise).astype(np.float32)
    t0 = time.monotonic()
    for i in range(n_video):
        frame = frames[i % len(frames)]
        frame.pts = i
        for packet in vs.encode(frame):
            out.mux(packet)
        while audio_pts < (i + 1) * samples_per_video_frame:
            start = audio_pts % sample_rate_hz
            chunk = np.roll(tone, -start)[:1024]
            af = av.AudioFrame.from_ndarray(np.stack([chunk, chunk]), format="fltp", layout="stereo")
            af.sample_rate = sample_rate_hz
            af.pts = audio_pts
            for packet in aus.encode(af):
                out.mux(packet)
            audio_pts += 1024
        lag_s = t0 + (i + 1) / fps - time.monotonic()
        if lag_s > 0:
            time.sleep(lag_s)
        if progress and i % round(fps) == 0:
            print(f"published {i / fps:5.1f} s", file=sys.stderr, flush=True)
    for stream in (vs, aus):
        for packet in stream.encode():
            out.mux(packet)
    out.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("url")
    p.add_argument("--size", default="1920x1080")
    p.add_argument("--fps", type=float, default=30.0)
    p.add_argument("--video-kbps", type=int, default=6000)
    p.add_argument("--keyint-s", type=float, default=2.0)
    p.add_argument("--audio-kbps", type=int, default=160)
    p.add_argument("--sample-rate-hz", type=int, default=48000)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--progress", action="store_true")
    a = p.parse_args(argv)
    w, h = (int(v) for v in a.size.lower().split("x"))
    try:
        publish(a.url, w, h, a.fps, a.video_kbps, a.keyint_s, a.audio_kbps, a.sample_rate_hz, a.seconds, a.progress)
    except (av.error.FFmpegError, OSError) as exc:
        print(f"publisher: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
