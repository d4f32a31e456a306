"""OBS observer: a read-only asyncio component publishing what OBS does on the event bus.

    observer = ObsObserver(bus, port=4455)            # password: TALLY_OBS_PASSWORD or .env
    task = asyncio.create_task(observer.run())
    ...
    await observer.stop()

Events (source "obs"):
  connected        {obs_version, ws_version, rpc_version, has_uuids, has_filter_settings_event}
  event            {type, data, receipt_mono_ns, receipt_wall}  every obs-websocket event; the
                   Event's own mono_ns is the receipt time taken in the reader thread
  snapshot         {reason: start|reconnect|change|periodic|filters, took_ms, state: {...}}
  stats            {stats, stream, record, replay_buffer, virtualcam}  every stats_interval_s
  filters_changed  {source, before, after}  (5.1 has no filter-change event: polled)
  screenshot       {scene, image_format, width_px, image_data, took_ms}  the program scene through
                   GetSourceScreenshot, every screenshots.interval_s (off unless set; each answer
                   and the run's total bounded: past the budget one `error` and no more)
  gap              {phase: start, reason} when the connection is lost or cannot be made;
                   {phase: end, duration_s, attempts} when it is back
  refused          {request}  a caller asked for a non-allow-listed request (never sent)
  error            {where, error}  an unexpected answer; the observer carries on / reconnects

Threads, deliberately: obsws-python is synchronous and its clients are not thread-safe, so the
request connection lives in a one-thread executor (plus a lock inside the requester) and the
event connection in its own reader thread, which hands events to the loop with
call_soon_threadsafe. Nothing here blocks the event loop; a dead OBS never kills the daemon.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from monitor.bus import EventBus
from monitor.observers.obs_client import (
    EVENTS_DEFAULT,
    EVENTS_VOLUME_METERS,
    EventReader,
    ObsConnectionLost,
    ObsRequestFailed,
    ReadOnlyRequester,
    ReadOnlyViolation,
    load_password,
    scrub,
)
from monitor.observers.obs_screenshot import ScreenshotConfig, take_screenshot
from monitor.observers.obs_snapshot import Capabilities, take_filters, take_snapshot, take_stats
from verifiers.evidence import EvidenceEvent, ObsConnected, ObsEvent, ObsSnapshot, ObsState, ObsStats
from verifiers.evidence.obs import ObsFiltersChanged, ObsScreenshot

log = logging.getLogger(__name__)

SOURCE = "obs"

#: Events that do not change what a snapshot would show (or come too often to react to).
_NO_SNAPSHOT_EVENTS = frozenset({"InputVolumeMeters", "InputActiveStateChanged", "InputShowStateChanged",
                                 "MediaInputPlaybackStarted", "MediaInputPlaybackEnded",
                                 "SceneTransitionVideoEnded", "VendorEvent", "CustomEvent",
                                 "ExitStarted", "StudioModeStateChanged"})


class ObsObserver:
    """Watches one OBS over obs-websocket v5, read-only, reconnecting forever until stopped."""

    def __init__(self, bus: EventBus, host: str = "127.0.0.1", port: int = 4455, password: str | None = None,
                 *, snapshot_interval_s: float = 10.0, stats_interval_s: float = 2.0,
                 filter_poll_s: float = 2.0, change_debounce_s: float = 0.25,
                 reconnect_min_s: float = 0.5, reconnect_max_s: float = 10.0,
                 request_timeout_s: float = 5.0, volume_meters: bool = False,
                 screenshots: ScreenshotConfig | None = None, env_file: str | None = ".env") -> None:
        self.bus = bus
        self.host, self.port = host, port
        self._password = password if password is not None else load_password(env_file=env_file)
        self.snapshot_interval_s = snapshot_interval_s
        self.stats_interval_s = stats_interval_s
        self.filter_poll_s = filter_poll_s
        self.change_debounce_s = change_debounce_s
        self.reconnect_min_s, self.reconnect_max_s = reconnect_min_s, reconnect_max_s
        self.request_timeout_s = request_timeout_s
        self.subs = EVENTS_DEFAULT | (EVENTS_VOLUME_METERS if volume_meters else 0)
        self.screenshots = screenshots or ScreenshotConfig()
        self._shot_chars = 0  # image data the screenshot loop emitted this run (its budget)
        self.caps: Capabilities | None = None
        self.connected = asyncio.Event()
        self.last_snapshot: dict[str, Any] | None = None
        self.reconnects = 0
        #: why the last connection attempt failed (None once connected)
        self.last_error: str | None = None
        self._req: ReadOnlyRequester | None = None
        self._reader: EventReader | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="obs-requests")
        self._lost: asyncio.Event | None = None
        self._lost_reason = ""
        self._change_pending: asyncio.Event | None = None
        self._stopping = False
        self._stop_event = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        #: the filter poll's own baseline (snapshots must not absorb a change before it is reported)
        self._filters: dict[str, list[dict[str, Any]]] | None = None

    def __repr__(self) -> str:  # never show the password
        return f"ObsObserver(host={self.host!r}, port={self.port})"

    # ---- public API ----------------------------------------------------------------------
    async def run(self) -> None:
        """Connect, observe, and on loss emit a gap and reconnect with backoff, until stop()."""
        self._loop = asyncio.get_running_loop()
        delay = self.reconnect_min_s
        gap_start: float | None = None
        attempts = 0
        first = True
        try:
            while not self._stopping:
                try:
                    await self._connect()
                except Exception as exc:  # refused, auth, odd replies: all mean "retry later"
                    attempts += 1
                    self.last_error = str(exc)
                    if gap_start is None:
                        gap_start = time.monotonic()
                        self._emit("gap", {"phase": "start", "reason": str(exc)})
                    with contextlib.suppress(TimeoutError):   # stop() cuts the backoff short
                        await asyncio.wait_for(self._stop_event.wait(), delay)
                    delay = min(self.reconnect_max_s, delay * 2)
                    continue
                delay = self.reconnect_min_s
                self.last_error = None
                if gap_start is not None:
                    self._emit("gap", {"phase": "end", "duration_s": round(time.monotonic() - gap_start, 3),
                                       "attempts": attempts})
                    if not first:
                        self.reconnects += 1
                assert self.caps is not None
                self._emit_typed(ObsConnected(**self.caps.as_payload()))
                self.connected.set()
                reason = "start" if first else "reconnect"
                first, gap_start, attempts = False, None, 0
                await self._session(reason)
                self.connected.clear()
                await self._disconnect()
                if not self._stopping:
                    gap_start = time.monotonic()
                    self._emit("gap", {"phase": "start", "reason": self._lost_reason or "connection lost"})
        finally:
            self.connected.clear()
            await self._disconnect()

    async def stop(self) -> None:
        self._stopping = True
        self._stop_event.set()
        if self._lost is not None:
            self._lost.set()
        await self._disconnect()

    def close(self) -> None:
        """Release the request thread (after run() has returned)."""
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def request(self, name: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
        """An allow-listed read for other components (e.g. GetSourceScreenshot).

        Raises ReadOnlyViolation for anything else, before touching the connection.
        """
        from monitor.observers.obs_client import ALLOWED_REQUESTS

        if name not in ALLOWED_REQUESTS:
            self._emit("refused", {"request": name})
            raise ReadOnlyViolation(f"request {name!r} is not on the read-only allow-list; not sent")
        req = self._req
        if req is None:
            raise ObsConnectionLost("not connected to OBS")
        return await self._call(req.request, name, data)

    async def snapshot_now(self, reason: str = "requested") -> dict[str, Any]:
        return await self._snapshot(reason)

    async def screenshot_now(self) -> ObsScreenshot:
        """Take and emit one program screenshot (ObsConnectionLost when not connected)."""
        req = self._req
        if req is None:
            raise ObsConnectionLost("not connected to OBS")
        shot = await self._call(take_screenshot, req, self.screenshots)
        self._emit_typed(shot)
        return shot

    # ---- internals -----------------------------------------------------------------------
    def _emit(self, kind: str, payload: dict[str, Any], mono_ns: int | None = None) -> None:
        self.bus.emit(SOURCE, kind, payload, mono_ns=mono_ns)

    def _emit_typed(self, ev: EvidenceEvent, mono_ns: int | None = None) -> None:
        """Emit a typed evidence event (verifiers.evidence.obs): the payload scorers parse back."""
        self.bus.emit(ev.SOURCE, ev.KIND, ev.to_payload(), mono_ns=mono_ns)

    async def _call(self, fn: Any, *args: Any) -> Any:
        assert self._loop is not None
        try:
            return await self._loop.run_in_executor(self._executor, fn, *args)
        except ObsConnectionLost as exc:
            self._mark_lost(str(exc))
            raise

    def _mark_lost(self, reason: str) -> None:
        if self._lost is not None and not self._lost.is_set():
            self._lost_reason = reason
            self._lost.set()

    async def _connect(self) -> None:
        def connect() -> tuple[ReadOnlyRequester, Capabilities]:
            req = ReadOnlyRequester(self.host, self.port, self._password, timeout_s=self.request_timeout_s)
            try:
                caps = Capabilities.from_version(req.request("GetVersion"))
            except BaseException:
                req.close()
                raise
            return req, caps

        assert self._loop is not None
        self._lost = asyncio.Event()
        self._lost_reason = ""
        self._change_pending = asyncio.Event()
        req, caps = await self._loop.run_in_executor(self._executor, connect)
        loop = self._loop

        def on_event(etype: str, data: dict[str, Any], mono_ns: int, wall: float) -> None:
            loop.call_soon_threadsafe(self._on_event, etype, data, mono_ns, wall)

        def on_closed(reason: str) -> None:
            loop.call_soon_threadsafe(self._mark_lost, reason)

        try:
            reader = await loop.run_in_executor(
                None, lambda: EventReader(self.host, self.port, self._password, on_event, on_closed,
                                          subs=self.subs, timeout_s=self.request_timeout_s))
        except BaseException:
            req.close()
            raise
        self._req, self._reader, self.caps = req, reader, caps

    async def _disconnect(self) -> None:
        reader, req = self._reader, self._req
        self._reader = self._req = None
        if reader is not None:
            await asyncio.get_running_loop().run_in_executor(None, reader.close)
        if req is not None:
            req.close()

    def _on_event(self, etype: str, data: dict[str, Any], mono_ns: int, wall: float) -> None:
        self._emit_typed(ObsEvent(etype, scrub(data), mono_ns, wall), mono_ns=mono_ns)
        if etype == "ExitStarted":
            self._mark_lost("OBS is exiting")
        elif etype not in _NO_SNAPSHOT_EVENTS and self._change_pending is not None:
            self._change_pending.set()

    async def _snapshot(self, reason: str) -> dict[str, Any]:
        req, caps = self._req, self.caps
        if req is None or caps is None:
            raise ObsConnectionLost("not connected to OBS")
        t0 = time.monotonic()
        state = await self._call(take_snapshot, req, caps)
        if self._filters is None:
            self._filters = state.get("filters", {})
        self.last_snapshot = state
        self._emit_typed(ObsSnapshot(reason, ObsState.from_payload(state),
                                     took_ms=round((time.monotonic() - t0) * 1000, 1)))
        return state

    async def _session(self, first_reason: str) -> None:
        assert self._lost is not None
        tasks = []
        try:
            await self._snapshot(first_reason)
            loops = [self._periodic_snapshots, self._stats_loop, self._filter_poll, self._change_snapshots]
            if self.screenshots.interval_s is not None:
                loops.append(self._screenshot_loop)
            tasks = [asyncio.create_task(self._guarded(fn)) for fn in loops]
            await self._lost.wait()
        except ObsConnectionLost:
            pass
        except Exception as exc:  # an answer we did not expect: report, reconnect, keep the daemon
            self._emit("error", {"where": "snapshot", "error": f"{type(exc).__name__}: {exc}"})
            self._mark_lost(f"observer error: {type(exc).__name__}")
        finally:
            for t in tasks:
                t.cancel()
            for t in tasks:
                with contextlib.suppress(asyncio.CancelledError, ObsConnectionLost):
                    await t

    async def _guarded(self, fn: Any) -> None:
        """Run a session loop; an unexpected error is reported and the loop restarted after 1 s."""
        while True:
            try:
                await fn()
                return
            except (ObsConnectionLost, asyncio.CancelledError):
                raise
            except Exception as exc:
                self._emit("error", {"where": fn.__name__, "error": f"{type(exc).__name__}: {exc}"})
                await asyncio.sleep(1.0)

    async def _periodic_snapshots(self) -> None:
        while True:
            await asyncio.sleep(self.snapshot_interval_s)
            with contextlib.suppress(ObsConnectionLost):
                await self._snapshot("periodic")

    async def _change_snapshots(self) -> None:
        assert self._change_pending is not None
        while True:
            await self._change_pending.wait()
            await asyncio.sleep(self.change_debounce_s)   # let a burst of events settle
            self._change_pending.clear()
            with contextlib.suppress(ObsConnectionLost):
                await self._snapshot("change")

    async def _stats_loop(self) -> None:
        while True:
            await asyncio.sleep(self.stats_interval_s)
            req, caps = self._req, self.caps
            if req is None or caps is None:
                return
            with contextlib.suppress(ObsConnectionLost):
                self._emit_typed(ObsStats.from_payload(await self._call(take_stats, req, caps)))

    async def _screenshot_loop(self) -> None:
        """A program screenshot now and every interval; one OBS refuses (no program scene yet) or that
        is too large is an `error` event and the loop keeps its rate; a lost connection ends it."""
        assert self.screenshots.interval_s is not None
        while True:
            if self._shot_chars >= self.screenshots.max_total_chars:
                self._emit("error", {"where": "screenshot", "error": f"screenshot budget of "
                                     f"{self.screenshots.max_total_chars} chars spent: no more screenshots"})
                return
            try:
                self._shot_chars += len((await self.screenshot_now()).image_data)
            except ObsConnectionLost:
                return
            except (ObsRequestFailed, ValueError) as exc:
                self._emit("error", {"where": "screenshot", "error": f"{type(exc).__name__}: {exc}"})
            await asyncio.sleep(self.screenshots.interval_s)

    async def _filter_poll(self) -> None:
        """obs-websocket < 5.4 has no filter-change event: compare filter lists every few seconds."""
        while True:
            await asyncio.sleep(self.filter_poll_s)
            req, caps = self._req, self.caps
            if req is None or caps is None or self.last_snapshot is None:
                return
            names = [*self.last_snapshot.get("inputs", {}), *(s["name"] for s in self.last_snapshot.get("scenes", []))]
            try:
                now = await self._call(take_filters, req, caps, names)
            except ObsConnectionLost:
                return
            before = self._filters or {}
            changed = sorted(n for n in set(now) | set(before) if now.get(n) != before.get(n))
            for name in changed:
                self._emit_typed(ObsFiltersChanged(name, before.get(name, []), now.get(name, [])))
            self._filters = now
            if changed:
                with contextlib.suppress(ObsConnectionLost):
                    await self._snapshot("filters")
