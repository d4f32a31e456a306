"""One run from start to report: the lifecycle `tally run` and `tally serve` share.

    bundle + bus + MQTT feed → components (audit first) → wait for done → scenario → stop
    → manifest (artifacts with sha256, size, writer) → score the bundle → report.json → score on MQTT

The report is produced by `rescore.score_bundle` on the closed bundle, the same function
`tally replay` uses, so the two agree byte for byte.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from monitor.bundle import BundleWriter
from monitor.bus import EventBus
from monitor.events import Event
from monitor.mqtt import topics
from monitor.mqtt.control import ControlError, parse_control
from monitor.mqtt.feed import MqttFeed
from monitor.run.component import Component, ComponentHost
from monitor.run.done import DoneWaiter
from monitor.run.rescore import score_bundle, write_bundle_html
from monitor.run.scenario_step import ScenarioStep
from monitor.run.wiring import LiveOptions, build_components
from monitor.sweep.hashes import seal_fields
from verifiers.catalog import TaskSpec, load_catalog
from verifiers.evidence import RunComponentShared, RunDone, RunEnded, RunStarted, RunWaiting


def default_node() -> str:
    return topics.level(socket.gethostname() or "node")


def new_run_id(task: TaskSpec) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return f"{stamp}-T{task.number:02d}-{secrets.token_hex(2)}"


@dataclass
class RunConfig:
    task_id: str
    workdir: Path
    gt: Path
    bundle_dir: Path | None = None
    run_id: str | None = None
    node: str = field(default_factory=default_node)
    timeout_s: float | None = None
    obs_url: str | None = None
    vmix_url: str | None = None
    ingest_host: str = "127.0.0.1"
    ingest_port: int = 1935
    audit_mode: str = "auto"
    #: OBS's log folder (None: the work dir's obs-studio/logs); X display for input recording
    #: (None: $DISPLAY, "": none) -- see monitor/run/wiring.LiveOptions
    obs_log_dir: Path | None = None
    x_display: str | None = None
    #: port of tally's obs-websocket proxy on 127.0.0.1 (the script's OBS port); None: no proxy
    obs_proxy_port: int | None = None
    install_signals: bool = True
    extra_components: list[Component] = field(default_factory=list)
    #: live needs served by long-lived components of `tally serve` (need -> facts about it)
    shared: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: what those components said when they started (e.g. rtmp/listening), repeated into this run
    #: so its bundle shows them serving it (a scorer must tell "not running" from "no stream came")
    shared_announcements: list[Event] = field(default_factory=list)
    #: checks this run cannot judge by design (check name -> why), e.g. the demo's PyAV publisher
    #: has no OBS profile: recorded in the manifest, so a replay marks them `error` the same way
    not_applicable: dict[str, str] = field(default_factory=dict)


@dataclass
class RunResult:
    run_id: str
    bundle_dir: Path
    end_reason: str
    report: dict[str, Any]


class RunSession:
    """Owns one run. `feed` is optional (None: no MQTT) and may be shared with a daemon."""

    def __init__(self, config: RunConfig, feed: MqttFeed | None = None, own_feed: bool = False) -> None:
        self.config = config
        catalog = load_catalog()
        self.task = catalog.get(config.task_id)  # KeyError → caller reports "unknown task"
        self.run_id = config.run_id or new_run_id(self.task)
        self.bundle_dir = Path(config.bundle_dir or Path("runs") / self.run_id).resolve()
        self.workdir = Path(config.workdir).resolve()
        self.gt = Path(config.gt).resolve()
        self.feed = feed
        self.own_feed = own_feed
        self.done = DoneWaiter(self.bundle_dir, config.timeout_s)
        self.bus = EventBus()
        self.writer: BundleWriter | None = None
        self.host: ComponentHost | None = None
        self.audit: Any = None
        self.started = asyncio.Event()
        #: True while events may be written to the bundle (shared components forward only then)
        self.recording = False

    # -- control over MQTT (used by `tally run`; `tally serve` routes its own) ----------------------

    async def on_command(self, payload: bytes) -> None:
        try:
            msg = parse_control(payload)
        except ControlError as exc:
            self.bus.emit("control", "error", {"error": str(exc)})
            return
        if msg.run is not None and msg.run != self.run_id:
            self.bus.emit("control", "error", {"error": f"{msg.cmd}: run {msg.run!r} is not the active run"})
            return
        if msg.cmd == "done":
            self.done.finish("mqtt:done")
        elif msg.cmd == "abort":
            self.done.finish("mqtt:abort")
        else:
            self.bus.emit("control", "error", {"error": "start: a run is already active"})

    # -- the lifecycle --------------------------------------------------------------------------------

    async def execute(self) -> RunResult:
        cfg, task = self.config, self.task
        run_facts = {"run_id": self.run_id, "task": task.id, "family": task.family, "workdir": str(self.workdir),
                     "gt": str(self.gt), "node": cfg.node, "live_needs": sorted(task.live),
                     "forbidden_writers": list(task.forbidden_writers), "timeout_s": cfg.timeout_s}
        if cfg.not_applicable:
            run_facts["not_applicable"] = dict(cfg.not_applicable)
        # task/run_id also at the top level: readers like the dashboard look there
        self.writer = BundleWriter(self.bundle_dir, manifest={"run": run_facts, "task": task.id,
                                                              "run_id": self.run_id})
        self.bus.add_sink(self.writer)
        self.recording = True
        if self.feed is not None:
            self.feed.set_run(self.run_id)
            self.feed.attach(self.bus)
            if self.own_feed:
                await self.feed.start()
            self.feed.set_status(state="running", run=self.run_id, task=task.id)
        self.bus.start()
        if cfg.install_signals:
            self.done.install_signals()
        end_reason = "error"
        try:
            self.bus.emit_typed(RunStarted.from_payload({**run_facts, "bundle": str(self.bundle_dir)}))
            opts = LiveOptions(workdir=self.workdir, bundle_dir=self.bundle_dir, obs_url=cfg.obs_url,
                               vmix_url=cfg.vmix_url, ingest_host=cfg.ingest_host, ingest_port=cfg.ingest_port,
                               obs_log_dir=cfg.obs_log_dir, x_display=cfg.x_display,
                               obs_proxy_port=cfg.obs_proxy_port, extra=list(cfg.extra_components))
            shared = frozenset(cfg.shared)
            components, unavailable = build_components(task, opts, shared=shared)
            for need in sorted(task.live & shared):
                self.bus.emit_typed(RunComponentShared(need, cfg.shared[need]))
            for ann in cfg.shared_announcements:
                self.bus.emit(ann.source, ann.kind, ann.payload, mono_ns=ann.mono_ns)
            scenario = None
            if "scenario" in task.live:
                scenario = ScenarioStep(task.id, self.bus)
                if not scenario.prepare():
                    scenario = None
            for comp in components:
                if comp.name == "audit":
                    comp.exclude.append(self.bundle_dir)  # type: ignore[attr-defined]
                    comp.requested_mode = cfg.audit_mode  # type: ignore[attr-defined]
                    self.audit = comp
            self.host = ComponentHost(self.bus)
            self.host.record_unavailable(unavailable)
            await self.host.start_all(components)
            self.bus.emit_typed(RunWaiting(str(self.done.done_file), cfg.timeout_s))
            self.started.set()
            end_reason = await self.done.wait()
            self.bus.emit_typed(RunDone(end_reason))
            if scenario is not None and not end_reason.startswith(("abort", "mqtt:abort")):
                await scenario.play()
        finally:
            if cfg.install_signals:
                self.done.remove_signals()
            if self.host is not None:
                await self.host.stop_all()
            self.bus.emit_typed(RunEnded(end_reason))
            self.recording = False
            await self.bus.stop()
            self._finish_manifest(end_reason)
            self.writer.close()
        # in a thread: scoring takes seconds (more on hostile files), and `tally serve` must keep
        # answering commands and publishing meanwhile
        report = await asyncio.to_thread(score_bundle, self.bundle_dir)
        self.writer.write_report(report)
        await asyncio.to_thread(write_bundle_html, self.bundle_dir, report)
        if self.feed is not None:
            self.feed.queue_json(topics.score(cfg.node, self.run_id), report, retain=True)
            self.feed.set_status(state="idle", run=None, last_run=self.run_id, last_score=report.get("score"))
            if self.own_feed:
                await self.feed.stop()
            else:
                self.feed.set_run(None)
        return RunResult(self.run_id, self.bundle_dir, end_reason, report)

    def _finish_manifest(self, end_reason: str) -> None:
        """Artifacts (expected ones and everything the audit saw written) with sha256, size, writer."""
        assert self.writer is not None
        writers: dict[str, Any] = dict(getattr(self.audit, "writers", {}) or {})
        paths = set(writers)
        for spec in self.task.artifacts:
            target = self.workdir / spec.path
            if target.is_file():
                paths.add(spec.path)
            elif target.is_dir():
                for sub in target.rglob("*"):
                    if sub.is_file():
                        paths.add(os.path.relpath(sub, self.workdir))
        for rel in sorted(paths):
            path = self.workdir / rel
            if path.is_file() and not rel.startswith(".."):
                self.writer.add_artifact(rel, path, writer=writers.get(rel))
        self.writer.manifest["audit"] = self.audit.summary() if self.audit is not None else {"mode": "off"}
        self.writer.manifest["end"] = {"reason": end_reason}
        self.writer.manifest.update(seal_fields(self.bundle_dir, self.workdir, self.gt, self.task.id,
                                                [a.path for a in self.task.artifacts]))
