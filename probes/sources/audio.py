"""Audio sources: a sound-card input (sounddevice, by device name) and a file at real-time pace.

Live streams (RTMP ingest recordings) come from :mod:`probes.sources.av`, which yields audio
blocks and video frames of one container in timestamp order.

All sources are iterables of AudioBlock that end at end of input or after `stop()` (thread-safe).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from probes.types import AudioBlock
from verifiers.measure.audio_io import load_audio
from verifiers.measure.errors import MediaError


class SourceError(Exception):
    """A source cannot be opened or read; the message is meant for the user."""


def find_input_device(name: str) -> int:
    """Index of the first input device whose name contains `name` (case-insensitive)."""
    import sounddevice as sd

    try:
        devices = sd.query_devices()
    except Exception as exc:  # PortAudio not initialised / no backend
        raise SourceError(f"cannot list audio devices: {exc}") from exc
    wanted = name.lower()
    names = []
    for i, dev in enumerate(devices):
        if dev["max_input_channels"] > 0:
            names.append(dev["name"])
            if wanted in dev["name"].lower():
                return i
    raise SourceError(f"no audio input device matching {name!r}; inputs: {', '.join(names) or 'none'}")


class SoundDeviceSource:
    """Blocks captured from an input device; `t_s` counts samples from the first one captured.

    The PortAudio callback only copies into a queue (never blocks the audio thread); overflows are
    counted in `overflows` rather than hidden.
    """

    def __init__(self, device: str | int, *, channels: int = 2, sample_rate_hz: int = 48000,
                 block_s: float = 0.02, max_queue_blocks: int = 500) -> None:
        self.device = find_input_device(device) if isinstance(device, str) else device
        self.channels = channels
        self.sample_rate_hz = sample_rate_hz
        self.block = max(1, round(block_s * sample_rate_hz))
        self._q: queue.Queue[np.ndarray] = queue.Queue(maxsize=max_queue_blocks)
        self._stop = threading.Event()
        self.overflows = 0
        self.dropped_blocks = 0
        self.start_mono_s: float | None = None

    def _callback(self, indata: np.ndarray, frames: int, time_info, status) -> None:
        if status.input_overflow:
            self.overflows += 1
        try:
            self._q.put_nowait(indata.copy())
        except queue.Full:
            self.dropped_blocks += 1

    def stop(self) -> None:
        self._stop.set()

    def __iter__(self) -> Iterator[AudioBlock]:
        import sounddevice as sd

        try:
            stream = sd.InputStream(device=self.device, channels=self.channels, samplerate=self.sample_rate_hz,
                                    blocksize=self.block, dtype="float32", callback=self._callback)
        except Exception as exc:
            raise SourceError(f"cannot open audio input {self.device}: {exc}") from exc
        done = 0
        with stream:
            self.start_mono_s = time.monotonic()
            while not self._stop.is_set():
                try:
                    x = self._q.get(timeout=0.1)
                except queue.Empty:
                    continue
                yield AudioBlock(x, self.sample_rate_hz, done / self.sample_rate_hz)
                done += x.shape[0]


class FileAudioSource:
    """A file's audio as blocks, optionally paced to real time (for playback-like tests).

    `t_s` is the file time of the block's first sample plus the stream's container start time, so
    it lines up with video timestamps of the same file.
    """

    def __init__(self, path: str | Path, *, block_s: float = 0.02, realtime: bool = False,
                 audio_stream: int = 0) -> None:
        try:
            self.audio = load_audio(path, audio_stream=audio_stream)
        except MediaError as exc:
            raise SourceError(str(exc)) from exc
        self.sample_rate_hz = self.audio.sample_rate_hz
        self.channels = self.audio.channels
        self.channel_names = self.audio.info.channel_names or None
        self.block = max(1, round(block_s * self.sample_rate_hz))
        self.realtime = realtime
        self._stop = threading.Event()

    def stop(self) -> None:
        self._stop.set()

    def __iter__(self) -> Iterator[AudioBlock]:
        x = self.audio.samples.astype(np.float32)
        start = self.audio.info.start_s
        t0 = time.monotonic()
        for i in range(0, x.shape[0], self.block):
            if self._stop.is_set():
                return
            if self.realtime:
                ahead = i / self.sample_rate_hz - (time.monotonic() - t0)
                if ahead > 0 and self._stop.wait(ahead):
                    return
            yield AudioBlock(x[i:i + self.block], self.sample_rate_hz, start + i / self.sample_rate_hz)
