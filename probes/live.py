"""Probes for every stream published to the RTMP ingest, started and stopped by its events.

Wire `IngestProbes.on_ingest_event` into the ingest's `on_event(kind, payload)` callback (next to
whatever else consumes it). On `publish` with a recording path it starts a worker thread that
tails the recording (probes.sources.av, live) into audio, video and A/V sync probes; on
`unpublish` it lets the worker drain the file and finish. Events carry `app` and `key`.

`emit` is called from worker threads: pass `probes.run.threadsafe_emit(loop, bus.emit)` for an
asyncio bus.

Latency: given the ingest's `open_tap(app, key)` (rtmp.server.IngestServer.open_tap), a probe
reads the live stream from a per-stream tag tap, the moment the session handled each tag (p99 a
few ms at 500 kbit/s, bench/rtmp_probe_delay.py). Without it (or when the stream is no longer live)
it tails the recording, which the ingest writes through a buffer (flushed every 256 KiB or 250 ms
of media time), so the probe sees media up to ~0.25 s after it arrived.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
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
    tap: Any = None  # the ingest's rtmp.tap.TagTap the source reads, when there is one
    error: str | None = None
    stats: dict[str, Any] = field(default_factory=dict)


class IngestProbes:
    def __init__(self, emit: Emit, *, tones_hz: Sequence[float] = (), video_rate_hz: float = 5.0,
                 avsync: bool = True, idle_timeout_s: float = 10.0, video: bool = True,
                 open_tap: Callable[[str, str], Any] | None = None, video_image_every_s: float | None = None) -> None:
        self.emit = emit
        #: the ingest's tag tap factory (called on the event loop's thread, in on_ingest_event)
        self.open_tap = open_tap
        #: video decoding is most of a probe's cost (~20 % of a core at 1080p30): opt out when unneeded
        self.video = video
        self.tones_hz = list(tones_hz)
        self.video_rate_hz = video_rate_hz
        #: with a value, the video probe also attaches a PNG of the program (`imageData`) that often
        self.video_image_every_s = video_image_every_s
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
        if old is not None and old.tap is not None:
            old.tap.stop()
        worker.tap = self.open_tap(app, stream_key) if self.open_tap is not None else None

        def tagged(source: str, kind: str, payload: dict[str, Any]) -> None:
            self.emit(source, kind, {"app": app, "key": stream_key, **payload})

        def run() -> None:
            probes = ProbeSet(tagged, audio_factory=lambda b: AudioProbe(tagged, b.sample_rate_hz, b.samples.shape[1],
                                                                        tones_hz=self.tones_hz, track=b.track),
                              video=VideoProbe(tagged, rate_hz=self.video_rate_hz, image_every_s=self.video_image_every_s)
                              if self.video else None,
                              avsync=self.avsync and self.video)
            if worker.tap is not None:  # the stream itself, as the session handles it; ends with it
                src = AvSource(worker.tap, live=True, container_format="flv", audio_tracks=None, video=self.video)
            else:
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
            if w.tap is not None:
                w.tap.stop()  # wakes a reader blocked on an empty tap
        for w in workers:
            w.thread.join(timeout_s)
