"""`tally serve`: a long-running daemon that runs tasks on command over MQTT.

Commands arrive on `tally/<node>/cmd` (see monitor.mqtt.control). A command that cannot be obeyed
(malformed JSON, unknown task, a start while a run is active, done/abort with no run or for
another run) is answered with an Event line on `tally/<node>/control/error` and changes nothing.
Status is retained on `tally/<node>/status`; the connection's last will turns it to "offline"
if the daemon dies without saying so.

The ingest (and the OBS / vMix observers when their URLs are given, with the obs-websocket proxy
when a port is given) stay up for the daemon's whole life, on a daemon bus; while a run is recording, their events are forwarded into the run's
bus (re-stamped with the run's gap-free sequence numbers, keeping their observation time), and
the run records them as `component_shared` instead of starting its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from pathlib import Path
from typing import Any

from monitor.bus import EventBus
from monitor.events import Event, EventFactory
from monitor.mqtt import topics
from monitor.mqtt.control import ControlError, ControlMessage, PathPolicy, clip, parse_control
from monitor.mqtt.feed import MqttFeed
from monitor.run.component import Component, ComponentHost
from monitor.run.session import RunConfig, RunResult, RunSession
from monitor.run.wiring import IngestComponent, ObsComponent, _hostport, ingest_target, vmix_component
from verifiers.catalog import load_catalog

log = logging.getLogger(__name__)


class Daemon:
    def __init__(self, node: str, runs_dir: Path, ingest_host: str = "127.0.0.1", ingest_port: int = 1935,
                 obs_url: str | None = None, vmix_url: str | None = None, shared_ingest: bool = True,
                 obs_proxy_port: int | None = None, allow_roots: list[Path] | None = None) -> None:
        self.node = node
        #: which work/GT directories a `start` may name (`tally serve --allow-root`)
        self.policy = PathPolicy.of(allow_roots)
        self.runs_dir = Path(runs_dir).resolve()
        self.ingest_host, self.ingest_port = ingest_host, ingest_port
        self.obs_url, self.vmix_url, self.obs_proxy_port = obs_url, vmix_url, obs_proxy_port
        self.feed: MqttFeed | None = None
        self.session: RunSession | None = None
        self.run_task: asyncio.Task[RunResult] | None = None
        self.results: list[RunResult] = []
        self.errors: list[dict[str, Any]] = []
        self._factory = EventFactory()
        self._stop = asyncio.Event()
        self.shared_ingest = shared_ingest
        self.bus = EventBus()
        self.bus.add_sink(self._forward)
        self.host = ComponentHost(self.bus)
        self.announcements: dict[tuple[str, str], Event] = {}

    # -- long-lived components ------------------------------------------------------------------

    def _forward(self, event: Event) -> None:
        if event.kind == "listening":
            self.announcements[(event.source, event.kind)] = event
        session = self.session
        if session is not None and session.recording:
            session.bus.emit(event.source, event.kind, event.payload, mono_ns=event.mono_ns)

    def _long_lived(self) -> list[Component]:
        out: list[Component] = []
        if self.shared_ingest:
            keys = {k for t in load_catalog() if "ingest" in t.live for k in [ingest_target(t)[1]] if k}
            out.append(IngestComponent(self.ingest_host, self.ingest_port, self.runs_dir / ".ingest-captures",
                                       app="live", key=None, keys=keys))
        if self.obs_url:
            out.append(ObsComponent(*_hostport(self.obs_url, 4455), proxy_port=self.obs_proxy_port))
        if self.vmix_url:
            out.append(vmix_component(self.vmix_url))
        return out

    def shared_needs(self) -> dict[str, dict[str, Any]]:
        facts: dict[str, dict[str, Any]] = {}
        for comp in self.host.running:
            describe = getattr(comp, "describe", None)
            facts[comp.name] = describe() if describe is not None else {}
        return facts

    # -- control ------------------------------------------------------------------------------------

    def _reject(self, message: str, request_id: str | None = None) -> None:
        payload: dict[str, Any] = {"error": clip(message, 1000)}
        if request_id is not None:
            payload["id"] = request_id
        event = self._factory.make("control", "error", payload)
        self.errors.append(event.to_dict())
        if self.feed is not None:
            self.feed.queue_line(topics.control_error(self.node), event.to_json())

    @property
    def active(self) -> bool:
        return self.run_task is not None and not self.run_task.done()

    async def on_command(self, payload: bytes) -> None:
        try:
            msg = parse_control(payload, self.policy)
        except ControlError as exc:
            self._reject(str(exc))
            return
        if msg.cmd == "start":
            self._start(msg)
            return
        if not self.active or self.session is None:
            self._reject(f"{msg.cmd}: no run is active", msg.request_id)
            return
        if msg.run is not None and msg.run != self.session.run_id:
            self._reject(f"{msg.cmd}: run {clip(repr(msg.run))} is not the active run ({self.session.run_id})",
                         msg.request_id)
            return
        self.session.done.finish("mqtt:done" if msg.cmd == "done" else "mqtt:abort")

    def _start(self, msg: ControlMessage) -> None:
        if self.active:
            self._reject(f"start: run {self.session.run_id if self.session else '?'} is already active",
                         msg.request_id)
            return
        assert msg.task is not None and msg.workdir is not None and msg.gt is not None
        if msg.task not in load_catalog().tasks:
            self._reject(f"start: unknown task {clip(repr(msg.task))}", msg.request_id)
            return
        if msg.run is not None and (topics.level(msg.run) != msg.run or msg.run.startswith(".")):
            self._reject("start: run id may only hold letters, digits, '.', '_' and '-'", msg.request_id)
            return
        config = RunConfig(task_id=msg.task, workdir=msg.workdir, gt=msg.gt, run_id=msg.run, node=self.node,
                           timeout_s=msg.timeout_s, obs_url=self.obs_url, vmix_url=self.vmix_url,
                           ingest_host=self.ingest_host, ingest_port=self.ingest_port, install_signals=False,
                           shared=self.shared_needs(), shared_announcements=list(self.announcements.values()))
        session = RunSession(config, feed=self.feed)
        session.bundle_dir = self.runs_dir / session.run_id
        session.done.done_file = session.bundle_dir / "done"
        if session.bundle_dir.exists():
            self._reject(f"start: bundle {session.bundle_dir} already exists", msg.request_id)
            return
        self.session = session
        self.run_task = asyncio.get_running_loop().create_task(self._execute(session), name=f"run-{session.run_id}")

    async def _execute(self, session: RunSession) -> RunResult:
        try:
            result = await session.execute()
        except Exception as exc:
            log.exception("run %s failed", session.run_id)
            self._reject(f"run {session.run_id} failed: {type(exc).__name__}: {exc}")
            if self.feed is not None:
                self.feed.set_run(None)
                self.feed.set_status(state="idle", run=None, last_run=session.run_id, last_error=clip(str(exc), 1000))
            raise
        self.results.append(result)
        return result

    # -- lifecycle ----------------------------------------------------------------------------------

    def request_stop(self) -> None:
        self._stop.set()

    async def serve(self, feed: MqttFeed) -> None:
        """Run until request_stop() (or SIGTERM/SIGINT): an active run is aborted and still scored."""
        self.feed = feed
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        await self.host.start_all(self._long_lived())
        feed.set_status(state="idle", run=None, shared=sorted(self.shared_needs()))
        loop = asyncio.get_running_loop()
        installed = []
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(RuntimeError, ValueError):
                loop.add_signal_handler(sig, self.request_stop)
                installed.append(sig)
        try:
            await self._stop.wait()
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)
            if self.active and self.session is not None and self.run_task is not None:
                self.session.done.finish("abort:daemon-stop")
                with contextlib.suppress(Exception):
                    await self.run_task
            await self.host.stop_all()
            feed.set_status(state="offline", run=None)
