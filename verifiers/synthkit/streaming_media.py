"""Small synthetic recordings for streaming-task instances (PyAV): video frames plus audio tracks.

What a recording OBS made would hold, at toy size: a few seconds, low resolution, the codec and
container the task names, any number of audio tracks. Settings that scorers measure (GOP,
bitrate) are set on the encoder so the measured values are real properties of the file.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from pathlib import Path

import numpy as np


def write_media(path: Path, frames: Iterable[np.ndarray] | None, fps: float = 30.0, *,
                codec: str = "libx264", bitrate_bps: int | None = None, gop_frames: int | None = None,
                audio: Sequence[np.ndarray] = (), sample_rate_hz: int = 48_000, audio_codec: str = "aac",
                audio_bitrate_bps: int = 128_000, fmt: str | None = None, preset: str = "ultrafast") -> Path:
    """Write frames (RGB uint8 (h, w, 3), or yuv420p planes (h*3/2, w) which skip colour conversion
    and make 1080p cheap) and mono float audio tracks to `path`."""
    import av

    path.parent.mkdir(parents=True, exist_ok=True)
    out = av.open(str(path), "w", format=fmt)
    rate = Fraction(fps).limit_denominator(1001)
    frames_list = list(frames) if frames is not None else []
    vstream = None
    if frames_list:
        yuv = frames_list[0].ndim == 2
        h, w = frames_list[0].shape[:2]
        if yuv:
            h = h * 2 // 3
        vstream = out.add_stream(codec, rate=rate)
        vstream.width, vstream.height = w, h
        vstream.pix_fmt = "yuv420p" if codec != "ffv1" else "yuv444p"
        opts = {}
        if codec == "libx264":
            opts = {"preset": preset, "tune": "zerolatency"}
            if bitrate_bps:
                kb = bitrate_bps // 1000
                opts["x264-params"] = f"nal-hrd=cbr:force-cfr=1:bitrate={kb}:vbv-maxrate={kb}:vbv-bufsize={kb}"
        vstream.options = opts
        if bitrate_bps:
            vstream.bit_rate = bitrate_bps
        if gop_frames:
            vstream.codec_context.gop_size = gop_frames
            if codec == "libx264":
                vstream.options = {**opts, "x264-params": opts.get("x264-params", "") +
                                   (":" if opts.get("x264-params") else "") +
                                   f"keyint={gop_frames}:min-keyint={gop_frames}:scenecut=0"}
    astreams = []
    for _ in audio:
        a = out.add_stream(audio_codec, rate=sample_rate_hz)
        a.layout = "mono"
        if audio_codec == "aac":
            a.bit_rate = audio_bitrate_bps
        astreams.append(a)
    if vstream is not None:
        for i, img in enumerate(frames_list):
            vf = av.VideoFrame.from_ndarray(np.ascontiguousarray(img), format="yuv420p" if yuv else "rgb24")
            vf.pts = i
            vf.time_base = Fraction(1) / rate
            for pkt in vstream.encode(vf):
                out.mux(pkt)
        for pkt in vstream.encode():
            out.mux(pkt)
    for stream, samples in zip(astreams, audio, strict=True):
        fmt_name = "fltp" if audio_codec == "aac" else "s16"
        x = np.clip(np.asarray(samples, np.float32), -1, 1)
        block = 1024
        for start in range(0, len(x), block):
            chunk = x[start:start + block]
            if fmt_name == "s16":
                arr = (chunk * 32767).astype(np.int16)[None, :]
            else:
                arr = chunk[None, :]
            af = av.AudioFrame.from_ndarray(arr, format=fmt_name, layout="mono")
            af.sample_rate = sample_rate_hz
            af.pts = start
            af.time_base = Fraction(1, sample_rate_hz)
            for pkt in stream.encode(af):
                out.mux(pkt)
        for pkt in stream.encode():
            out.mux(pkt)
    out.close()
    return path


def remux(src: Path, dst: Path) -> Path:
    """Stream-copy every stream into a new container (what OBS's File > Remux Recordings does)."""
    import av

    dst.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(src)) as i, av.open(str(dst), "w") as o:
        streams = {}
        for s in i.streams:
            if s.type in ("video", "audio"):
                streams[s.index] = o.add_stream_from_template(s)
        for pkt in i.demux(list(i.streams)):
            if pkt.dts is None or pkt.stream.index not in streams:
                continue
            pkt.stream = streams[pkt.stream.index]
            o.mux(pkt)
    return dst


def loop_video(src: Path, dst: Path, frames: int, fps: Fraction | None = None) -> Path:
    """Stream-copy src's video packets, looped from the start, until `frames` frames (a longer
    recording without another encode). src must open on a keyframe and have no B-frames (the
    ultrafast/zerolatency encodes of write_media), so every cut point decodes. With `fps`, frame i
    is restamped at i / fps: the same pictures recorded at another frame rate, still no encode."""
    import av

    dst.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(dst), "w") as o:
        out, written, shift = None, 0, 0
        while written < frames:
            with av.open(str(src)) as i:   # muxing consumes a packet: read src again for each pass
                s = i.streams.video[0]
                out = out or o.add_stream_from_template(s)
                rate = s.average_rate or s.guessed_rate
                n_src = 0
                for pkt in i.demux(s):
                    if pkt.dts is None:
                        continue
                    n_src += 1
                    if written == frames:
                        continue
                    assert written or pkt.is_keyframe, "loop_video needs a video opening on a keyframe"
                    if fps is None:
                        pkt.pts, pkt.dts = pkt.pts + shift, pkt.dts + shift
                    else:
                        pkt.pts = pkt.dts = round(Fraction(written) / fps / s.time_base)
                    pkt.stream = out
                    o.mux(pkt)
                    written += 1
                shift += round(Fraction(n_src) / Fraction(rate) / s.time_base)   # src's length in ticks
    return dst


def merge(video_src: Path, audio_src: Path, dst: Path) -> Path:
    """Stream-copy the video of one file and the audio tracks of another into dst (no re-encode)."""
    import av

    dst.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(video_src)) as v, av.open(str(audio_src)) as a, av.open(str(dst), "w") as o:
        vmap = {s.index: o.add_stream_from_template(s) for s in v.streams.video}
        amap = {s.index: o.add_stream_from_template(s) for s in a.streams.audio}
        pkts = [(p, vmap) for p in v.demux(list(v.streams.video)) if p.dts is not None]
        pkts += [(p, amap) for p in a.demux(list(a.streams.audio)) if p.dts is not None]
        pkts.sort(key=lambda x: float(x[0].dts * x[0].time_base))
        for pkt, m in pkts:
            pkt.stream = m[pkt.stream.index]
            o.mux(pkt)
    return dst


def yuv_flat(w_px: int, h_px: int, luma: int) -> np.ndarray:
    """A flat grey yuv420p frame (planes stacked), for write_media's cheap path."""
    img = np.full((h_px * 3 // 2, w_px), 128, np.uint8)
    img[:h_px] = luma
    return img


#: bump when a generator's output changes, so stale cached files are never reused
CACHE_VERSION = "1"


def cache_dir() -> Path:
    """Where expensive synthetic media persist between runs ($TALLY_CACHE_DIR or ~/.cache/tally/synth)."""
    base = os.environ.get("TALLY_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tally")
    return Path(base) / "synth"


def disk_cached(key: str, make: Callable[[Path], object], dest: Path) -> Path:
    """Write dest from the on-disk cache, or run make(dest) once and cache the bytes.

    For encodes that cost seconds (1080p60 recordings); the key must name every input of `make`.
    The cache is best effort: an unwritable cache dir just means no caching.
    """
    digest = hashlib.sha256(f"{CACHE_VERSION}:{key}".encode()).hexdigest()[:32]
    cached = cache_dir() / f"{digest}{dest.suffix}"
    dest.parent.mkdir(parents=True, exist_ok=True)
    if cached.is_file() and cached.stat().st_size > 0:
        dest.write_bytes(cached.read_bytes())
        return dest
    make(dest)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(cached.suffix + f".{os.getpid()}.tmp")
        tmp.write_bytes(dest.read_bytes())
        os.replace(tmp, cached)
    except OSError:
        pass
    return dest


def solid(w_px: int, h_px: int, rgb: tuple[int, int, int]) -> np.ndarray:
    img = np.empty((h_px, w_px, 3), np.uint8)
    img[:] = rgb
    return img


def tone(freq_hz: float, dur_s: float, rate_hz: int = 48_000, amp: float = 0.3) -> np.ndarray:
    t = np.arange(int(dur_s * rate_hz)) / rate_hz
    return (amp * np.sin(2 * np.pi * freq_hz * t)).astype(np.float32)


def truncate(path: Path, keep_frac: float = 0.4) -> Path:
    """Cut a file off mid-write (a recording OBS never finalised)."""
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep_frac)])
    return path
