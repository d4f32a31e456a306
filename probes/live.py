"""Probes for every stream published to the RTMP ingest, started and stopped by its events.

Wire `IngestProbes.on_ingest_event` into the ingest's `on_event(kind, payload)` callback (next to
whatever else consumes it). On `publish` with a recording path it starts a worker thread that
tails the recording (probes.sources.av, live) into audio, video and A/V sync probes; on
`unpublish` it lets the worker drain the file and finish. Events carry `app` and `key`.

`emit` is called from worker threads: pass `probes.run.threadsafe_emit(loop, bus.emit)` for an
asyncio bus.

Latency: the ingest writes its recording through a buffer (rtmp SessionConfig.record_buffer_bytes,
256 KiB by default, flushed also once it spans record_max_delay_ms = 250 ms of media time), so the
probe sees media at most ~0.25 s after it arrived, at any bitrate (before the time bound a 64 kb/s
stream waited 32 s). A per-stream tag tap in the ingest would remove the file from the path.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from probes.audio_probe import AudioProbe
from probes.run import ProbeSet, run_source
from probes.sources.audio import SourceError
from probes.sources.av import AvSource
from probes.types import Emit
from probes.video_probe import VideoProbe


@dataclass
class _Worker:
    thread: threading.Thread
    ended: threading.Event
    source: AvSource | None = None
    probes: ProbeSet | None = None
    error: str | None = None
    stats: dict[str, Any] = field(default_factory=dict)


class IngestProbes:
    def __init__(self, emit: Emit, *, tones_hz: Sequence[float] = (), video_rate_hz: float = 5.0,
                 avsync: bool = True, idle_timeout_s: float = 10.0, video: bool = True) -> None:
        self.emit = emit
        #: video decoding is most of a probe's cost (~20 % of a core at 1080p30): opt out when unneeded
        self.video = video
        self.tones_hz = list(tones_hz)
        self.video_rate_hz = video_rate_hz
        self.avsync = avsync
        self.idle_timeout_s = idle_timeout_s
        self.workers: dict[tuple[str, str], _Worker] = {}
        self._lock = threading.Lock()

    def on_ingest_event(self, kind: str, payload: dict[str, Any]) -> None:
        key = (str(payload.get("app")), str(payload.get("key")))
        if kind == "publish" and payload.get("recording"):
            self._start(key, str(payload["recording"]))
        elif kind == "unpublish":
            with self._lock:
                worker = self.workers.get(key)
            if worker is not None:
                worker.ended.set()

    def _start(self, key: tuple[str, str], recording: str) -> None:
        app, stream_key = key
        with self._lock:
            old = self.workers.get(key)
            if old is not None:
                old.ended.set()
            ended = threading.Event()
            worker = _Worker(threading.Thread(target=lambda: None), ended)
            self.workers[key] = worker

        def tagged(source: str, kind: str, payload: dict[str, Any]) -> None:
            self.emit(source, kind, {"app": app, "key": stream_key, **payload})

        def run() -> None:
            probes = ProbeSet(tagged, audio_factory=lambda b: AudioProbe(tagged, b.sample_rate_hz, b.samples.shape[1],
                                                                        tones_hz=self.tones_hz, track=b.track),
                              video=VideoProbe(tagged, rate_hz=self.video_rate_hz) if self.video else None,
                              avsync=self.avsync and self.video)
            src = AvSource(recording, live=True, done=ended.is_set, idle_timeout_s=self.idle_timeout_s,
                           audio_tracks=None, video=self.video)
            worker.source, worker.probes = src, probes
            try:
                run_source(src, probes.push)
            except (SourceError, FileNotFoundError) as exc:
                worker.error = str(exc)
                tagged("probe.stream", "error", {"error": worker.error})
            finally:
                probes.finish()
                tagged("probe.stream", "ended", {"audio": {str(t): p.summary() for t, p in probes.audio_tracks.items()},
                                                 "video_frames": probes.video.frames_seen if probes.video else 0})

        worker.thread = threading.Thread(target=run, name=f"probe-{app}-{stream_key}", daemon=True)
        worker.thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop every worker now (shutdown) and wait for them."""
        with self._lock:
            workers = list(self.workers.values())
        for w in workers:
            w.ended.set()
            if w.source is not None:
                w.source.stop()
        for w in workers:
            w.thread.join(timeout_s)
