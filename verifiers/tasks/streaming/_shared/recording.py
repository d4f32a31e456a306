"""The streaming scorers' view of a recording: per-stream facts, small frames, mono audio tracks.

A thin shape over the measurement primitives (packet probe, frame reader, audio loader), not a
second decoder. Every problem is a MediaError with one line naming the file, which the scorers turn
into an agent-output failure (their recordings) — never a traceback.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from verifiers.base import AgentOutputError
from verifiers.measure.audio_io import load_audio
from verifiers.measure.container import open_container, video_stream
from verifiers.measure.errors import MediaError
from verifiers.measure.frames import iter_frames
from verifiers.measure.streams import StreamProbe
from verifiers.measure.streams import probe as probe_packets


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
        """Median keyframe spacing in whole frames (None with fewer than two keyframes).

        A GOP is a count of frames: each spacing (s) times the frame rate is rounded to one. Unrounded,
        a remuxed MP4's timestamps and the measured rate (60.006 for a 60 fps file) read a 121-frame
        GOP as 121.03, past the +-1 frame line although the encoder was one frame off."""
        k = self.keyframe_times_s
        if len(k) < 2:
            return None
        return float(np.median(np.round(np.diff(k) * self.fps)))


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


def _video_info(sp: StreamProbe) -> VideoInfo:
    dur = sp.duration_s
    fps = sp.avg_fps or sp.base_fps or (sp.packets / dur if dur > 0 else 0.0)
    t0 = float(sp.pts.min() * sp.time_base) if sp.packets else 0.0
    digest = hashlib.sha1(b"".join(int(n).to_bytes(4, "little") for n in sp.size_bytes))
    return VideoInfo(int(sp.width or 0), int(sp.height or 0), round(fps, 3), sp.codec, sp.packets, dur,
                     sp.bitrate_bps or 0.0, [float(k) - t0 for k in sp.keyframe_times_s()], digest.hexdigest())


def probe(path: str | Path) -> MediaInfo:
    """Container, duration and per-stream facts from the packet probe (sizes, keyframes, timing).

    Bitrates are measured (bytes of packets / stream duration), not taken from headers, which OBS's
    MKV and remuxed MP4 files often leave empty.
    """
    mp = probe_packets(path)
    kept = [sp for sp in mp.streams if sp.packets]
    video = [_video_info(sp) for sp in kept if sp.type == "video"]
    audio = [AudioStreamInfo(sp.codec, int(sp.sample_rate_hz or 0), int(sp.channels or 0), sp.bitrate_bps or 0.0)
             for sp in kept if sp.type == "audio"]
    if not video and not audio:
        raise MediaError(f"{Path(path).name}: no audio or video streams")
    duration = max((sp.duration_s for sp in kept if sp.type in ("video", "audio")), default=0.0)
    return MediaInfo(str(path), mp.format, duration, video, audio)


def frames(path: str | Path, *, max_width_px: int = 160) -> Iterator[tuple[float, np.ndarray]]:
    """(t_s from the first frame, RGB uint8 frame scaled to at most max_width_px wide)."""
    width = first_video_width(path)
    t0 = None
    for fr in iter_frames(path, width=min(max_width_px, width) if width else max_width_px):
        t0 = fr.t_s if t0 is None else t0
        yield fr.t_s - t0, fr.rgb


def first_video_width(path: str | Path) -> int:
    container = open_container(path)
    try:
        return int(video_stream(container, path).codec_context.width or 0)
    finally:
        container.close()


def decode_audio_tracks(path: str | Path) -> tuple[list[np.ndarray], int]:
    """Every audio stream decoded to mono float32 at its own rate (first stream's rate returned)."""
    n_tracks = sum(1 for sp in probe_packets(path).streams if sp.type == "audio")
    out: list[np.ndarray] = []
    rate = 0
    for i in range(n_tracks):
        audio = load_audio(path, audio_stream=i)
        rate = rate or audio.sample_rate_hz
        out.append(audio.mono.astype(np.float32))
    return out, rate


@contextmanager
def agent_media() -> Iterator[None]:
    """Reading the agent's recording: a file the decoder cannot read is the agent's failure
    (AgentOutputError with the MediaError's one line naming the file), never tally's error."""
    try:
        yield
    except MediaError as exc:
        raise AgentOutputError(str(exc)) from None
