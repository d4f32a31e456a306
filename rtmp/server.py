"""The ingest server: listens, runs sessions, ticks stats at 1 Hz, shuts down cleanly.

Embeddable: `tally ingest` runs it standalone, `tally run/serve` will start the same object.
It reports only through the `on_event(kind, payload)` callback it is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

from rtmp.platforms import load_profiles
from rtmp.session import EventCallback, IngestMetrics, RtmpSession, SessionConfig, SessionContext
from rtmp.streams import StreamRegistry
from rtmp.tap import TagTap
from verifiers.evidence.rtmp import RtmpHealth


@dataclass
class IngestConfig(SessionConfig):
    """The server's settings: where it listens, which keys it takes, its tick and profiles, and (inherited)
    every per-connection limit and recording setting each session gets (rtmp.session.SessionConfig)."""

    host: str = "127.0.0.1"
    port: int = 1935
    allowed_keys: set[str] = field(default_factory=set)
    allow_any: bool = False
    stats_interval_s: float = 1.0
    #: platform profiles every live stream is checked against on each tick (names or YAML paths)
    profiles: list[str] = field(default_factory=list)

    def session_config(self) -> SessionConfig:
        """The session part, as its own object: sessions may tune it (record buffer) without touching this."""
        return SessionConfig(**{f.name: getattr(self, f.name) for f in dataclasses.fields(SessionConfig)})


class IngestServer:
    def __init__(self, config: IngestConfig, on_event: EventCallback | None = None) -> None:
        self.config = config
        self._on_event = on_event
        self.profiles = load_profiles(config.profiles)  # ProfileError here, before listening
        self.registry = StreamRegistry(config.allowed_keys, config.allow_any, profiles=self.profiles)
        self.ctx = SessionContext(config.session_config(), self.registry, self._emit)
        self._server: asyncio.Server | None = None
        self._tick_task: asyncio.Task[None] | None = None
        self.port: int | None = None

    @property
    def metrics(self) -> IngestMetrics:
        return self.ctx.metrics

    def _emit(self, kind: str, payload: dict[str, Any]) -> None:
        if self._on_event is None:
            return
        try:
            self._on_event(kind, payload)
        except Exception:  # a consumer's bug must never take a session down; counted, not hidden
            self.ctx.metrics.callback_errors_total += 1

    async def start(self) -> None:
        if self.config.record_dir is not None:
            self.config.record_dir.mkdir(parents=True, exist_ok=True)
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: RtmpSession(self.ctx), self.config.host, self.config.port)
        self.port = self._server.sockets[0].getsockname()[1]
        self._tick_task = asyncio.create_task(self._tick(), name="rtmp-stats-tick")
        self._emit("listening", {"host": self.config.host, "port": self.port,
                                 "record_dir": str(self.config.record_dir) if self.config.record_dir else None})

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self.config.stats_interval_s)
            now = time.monotonic()
            for session in list(self.ctx.sessions):
                session.check_idle(now)
                session.tune_read_lowat(now)
            for rec in list(self.registry.live.values()):
                snap = rec.stats.snapshot()
                changed = rec.health.evaluate(rec.stats, snap)
                self._emit("stats", {"app": rec.app, "key": rec.key, "client": rec.client, **snap,
                                     **({"health": rec.health.view()} if self.profiles else {})})
                for view in changed:  # typed (verifiers.evidence.rtmp.RtmpHealth): what the dashboard reads
                    self._emit("health", RtmpHealth(app=rec.app, key=rec.key, **view).to_payload())

    def open_tap(self, app: str, key: str, max_pending_bytes: int | None = None) -> TagTap | None:
        """A tag tap (rtmp.tap) on the live stream (app, key), or None if it is not live. Call on
        the event loop's thread (an on_event callback for `publish` is); read it from any thread."""
        rec = self.registry.live.get((app, key))
        if rec is None:
            return None
        return rec.open_tap(max_pending_bytes) if max_pending_bytes else rec.open_tap()

    async def stop(self) -> None:
        """Stop listening, finish every recording (reason server_shutdown), close every connection."""
        if self._tick_task is not None:
            self._tick_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._tick_task
            self._tick_task = None
        if self._server is not None:
            self._server.close()
        for session in list(self.ctx.sessions):
            session.close("server_shutdown")
        if self._server is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
            self._server = None

    async def __aenter__(self) -> IngestServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
