"""Audio blocks and video frames decoded (PyAV/FFmpeg) from a file, a growing live recording, or
any readable byte stream holding a container (FLV from the RTMP ingest).

Timestamps are the container's, per stream: `t_s = pts × time_base` of each decoded frame, so the
audio and video of one stream share a timeline and an A/V offset is a plain difference. Nothing is
re-based to zero: per-stream start times differ (an AAC track in FLV typically starts tens of ms
after the video because of encoder priming) and re-basing each stream to its own start would
plant exactly that error in every sync measurement.

Video frames carry the decoder's Y (luma) plane only — no colour conversion, which is what makes
1080p30 affordable; `want_rgb` adds an RGB copy for consumers that need colour (SSIM in colour,
thumbnails). `video_every` decodes every frame (inter-coded video has to be) but hands over only
every n-th one, and a `keep_frame(t_s)` predicate can thin them further (analysis rate).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from probes.sources.audio import SourceError
from probes.sources.growing import GrowingFile
from probes.types import AudioBlock, VideoFrame
from verifiers.measure.container import libav_logs_off

_FULL_RANGE_FORMATS = {"yuvj420p", "yuvj422p", "yuvj444p", "gray"}


def audio_frame_to_array(frame: Any) -> np.ndarray:
    """(samples, channels) float32 in ±1 from a PyAV AudioFrame of any common sample format."""
    fmt = frame.format.name
    a = frame.to_ndarray()
    planar = frame.format.is_planar
    if planar:
        a = a.T  # (channels, samples) → (samples, channels)
    else:
        a = a.reshape(-1, len(frame.layout.channels))
    base = fmt.rstrip("p")
    if base in ("flt", "dbl"):
        return np.ascontiguousarray(a, dtype=np.float32)
    if base == "s16":
        return a.astype(np.float32) / 32768.0
    if base == "s32":
        return (a.astype(np.float64) / 2147483648.0).astype(np.float32)
    if base == "u8":
        return (a.astype(np.float32) - 128.0) / 128.0
    raise SourceError(f"unsupported audio sample format {fmt}")


def luma_plane(frame: Any) -> tuple[np.ndarray, bool]:
    """The Y plane of a planar YUV/gray VideoFrame as (H, W) uint8, and whether it is full range."""
    fmt = frame.format.name
    if fmt.startswith(("yuv", "yuvj", "nv12", "nv21", "gray")) and "p10" not in fmt and "p12" not in fmt:
        plane = frame.planes[0]
        buf = np.frombuffer(plane, dtype=np.uint8).reshape(frame.height, plane.line_size)
        full = fmt in _FULL_RANGE_FORMATS or str(getattr(frame, "color_range", "")) in ("2", "JPEG")
        return buf[:, : frame.width], full  # a view: the array keeps the frame buffer alive
    return frame.to_ndarray(format="gray"), True


class AvSource:
    """Decode a container's audio tracks (first by default; `audio_tracks=None` for all, each block
    tagged with its track index) and first video stream into AudioBlock / VideoFrame items.

    `src` is a path, or a readable binary file-like object (e.g. :class:`GrowingFile`), or
    `live=True` with a path to tail a recording that is still being written.
    """

    def __init__(self, src: str | Path | BinaryIO, *, audio: bool = True, video: bool = True,
                 audio_tracks: tuple[int, ...] | None = (0,),
                 live: bool = False, container_format: str | None = None, video_every: int = 1,
                 keep_frame: Callable[[float], bool] | None = None, want_rgb: bool = False,
                 idle_timeout_s: float = 5.0, done: Callable[[], bool] | None = None) -> None:
        self._src = src
        self.want_audio = audio
        self.audio_tracks = audio_tracks  # indices among the audio streams; None = all of them
        self.want_video = video
        self.live = live
        self.container_format = container_format
        self.video_every = max(1, int(video_every))
        self.keep_frame = keep_frame
        self.want_rgb = want_rgb
        self.idle_timeout_s = idle_timeout_s
        self._done = done
        self._stop = threading.Event()
        self._reader: GrowingFile | None = None
        self.sample_rate_hz: int | None = None
        self.channels: int | None = None
        self.audio_start_s: float | None = None
        self.video_start_s: float | None = None
        self.decode_errors = 0

    def stop(self) -> None:
        self._stop.set()
        if self._reader is not None:
            self._reader.stop()

    def _open(self) -> Any:
        import av

        libav_logs_off()  # a GIL-taking log callback deadlocks an early close of a threaded decoder
        src: Any = self._src
        opts = {"probesize": "32768", "analyzeduration": "500000"} if self.live else {}
        try:
            if self.live and isinstance(src, (str, Path)):
                self._reader = GrowingFile(src, idle_timeout_s=self.idle_timeout_s, done=self._done)
                src = self._reader
            fmt = self.container_format or ("flv" if self._reader is not None else None)
            return av.open(src, mode="r", format=fmt, options=opts)
        except (OSError, av.error.FFmpegError, ValueError) as exc:
            name = Path(self._src).name if isinstance(self._src, (str, Path)) else "stream"
            raise SourceError(f"{name}: cannot open media: {exc}") from exc

    def __iter__(self) -> Iterator[AudioBlock | VideoFrame]:
        import av

        container = self._open()
        try:
            streams = []
            audio = list(container.streams.audio) if self.want_audio else []
            wanted = range(len(audio)) if self.audio_tracks is None else self.audio_tracks
            tracks = {audio[i]: i for i in wanted if 0 <= i < len(audio)}
            vstream = container.streams.video[0] if self.want_video and container.streams.video else None
            if not tracks and vstream is None:
                raise SourceError("no audio or video stream to decode")
            if tracks:
                streams.extend(tracks)
                first = next(iter(tracks))
                self.sample_rate_hz = first.codec_context.sample_rate
                self.channels = first.codec_context.channels
            if vstream is not None:
                vstream.thread_type = "AUTO"
                streams.append(vstream)
            n_video = 0
            for packet in container.demux(*streams):
                if self._stop.is_set():
                    return
                try:
                    frames = packet.decode()
                except av.error.FFmpegError:
                    self.decode_errors += 1
                    continue
                for frame in frames:
                    if frame.pts is None:
                        continue
                    t = float(frame.pts * frame.time_base)
                    track = tracks.get(packet.stream)
                    if track is not None:
                        if self.audio_start_s is None:
                            self.audio_start_s = t
                        x = audio_frame_to_array(frame)
                        yield AudioBlock(x, frame.sample_rate, t, track=track)
                    else:
                        if self.video_start_s is None:
                            self.video_start_s = t
                        idx = n_video
                        n_video += 1
                        if idx % self.video_every or (self.keep_frame is not None and not self.keep_frame(t)):
                            continue
                        luma, full = luma_plane(frame)
                        rgb = frame.to_ndarray(format="rgb24") if self.want_rgb else None
                        yield VideoFrame(luma, t, full_range=full, rgb=rgb, index=idx)
        except av.error.FFmpegError as exc:
            raise SourceError(f"decoding failed: {exc}") from exc
        finally:
            container.close()
            if self._reader is not None:
                self._reader.close()
