"""The one small interface every live part of a run plugs in through, and the host that drives it.

Ingest, observers, probes, the file audit and the scenario runner are written by different people
at different times; the lifecycle only knows this Protocol. A component that fails to start is
recorded (`run/component_failed`) and the run goes on without it: the scorer then finds no live
evidence for the checks that needed it and says "could not judge" instead of guessing.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from monitor.bus import EventBus
from verifiers.evidence import (
    RunComponentFailed,
    RunComponentStarted,
    RunComponentStopFailed,
    RunComponentStopped,
    RunComponentUnavailable,
)


@runtime_checkable
class Component(Protocol):
    name: str

    async def start(self, bus: EventBus) -> None: ...

    async def stop(self) -> None: ...


@dataclass
class Unavailable:
    """A live need the run cannot serve (module not there yet, no URL given): recorded, not fatal."""

    need: str
    reason: str


@dataclass
class ComponentHost:
    """Starts components in order, stops them in reverse, and records every step as an event."""

    bus: EventBus
    start_timeout_s: float = 20.0
    stop_timeout_s: float = 10.0
    running: list[Component] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)

    def record_unavailable(self, items: list[Unavailable]) -> None:
        for item in items:
            self.bus.emit_typed(RunComponentUnavailable(item.need, item.reason))

    async def start_all(self, components: list[Component]) -> None:
        for comp in components:
            t0 = time.monotonic()
            try:
                async with asyncio.timeout(self.start_timeout_s):
                    await comp.start(self.bus)
            except Exception as exc:  # one broken component must not stop the run
                msg = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                self.failed[comp.name] = msg
                self.bus.emit_typed(RunComponentFailed(comp.name, msg))
                continue
            self.running.append(comp)
            self.bus.emit_typed(RunComponentStarted(comp.name, round((time.monotonic() - t0) * 1000, 1), _describe(comp)))

    async def stop_all(self) -> None:
        while self.running:
            comp = self.running.pop()
            try:
                async with asyncio.timeout(self.stop_timeout_s):
                    await comp.stop()
            except Exception as exc:
                msg = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                self.bus.emit_typed(RunComponentStopFailed(comp.name, msg))
                continue
            self.bus.emit_typed(RunComponentStopped(comp.name))


def _describe(comp: Component) -> dict[str, Any] | None:
    """Optional facts a component offers about itself (`describe()`), e.g. its listen address."""
    describe = getattr(comp, "describe", None)
    if describe is None:
        return None
    try:
        info = describe()
    except Exception:
        return None
    return info if isinstance(info, dict) else None
