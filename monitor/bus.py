"""In-process asyncio event bus: producers never wait for consumers.

Each subscriber owns a bounded queue. When it is full the newest event is dropped for that
subscriber only and its drop counter grows; the bus reports drops as `bus/drops` events
(delivered to everyone else) so a lossy consumer is visible in the bundle, never silent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from monitor.aio import cancel_and_wait
from monitor.events import Event, EventFactory
from verifiers.evidence.base import EvidenceEvent


@dataclass
class Subscription:
    """One consumer's view of the bus: its queue, a filter, and what it lost."""

    name: str
    queue: asyncio.Queue[Event]
    accept: Callable[[Event], bool]
    dropped: int = 0
    _reported_dropped: int = field(default=0, repr=False)

    async def get(self) -> Event:
        return await self.queue.get()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._iter()

    async def _iter(self) -> AsyncIterator[Event]:
        while True:
            yield await self.queue.get()


class EventBus:
    """Fan-out of Events to subscribers; `publish` is synchronous and never blocks."""

    def __init__(self, factory: EventFactory | None = None, drop_report_interval_s: float = 1.0) -> None:
        self.factory = factory or EventFactory()
        self._subs: list[Subscription] = []
        self._sinks: list[Callable[[Event], None]] = []
        self._drop_report_interval_s = drop_report_interval_s
        self._drop_task: asyncio.Task[None] | None = None

    def subscribe(self, name: str, maxsize: int = 10_000,
                  accept: Callable[[Event], bool] | None = None) -> Subscription:
        sub = Subscription(name, asyncio.Queue(maxsize), accept or (lambda _e: True))
        self._subs.append(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        with contextlib.suppress(ValueError):
            self._subs.remove(sub)

    def add_sink(self, sink: Callable[[Event], None]) -> None:
        """A synchronous sink called inline for every event (the bundle writer: it must see all)."""
        self._sinks.append(sink)

    def emit(self, source: str, kind: str, payload: dict[str, Any] | None = None,
             mono_ns: int | None = None) -> Event:
        """Stamp and publish in one step; the usual way for producers."""
        event = self.factory.make(source, kind, payload, mono_ns)
        self.publish(event)
        return event

    def emit_typed(self, ev: EvidenceEvent, mono_ns: int | None = None) -> Event:
        """Emit a typed evidence event (verifiers.evidence): its source, kind and exact payload."""
        return self.emit(ev.SOURCE, ev.KIND, ev.to_payload(), mono_ns)

    def publish(self, event: Event) -> None:
        for sink in self._sinks:
            sink(event)
        for sub in self._subs:
            if not sub.accept(event):
                continue
            try:
                sub.queue.put_nowait(event)
            except asyncio.QueueFull:
                sub.dropped += 1

    @property
    def drops(self) -> dict[str, int]:
        return {s.name: s.dropped for s in self._subs}

    def report_drops(self) -> Event | None:
        """Emit a `bus/drops` event if any subscriber lost events since the last report."""
        fresh = {s.name: s.dropped - s._reported_dropped for s in self._subs if s.dropped > s._reported_dropped}
        if not fresh:
            return None
        event = self.emit("bus", "drops", {"new_drops": fresh, "total_drops": self.drops})
        # A full queue also drops the report itself; count that as reported, or reports never end.
        for s in self._subs:
            s._reported_dropped = s.dropped
        return event

    async def _drop_reporter(self) -> None:
        while True:
            await asyncio.sleep(self._drop_report_interval_s)
            self.report_drops()

    def start(self) -> None:
        if self._drop_task is None:
            self._drop_task = asyncio.get_running_loop().create_task(self._drop_reporter())

    async def stop(self) -> None:
        await cancel_and_wait(self._drop_task)
        self._drop_task = None
        self.report_drops()
