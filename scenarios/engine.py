"""Run a scenario: do each step on time (monotonic clock), record what happened, judge expectations.

Why asyncio with a short spin at the end of each wait: asyncio.sleep alone wakes 1–2 ms late and
worse under load; sleeping until ~2 ms before the deadline and spinning the rest keeps action
jitter well under the 5 ms p99 target while the loop stays free for the observers the rest of the
time. X11 work (XTEST, client messages) is sub-millisecond and done on the loop thread; spawning a
test window (a process) runs in a worker thread.

The engine consumes observer events from the bus (all sources except its own), so the same engine
runs under `tally scenario run` and inside `tally run`; it publishes `scenario` events: `start`,
`action` (scheduled/actual ns, lateness_ms), `expectation` (passed, latency_ms, detail), `end`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from scenarios.evaluate import (
    NS_PER_MS,
    ActionRecord,
    ExpectationResult,
    evaluate,
    event_matches,
    required_end_ns,
)
from scenarios.keys import parse_chord
from scenarios.model import EventMatch, Scenario, Step
from scenarios.testwindow import TestWindowProcess, spawn_window
from verifiers.evidence import ScenarioAction, ScenarioExpectation

if TYPE_CHECKING:  # the bus is passed in: scenarios/ does not import monitor/ at run time
    from monitor.bus import EventBus
    from monitor.events import Event

SPIN_NS = 2 * NS_PER_MS
T = TypeVar("T")
NAP_NS = 200_000


class Driver(Protocol):
    """What the engine needs from a desktop driver (the X11 driver, or a fake in unit tests)."""

    def focus_title(self, title: str, *, match: str = "exact") -> Any: ...
    def activate(self, wid: int) -> None: ...
    def active_window(self) -> int | None: ...
    def key_down(self, chord: Any) -> None: ...
    def key_up(self, chord: Any) -> None: ...
    def find(self, title: str, *, match: str = "exact") -> Any: ...


class EventSource(Protocol):
    """An observer putting its events on the bus the engine reads, running until `stop()`.

    scenarios/ has no OBS client of its own: monitor/ fills this with the product's read-only OBS
    observer (monitor.commands.scenario.start_obs_events), so a scenario judges exactly the events
    a scored run records. It must be started after the engine was created (the engine subscribes in
    its constructor, so the observer's start snapshot reaches it)."""

    async def stop(self) -> None: ...


async def sleep_until(target_ns: int) -> int:
    """Sleep on the loop until ~2 ms before target, then in short blocking naps; returns the wake
    time (ns). The naps (time.sleep, high-resolution timers on Linux) release the GIL: a pure
    busy-wait would starve the observer threads (their receipt stamps would be late) for up to
    the interpreter's 5 ms switch interval."""
    while True:
        remaining = target_ns - time.monotonic_ns()
        if remaining <= SPIN_NS:
            break
        await asyncio.sleep((remaining - SPIN_NS) / 1e9)
    while (remaining := target_ns - time.monotonic_ns()) > 0:
        time.sleep(min(remaining, NAP_NS) / 1e9)  # noqa: ASYNC251 -- deliberate, bounded to 2 ms
    return time.monotonic_ns()


def _normal_priority(fn: Callable[..., T]) -> Callable[..., T]:
    """Run fn in a worker thread at normal priority. Threads (and processes) inherit the
    scheduling policy of their creator: a pool thread started while the loop thread is
    SCHED_FIFO would stay real-time for good, and so would the test windows it spawns."""
    def call(*args: Any) -> T:
        with contextlib.suppress(OSError, AttributeError):
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        return fn(*args)
    return call


@dataclass
class ScenarioResult:
    scenario: Scenario
    start_ns: int
    end_ns: int
    actions: dict[str, ActionRecord]
    expectations: list[ExpectationResult]
    observed: list[Event] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.expectations) and all(
            a.status == "ok" for a in self.actions.values())

    def to_dict(self) -> dict[str, Any]:
        def rel(ns: int | None) -> float | None:
            return None if ns is None else round((ns - self.start_ns) / NS_PER_MS, 3)
        return {
            "name": self.scenario.name, "task": self.scenario.task, "file": self.scenario.source,
            "passed": self.passed, "duration_ms": rel(self.end_ns),
            "actions": [{**a.to_dict(), "scheduled_ms": rel(a.scheduled_ns), "actual_ms": rel(a.actual_ns)}
                        for a in self.actions.values()],
            "expectations": [r.to_dict() for r in self.expectations],
            "observed_events": len(self.observed),
        }


class ScenarioEngine:
    """One run of one scenario against a display (driver) and a bus carrying observer events."""

    def __init__(self, scenario: Scenario, bus: EventBus, driver: Driver | None = None,
                 display: str | None = None, window_timeout_s: float = 10.0, realtime: bool = False) -> None:
        self.scenario = scenario
        #: opt-in: run the loop thread SCHED_FIFO during the scenario (where permitted) so a
        #: loaded machine does not delay actions; nothing in the loop busy-waits, so it only
        #: wins the CPU when it wakes up
        self.realtime = realtime
        self.realtime_status = "off"
        self.bus = bus
        self.driver = driver
        self.display = display
        self.window_timeout_s = window_timeout_s
        self.records = {s.id: ActionRecord(s.id, s.action, s.arg) for s in scenario.steps}
        self.observed: list[Event] = []
        self._done: dict[str, asyncio.Future[int | None]] = {}
        self._waiters: list[tuple[EventMatch, int, asyncio.Future[int]]] = []
        self._windows: list[TestWindowProcess] = []
        self._held: set[str] = set()
        self._key_tasks: set[asyncio.Task[None]] = set()
        self._watcher: Any = None
        self.start_ns = 0
        # Subscribed now, not in run(): create the engine before starting observers so their
        # start-up snapshot (initial program scene, mute states) is part of what it judges.
        self._sub = bus.subscribe(f"scenario:{scenario.name}", accept=lambda e: e.source != "scenario")

    # ---- observing ---------------------------------------------------------------------------
    def _on_event(self, event: Event) -> None:
        self.observed.append(event)
        for waiter in list(self._waiters):
            match, since_ns, fut = waiter
            if event.mono_ns >= since_ns and not fut.done() and event_matches(event, match):
                fut.set_result(event.mono_ns)
                self._waiters.remove(waiter)

    async def _collect(self, sub: Any) -> None:
        while True:
            self._on_event(await sub.get())

    # ---- running -----------------------------------------------------------------------------
    async def run(self) -> ScenarioResult:
        loop = asyncio.get_running_loop()
        sub = self._sub
        collector = loop.create_task(self._collect(sub))
        self._done = {s.id: loop.create_future() for s in self.scenario.steps}
        restore = None
        try:
            self._start_watcher()
            restore = self._enter_realtime() if self.realtime else None
            self.start_ns = time.monotonic_ns()
            self.bus.emit("scenario", "start", {
                "name": self.scenario.name, "task": self.scenario.task, "file": self.scenario.source,
                "steps": len(self.scenario.steps), "expectations": len(self.scenario.expectations),
                "realtime": self.realtime_status}, mono_ns=self.start_ns)
            await asyncio.gather(*(self._run_step(s, i) for i, s in enumerate(self.scenario.steps)))
            if self._key_tasks:
                await asyncio.gather(*self._key_tasks, return_exceptions=True)
            await sleep_until(self._observation_end_ns())
            await asyncio.sleep(0)  # let events already queued reach the collector
            while not sub.queue.empty():
                self._on_event(sub.queue.get_nowait())
            end_ns = time.monotonic_ns()
        finally:
            if restore is not None:
                restore()
            collector.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await collector
            self.bus.unsubscribe(sub)
            self._release_keys()
            if self._watcher is not None:
                await asyncio.to_thread(self._watcher.stop)
            await asyncio.to_thread(_normal_priority(self._close_windows))
        results = evaluate(self.scenario, self.records, self.observed, end_ns)
        for r in results:
            ex = ScenarioExpectation(scenario=self.scenario.name, **r.to_dict())
            self.bus.emit(ex.SOURCE, ex.KIND, ex.to_payload())
        result = ScenarioResult(self.scenario, self.start_ns, end_ns, self.records, results, list(self.observed))
        self.bus.emit("scenario", "end", {
            "scenario": self.scenario.name, "passed": result.passed,
            "failed": [r.id for r in results if not r.passed],
            "failed_steps": [a.step for a in self.records.values() if a.status != "ok"]})
        return result

    def _enter_realtime(self) -> Any:
        """SCHED_FIFO for this thread only; returns the undo, or None (status says why)."""
        try:
            policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        except (OSError, AttributeError) as exc:
            self.realtime_status = f"unavailable: {exc}"
            return None
        self.realtime_status = "SCHED_FIFO 10"

        def undo() -> None:
            with contextlib.suppress(OSError):
                os.sched_setscheduler(0, policy, param)
        return undo

    def _observation_end_ns(self) -> int:
        last = max((r.done_ns or 0 for r in self.records.values()), default=self.start_ns)
        end = max(last, self.start_ns) + int(self.scenario.settle_ms * NS_PER_MS)
        starts = {k: r.anchor_ns or r.actual_ns for k, r in self.records.items() if r.actual_ns is not None}
        for exp in self.scenario.expectations:
            need = required_end_ns(exp, starts)  # type: ignore[arg-type]
            if need is not None:
                end = max(end, need + 50 * NS_PER_MS)
        return end

    async def _run_step(self, step: Step, index: int) -> None:
        rec = self.records[step.id]
        fut = self._done[step.id]
        try:
            target = await self._due_ns(step, index)
            if target is None:
                rec.status = "skipped"
                rec.error = rec.error or f"step {step.after!r} did not run"
                fut.set_result(None)
                self._emit_action(rec)
                return
            rec.scheduled_ns = target
            await sleep_until(target)
            await self._do(step, rec)
            rec.status = "ok"
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a failed action is a recorded result, not a crash
            rec.status = "failed"
            rec.error = rec.error or f"{type(exc).__name__}: {exc}"
        if rec.status != "ok":
            rec.done_ns = rec.done_ns or time.monotonic_ns()
        self._emit_action(rec)
        if not fut.done():
            fut.set_result(rec.done_ns if rec.status == "ok" else None)

    async def _due_ns(self, step: Step, index: int) -> int | None:
        delay_ns = int(step.delay_ms * NS_PER_MS)
        if step.at_ms is not None:
            return self.start_ns + int(step.at_ms * NS_PER_MS)
        if step.after is not None:
            done = await self._done[step.after]
            return None if done is None else done + delay_ns
        assert step.after_event is not None
        since = self.start_ns
        if index > 0:
            prev = await asyncio.shield(self._done[self.scenario.steps[index - 1].id])
            since = prev if prev is not None else time.monotonic_ns()
        seen = next((e.mono_ns for e in self.observed
                     if e.mono_ns >= since and event_matches(e, step.after_event)), None)
        if seen is None:
            fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
            self._waiters.append((step.after_event, since, fut))
            try:
                seen = await asyncio.wait_for(fut, step.timeout_ms / 1000.0)
            except TimeoutError:
                self.records[step.id].error = (f"event {step.after_event.kind} {step.after_event.data or ''} "
                                               f"not seen within {step.timeout_ms:g} ms")
                raise
        self.records[step.id].extra["event_ns"] = seen
        return seen + delay_ns

    async def _do(self, step: Step, rec: ActionRecord) -> None:
        if step.action in ("mark", "wait"):
            rec.actual_ns = time.monotonic_ns()
            if step.wait_ms:
                await sleep_until(rec.actual_ns + int(step.wait_ms * NS_PER_MS))
            rec.done_ns = time.monotonic_ns() if step.wait_ms else rec.actual_ns
            return
        drv = self._need_driver(step)
        if step.action == "key":
            chord = parse_chord(step.arg)
            # Stamped before sending: the app can react (and its event be stamped by the feed
            # thread) before this thread runs again, and a reaction must never precede its cause.
            rec.actual_ns = time.monotonic_ns()
            drv.key_down(chord)
            rec.done_ns = time.monotonic_ns()
            rec.extra["send_ms"] = (rec.done_ns - rec.actual_ns) / NS_PER_MS
            self._held.add(step.arg)
            task = asyncio.get_running_loop().create_task(self._release_after(drv, chord, step))
            self._key_tasks.add(task)
            task.add_done_callback(self._key_tasks.discard)
            rec.extra["hold_ms"] = step.hold_ms
        elif step.action == "focus":
            info = drv.find(step.arg, match=step.match)   # title lookup is not part of the action
            if info is None:
                drv.focus_title(step.arg, match=step.match)   # raises with the titles it saw
                raise RuntimeError(f"no window titled {step.arg!r}")
            rec.actual_ns = time.monotonic_ns()
            drv.activate(info.wid)
            rec.done_ns = time.monotonic_ns()
            rec.extra["send_ms"] = (rec.done_ns - rec.actual_ns) / NS_PER_MS
            rec.extra["window"] = f"{info.wid:#x}"
            rec.extra["title"] = info.title
            if self._watcher is not None:
                confirmed = await self._wait_event(EventMatch("active_window", {"wid": info.wid}),
                                                   rec.actual_ns, 1.0)
            else:
                confirmed = await self._confirm_focus(drv, info.wid)
            if confirmed is None:
                raise RuntimeError(f"window {info.title!r} did not become active within 1 s")
            rec.anchor_ns = confirmed
            rec.extra["focus_confirmed_ms"] = (confirmed - rec.actual_ns) / NS_PER_MS
        elif step.action == "open_window":
            rec.actual_ns = time.monotonic_ns()
            win = await asyncio.to_thread(_normal_priority(spawn_window), step.arg, self.display,
                                          self.window_timeout_s)
            self._windows.append(win)
            # wait until the window manager manages it (it is then focusable by title)
            deadline = time.monotonic() + self.window_timeout_s
            while drv.find(step.arg) is None:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"window {step.arg!r} was not managed within {self.window_timeout_s:g} s")
                await asyncio.sleep(0.01)
            rec.done_ns = time.monotonic_ns()
            rec.extra["window"] = f"{win.wid:#x}"
            rec.extra["open_ms"] = (rec.done_ns - rec.actual_ns) / NS_PER_MS
        elif step.action == "close_window":
            from scenarios.x11 import title_matches
            mine = [w for w in self._windows if title_matches(w.title, step.arg, step.match)]
            if not mine:
                raise RuntimeError(f"no test window titled {step.arg!r} was opened by this scenario")
            rec.actual_ns = time.monotonic_ns()
            for w in mine:
                await asyncio.to_thread(_normal_priority(w.close))
                self._windows.remove(w)
            rec.done_ns = time.monotonic_ns()

    def _need_driver(self, step: Step) -> Driver:
        if self.driver is None:
            raise RuntimeError(f"step {step.id!r} ({step.action}) needs a display (no X11 driver)")
        return self.driver

    async def _wait_event(self, match: EventMatch, since_ns: int, timeout_s: float) -> int | None:
        seen = next((e.mono_ns for e in self.observed if e.mono_ns >= since_ns and event_matches(e, match)), None)
        if seen is not None:
            return seen
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        waiter = (match, since_ns, fut)
        self._waiters.append(waiter)
        try:
            return await asyncio.wait_for(fut, timeout_s)
        except TimeoutError:
            return None
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def _start_watcher(self) -> None:
        """With a real X display, report focus changes onto the bus (source x11, kind active_window)."""
        from scenarios.x11 import ActiveWindowWatcher, X11Driver
        if not isinstance(self.driver, X11Driver) or not self.scenario_uses_focus():
            return
        loop = asyncio.get_running_loop()
        bus = self.bus

        def report(t_ns: int, wid: int, title: str) -> None:
            loop.call_soon_threadsafe(bus.emit, "x11", "active_window", {"wid": wid, "title": title}, t_ns)

        self._watcher = ActiveWindowWatcher(self.driver.dpy.get_display_name(), report)
        self._watcher.start()

    def scenario_uses_focus(self) -> bool:
        return any(s.action == "focus" for s in self.scenario.steps)

    async def _confirm_focus(self, drv: Driver, wid: int, timeout_s: float = 1.0) -> int | None:
        deadline = time.monotonic_ns() + int(timeout_s * 1e9)
        while time.monotonic_ns() < deadline:
            if drv.active_window() == wid:
                return time.monotonic_ns()
            await asyncio.sleep(0.002)
        return None

    async def _release_after(self, drv: Driver, chord: Any, step: Step) -> None:
        await asyncio.sleep(step.hold_ms / 1000.0)
        drv.key_up(chord)
        self._held.discard(step.arg)

    def _release_keys(self) -> None:
        for t in list(self._key_tasks):
            t.cancel()
        if self.driver is not None:
            for chord in list(self._held):
                with contextlib.suppress(Exception):
                    self.driver.key_up(parse_chord(chord))
        self._held.clear()

    def _close_windows(self) -> None:
        for w in self._windows:
            w.close()
        self._windows.clear()

    def _emit_action(self, rec: ActionRecord) -> None:
        ev = ScenarioAction(scenario=self.scenario.name, **rec.to_dict())
        self.bus.emit(ev.SOURCE, ev.KIND, ev.to_payload(), mono_ns=rec.actual_ns or time.monotonic_ns())


async def run_scenario(scenario: Scenario, bus: EventBus, driver: Driver | None = None,
                       display: str | None = None,
                       start_source: Callable[[], Awaitable[EventSource]] | None = None,
                       realtime: bool = False) -> ScenarioResult:
    """Create the engine, then start the event source (if any), run, and stop the source."""
    engine = ScenarioEngine(scenario, bus, driver, display, realtime=realtime)
    source = await start_source() if start_source is not None else None
    try:
        return await engine.run()
    finally:
        if source is not None:
            await source.stop()
