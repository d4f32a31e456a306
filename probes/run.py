"""Driving probes from sources: a blocking loop for a worker thread, and a thread-safe emit.

Sources block (sound cards, growing files, screenshot polls), so they run in a thread; the event
bus belongs to an asyncio loop, so `threadsafe_emit` hops each event onto that loop. Probes are
created lazily for stream sources, because the sample rate and channel count are only known once
the first audio frame is decoded.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable
from typing import Any

from probes.audio_probe import AudioProbe
from probes.avsync import AvSyncProbe
from probes.types import AudioBlock, Emit, VideoFrame
from probes.video_probe import VideoProbe


def threadsafe_emit(loop: asyncio.AbstractEventLoop, emit: Emit) -> Emit:
    """An emit callable usable from any thread: schedules `emit(...)` on `loop`."""

    def call(source: str, kind: str, payload: dict[str, Any]) -> None:
        loop.call_soon_threadsafe(emit, source, kind, payload)

    return call


def fan_out(*emits: Emit) -> Emit:
    """One emit calling several (e.g. the bus and an A/V sync probe's `on_video_event`)."""

    def call(source: str, kind: str, payload: dict[str, Any]) -> None:
        for e in emits:
            e(source, kind, payload)

    return call


class ProbeSet:
    """Routes a mixed stream of AudioBlock/VideoFrame items to audio, video and A/V sync probes.

    `audio_factory(block)` builds an AudioProbe per track from its first block (rate, channels and
    `block.track` known);
    `video` is a ready VideoProbe or None; `avsync=True` adds an AvSyncProbe fed by the video
    probe's flashes and the audio blocks.
    """

    def __init__(self, emit: Emit, *, audio_factory: Callable[[AudioBlock], AudioProbe] | None = None,
                 video: VideoProbe | None = None, avsync: bool = False) -> None:
        self.emit = emit
        self.audio_factory = audio_factory
        self.audio_tracks: dict[int, AudioProbe] = {}
        self._sync_track: int | None = None
        self.avsync = AvSyncProbe(emit) if avsync else None
        self.video = video
        if video is not None and self.avsync is not None:
            video.emit = fan_out(video.emit, self.avsync.on_video_event)

    def push(self, item: AudioBlock | VideoFrame) -> None:
        if isinstance(item, AudioBlock):
            probe = self.audio_tracks.get(item.track)
            if probe is None and self.audio_factory is not None:
                probe = self.audio_tracks[item.track] = self.audio_factory(item)
            if probe is not None:
                probe.push(item)
            if self.avsync is not None:
                if self._sync_track is None:
                    self._sync_track = item.track
                if item.track == self._sync_track:
                    self.avsync.push_audio(item)  # sync against the first track seen
        elif self.video is not None:
            self.video.push(item)

    @property
    def audio(self) -> AudioProbe | None:
        """The first track's probe (most streams have one audio track)."""
        return self.audio_tracks[min(self.audio_tracks)] if self.audio_tracks else None

    def finish(self) -> None:
        for probe in self.audio_tracks.values():
            probe.flush()
        if self.avsync is not None:
            self.avsync.flush()


def run_source(source: Iterable[AudioBlock | VideoFrame], sink: Callable[[Any], None],
               stop: threading.Event | None = None) -> int:
    """Pull every item from `source` into `sink` until it ends or `stop` is set; returns the count."""
    n = 0
    for item in source:
        sink(item)
        n += 1
        if stop is not None and stop.is_set():
            stopper = getattr(source, "stop", None)
            if stopper is not None:
                stopper()
            break
    return n
