"""Packet-level probe of a media file: what each stream carries, packet by packet, without decoding.

PyAV demuxes the container and reports every packet's pts/dts/duration/size/keyframe flag, the same
facts as `ffprobe -show_packets` (the tests compare the two on files encoded here). From packets:
bitrate (total and over windows), keyframe intervals, frame rate. Decoding is left to
:mod:`verifiers.measure.frames`; this is cheap enough for hour-long recordings.

Times are in seconds on the container clock (stream start times are kept: FLV audio starts at
46 ms and MKV video at 21 ms because of AAC priming; ignoring that is a 46 ms A/V error).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np

from verifiers.measure.container import open_container
from verifiers.measure.errors import MediaError, describe


@dataclass
class StreamProbe:
    """One stream's description and its packets (arrays in demux order)."""

    index: int
    type: str  # "video" | "audio" | "subtitle" | "data"
    codec: str
    time_base: Fraction
    start_s: float | None
    width: int | None = None
    height: int | None = None
    avg_fps: float | None = None  # container's average frame rate (frames / duration)
    base_fps: float | None = None  # r_frame_rate: the timestamps' base rate (29.97 → 30000/1001)
    pix_fmt: str | None = None
    sample_rate_hz: int | None = None
    channels: int | None = None
    channel_layout: str | None = None
    declared_bitrate_bps: int | None = None
    pts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # time_base units
    dts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    duration: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    size_bytes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    keyframe: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    @property
    def packets(self) -> int:
        return len(self.size_bytes)

    @property
    def pts_s(self) -> np.ndarray:
        return self.pts.astype(np.float64) * float(self.time_base)

    @property
    def duration_s(self) -> float:
        """First packet start to last packet end (presentation order)."""
        if self.packets == 0:
            return 0.0
        ends = self.pts + np.maximum(self.duration, 0)
        return float((ends.max() - self.pts.min()) * self.time_base)

    @property
    def bitrate_bps(self) -> float | None:
        dur = self.duration_s
        return float(self.size_bytes.sum() * 8 / dur) if dur > 0 else None

    @property
    def fps(self) -> float | None:
        """Frames per second from the packets themselves (count / span), else the container's."""
        if self.type != "video":
            return None
        dur = self.duration_s
        if self.packets > 1 and dur > 0:
            return self.packets / dur
        return self.avg_fps or self.base_fps

    @property
    def exact_rate(self) -> Fraction:
        """The video's frame rate, exact: one over the median step of its presentation timestamps in
        its own time base (a 29.97 export: 1001/30000 s, so 30000/1001). A rate rounded for display
        (29.97) is a hair slower than the frames, and frame times computed from it drift off the
        stream's own (short-form T04 took a next photo's first frame into a segment's window).
        Without two packets: the container's average rate; no rate at all: 0."""
        pts = np.unique(self.pts)
        if len(pts) > 1:
            step = int(np.median(np.diff(pts)))
            if step > 0:
                return 1 / (step * self.time_base)
        return Fraction(self.avg_fps or 0.0).limit_denominator(1001)

    def keyframe_times_s(self) -> np.ndarray:
        return np.sort(self.pts_s[self.keyframe])

    def keyframe_intervals_s(self) -> np.ndarray:
        return np.diff(self.keyframe_times_s())

    def bitrate_windows_bps(self, window_s: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
        """(window start times, bits/s in each window) by packet presentation time."""
        if self.packets == 0:
            return np.zeros(0), np.zeros(0)
        t = self.pts_s - float(self.pts.min() * self.time_base)
        n = int(np.floor(t.max() / window_s)) + 1
        bits = np.bincount(np.floor(t / window_s).astype(int), weights=self.size_bytes * 8.0, minlength=n)
        return np.arange(n) * window_s, bits / window_s


@dataclass
class MediaProbe:
    path: str
    format: str
    duration_s: float | None
    streams: list[StreamProbe]

    def first(self, kind: str) -> StreamProbe:
        for s in self.streams:
            if s.type == kind:
                return s
        raise MediaError(f"{Path(self.path).name}: no {kind} stream")


def _fps(rate) -> float | None:
    return float(rate) if rate else None


def probe(path: str | Path) -> MediaProbe:
    """Demux every packet of every stream. Raises MediaError for missing/empty/unreadable files."""
    import av

    path = Path(path)
    container = open_container(path)
    try:
        probes: list[StreamProbe] = []
        cols: dict[int, list[list]] = {}
        for st in container.streams:
            ctx = st.codec_context
            kind = st.type if st.type in ("video", "audio", "subtitle") else "data"
            sp = StreamProbe(index=st.index, type=kind, codec=(ctx.name if ctx else None) or "unknown",
                             time_base=Fraction(st.time_base) if st.time_base else Fraction(1, 1000),
                             start_s=float(st.start_time * st.time_base) if st.start_time is not None else None,
                             declared_bitrate_bps=int(ctx.bit_rate) if ctx and ctx.bit_rate else None)
            if kind == "video":
                sp.width, sp.height = ctx.width, ctx.height
                sp.avg_fps, sp.base_fps = _fps(st.average_rate), _fps(st.base_rate)
                sp.pix_fmt = ctx.pix_fmt
            elif kind == "audio":
                sp.sample_rate_hz = ctx.sample_rate
                sp.channels = ctx.channels
                sp.channel_layout = ctx.layout.name if ctx.layout else None
            probes.append(sp)
            cols[st.index] = [[], [], [], [], []]
        try:
            for pkt in container.demux():
                if pkt.size == 0 and pkt.pts is None:
                    continue  # demuxer flush packet
                c = cols[pkt.stream.index]
                c[0].append(pkt.pts if pkt.pts is not None else (pkt.dts if pkt.dts is not None else 0))
                c[1].append(pkt.dts if pkt.dts is not None else c[0][-1])
                c[2].append(pkt.duration or 0)
                c[3].append(pkt.size)
                c[4].append(bool(pkt.is_keyframe))
        except av.error.FFmpegError as exc:
            got = sum(len(c[3]) for c in cols.values())
            raise MediaError(f"{path.name}: corrupt or truncated after {got} packets "
                             f"({describe(exc)})") from None
        for sp in probes:
            c = cols[sp.index]
            sp.pts, sp.dts, sp.duration, sp.size_bytes = (np.array(v, dtype=np.int64) for v in c[:4])
            sp.keyframe = np.array(c[4], dtype=bool)
        if not any(sp.packets for sp in probes):
            raise MediaError(f"{path.name}: no media packets")
        dur = container.duration / 1_000_000 if container.duration else None
        return MediaProbe(path=str(path), format=container.format.name, duration_s=dur, streams=probes)
    finally:
        container.close()
