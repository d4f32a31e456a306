"""Reading recordings for the streaming scorers: stream facts (ffprobe-like) and small decoded frames.

PyAV does both. Every decoding problem becomes MediaError with one line naming the file, which the
scorers turn into an agent-output failure (their recordings) — never a traceback.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from verifiers.measure.errors import MediaError


@dataclass
class VideoInfo:
    width_px: int
    height_px: int
    fps: float
    codec: str
    frames: int
    duration_s: float
    bitrate_bps: float
    keyframe_times_s: list[float] = field(default_factory=list)
    packet_digest: str = ""  # sha1 of the packet sizes in order: equal for a remux, not for a re-encode

    @property
    def gop_frames(self) -> float | None:
        """Median keyframe spacing in frames (None with fewer than two keyframes)."""
        k = self.keyframe_times_s
        if len(k) < 2:
            return None
        return float(np.median(np.diff(k))) * self.fps


@dataclass
class AudioStreamInfo:
    codec: str
    sample_rate_hz: int
    channels: int
    bitrate_bps: float


@dataclass
class MediaInfo:
    path: str
    container: str
    duration_s: float
    video: list[VideoInfo]
    audio: list[AudioStreamInfo]


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:160]


def _open(path: Path):
    import av

    if not path.is_file():
        raise MediaError(f"{path.name}: missing")
    if path.stat().st_size == 0:
        raise MediaError(f"{path.name}: empty file")
    try:
        return av.open(str(path))
    except (av.error.FFmpegError, UnicodeDecodeError, ValueError) as exc:
        raise MediaError(f"{path.name}: not a readable media file ({_short(exc)})") from None


def probe(path: str | Path) -> MediaInfo:
    """Container, duration and per-stream facts from a full packet scan (sizes, keyframes, timing).

    Bitrates are measured (bytes of packets / stream duration), not taken from headers, which OBS's
    MKV and remuxed MP4 files often leave empty.
    """
    import av

    path = Path(path)
    c = _open(path)
    try:
        vs = list(c.streams.video)
        aus = list(c.streams.audio)
        sizes: dict[int, int] = {s.index: 0 for s in [*vs, *aus]}
        first: dict[int, float] = {}
        last: dict[int, float] = {}
        counts: dict[int, int] = {s.index: 0 for s in vs}
        keys: dict[int, list[float]] = {s.index: [] for s in vs}
        digests = {s.index: hashlib.sha1() for s in vs}
        try:
            for pkt in c.demux([*vs, *aus]):
                if pkt.size == 0 or pkt.pts is None:
                    continue
                i = pkt.stream.index
                t = float(pkt.pts * pkt.time_base)
                end = t + float((pkt.duration or 0) * pkt.time_base)
                sizes[i] += pkt.size
                first[i] = min(first.get(i, t), t)
                last[i] = max(last.get(i, end), end)
                if i in counts:
                    counts[i] += 1
                    digests[i].update(pkt.size.to_bytes(4, "little"))
                    if pkt.is_keyframe:
                        keys[i].append(t)
        except av.error.FFmpegError as exc:
            raise MediaError(f"{path.name}: truncated or corrupt ({_short(exc)})") from None
        video = []
        for s in vs:
            dur = last.get(s.index, 0.0) - first.get(s.index, 0.0)
            rate = s.average_rate or s.guessed_rate or s.base_rate
            fps = float(rate) if rate else (counts[s.index] / dur if dur > 0 else 0.0)
            video.append(VideoInfo(int(s.codec_context.width), int(s.codec_context.height), round(fps, 3),
                                   s.codec_context.name, counts[s.index], dur,
                                   sizes[s.index] * 8 / dur if dur > 0 else 0.0,
                                   sorted(k - first.get(s.index, 0.0) for k in keys[s.index]),
                                   digests[s.index].hexdigest()))
        audio = []
        for s in aus:
            dur = last.get(s.index, 0.0) - first.get(s.index, 0.0)
            audio.append(AudioStreamInfo(s.codec_context.name, int(s.codec_context.sample_rate or 0),
                                         int(s.codec_context.channels or 0),
                                         sizes[s.index] * 8 / dur if dur > 0 else 0.0))
        ends = [last[i] - first[i] for i in last]
        duration = max(ends) if ends else 0.0
        if not video and not audio:
            raise MediaError(f"{path.name}: no audio or video streams")
        return MediaInfo(str(path), c.format.name, duration, video, audio)
    finally:
        c.close()


def frames(path: str | Path, *, max_width_px: int = 160) -> Iterator[tuple[float, np.ndarray]]:
    """(t_s from the first frame, RGB uint8 frame scaled to at most max_width_px wide)."""
    import av

    path = Path(path)
    c = _open(path)
    try:
        if not c.streams.video:
            raise MediaError(f"{path.name}: no video stream")
        s = c.streams.video[0]
        t0 = None
        try:
            for fr in c.decode(s):
                if fr.pts is None:
                    continue
                t = float(fr.pts * fr.time_base)
                t0 = t if t0 is None else t0
                w = min(max_width_px, fr.width)
                h = max(1, round(fr.height * w / fr.width))
                yield t - t0, fr.to_ndarray(format="rgb24", width=w, height=h)
        except av.error.FFmpegError as exc:
            raise MediaError(f"{path.name}: truncated or corrupt ({_short(exc)})") from None
    finally:
        c.close()


def decode_audio_tracks(path: str | Path) -> tuple[list[np.ndarray], int]:
    """Every audio stream decoded to mono float32 at its own rate (first stream's rate returned)."""
    import av

    path = Path(path)
    c = _open(path)
    try:
        out: list[np.ndarray] = []
        rate = 0
        for s in list(c.streams.audio):
            c.seek(0)
            chunks = []
            try:
                for fr in c.decode(s):
                    a = fr.to_ndarray().astype(np.float32)
                    if fr.format.is_planar:
                        a = a.mean(axis=0)
                    else:
                        a = a.reshape(-1, fr.layout.nb_channels if hasattr(fr.layout, "nb_channels")
                                      else len(fr.layout.channels)).mean(axis=1)
                    if fr.format.name.startswith("s16"):
                        a = a / 32768.0
                    elif fr.format.name.startswith("s32"):
                        a = a / 2147483648.0
                    chunks.append(a)
            except av.error.FFmpegError as exc:
                raise MediaError(f"{path.name}: truncated or corrupt ({_short(exc)})") from None
            rate = rate or int(s.codec_context.sample_rate or 0)
            out.append(np.concatenate(chunks) if chunks else np.zeros(0, np.float32))
        return out, rate
    finally:
        c.close()
