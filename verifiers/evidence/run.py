"""Typed `run/*` events (a run's lifecycle, monitor/run/) and `node/*` events (a fleet node's status
and last score, as the dashboard reads them from MQTT)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from verifiers.evidence.base import EvidenceEvent


@dataclass(frozen=True)
class RunStarted(EvidenceEvent, source="run", kind="started"):
    """The run's facts as the session starts (the bundle manifest's `run` plus the bundle path)."""

    _omit_none: ClassVar[tuple[str, ...]] = ("not_applicable",)
    run_id: str
    task: str
    family: str
    workdir: str
    gt: str
    node: str
    live_needs: list[str]
    forbidden_writers: list[str]
    timeout_s: float | None
    bundle: str
    not_applicable: dict[str, str] | None = None  # need -> why the task is judged without it


@dataclass(frozen=True)
class _Component(EvidenceEvent):
    """A run component's lifecycle step."""

    component: str


@dataclass(frozen=True)
class RunComponentStarted(_Component, source="run", kind="component_started"):
    _omit_none: ClassVar[tuple[str, ...]] = ("info",)
    start_ms: float
    info: dict[str, Any] | None = None  # what the component says of itself (describe()), e.g. its address


@dataclass(frozen=True)
class RunComponentStopped(_Component, source="run", kind="component_stopped"):
    """The `run/component_stopped` event (its fields are its base's)."""


@dataclass(frozen=True)
class RunComponentFailed(_Component, source="run", kind="component_failed"):
    error: str


@dataclass(frozen=True)
class RunComponentStopFailed(_Component, source="run", kind="component_stop_failed"):
    error: str


@dataclass(frozen=True)
class RunComponentUnavailable(EvidenceEvent, source="run", kind="component_unavailable"):
    """A live need this run cannot fill (no OBS on this machine, …)."""

    need: str
    reason: str


@dataclass(frozen=True)
class RunComponentShared(EvidenceEvent, source="run", kind="component_shared"):
    """A live need filled by the daemon's shared component (one OBS for many runs)."""

    need: str
    info: Any


@dataclass(frozen=True)
class RunScenarioPrepared(EvidenceEvent, source="run", kind="scenario_prepared"):
    file: str
    steps: int


@dataclass(frozen=True)
class RunScenarioFinished(EvidenceEvent, source="run", kind="scenario_finished"):
    passed: bool


@dataclass(frozen=True)
class RunScenarioFailed(EvidenceEvent, source="run", kind="scenario_failed"):
    error: str


@dataclass(frozen=True)
class RunWaiting(EvidenceEvent, source="run", kind="waiting"):
    """Every component is up: the run waits for the agent's done file (or the timeout)."""

    done_file: str
    timeout_s: float | None


@dataclass(frozen=True)
class RunDone(EvidenceEvent, source="run", kind="done"):
    reason: str


@dataclass(frozen=True)
class RunEnded(EvidenceEvent, source="run", kind="ended"):
    reason: str


@dataclass(frozen=True)
class RunPhase(EvidenceEvent, source="run", kind="phase"):
    """A phase the dashboard shows (replaying a bundle, ended unscored)."""

    _omit_none: ClassVar[tuple[str, ...]] = ("task", "run")
    phase: str
    task: str | None = None
    run: str | None = None


@dataclass(frozen=True)
class RunReport(EvidenceEvent, source="run", kind="report"):
    """A replayed bundle's report.json (the last event of a replay)."""

    task: str
    report: dict[str, Any]


@dataclass(frozen=True)
class NodeStatus(EvidenceEvent, source="node", kind="status"):
    """A node's retained status message (monitor/mqtt/feed.py `set_status`)."""

    _omit_none: ClassVar[tuple[str, ...]] = ("task", "last_run", "last_score", "last_error", "shared")
    node: str
    state: str
    run: str | None = None
    task: str | None = None
    last_run: str | None = None
    last_score: float | None = None
    last_error: str | None = None
    shared: list[str] | None = None


@dataclass(frozen=True)
class NodeScore(EvidenceEvent, source="node", kind="score"):
    """The score a node published for one of its runs."""

    node: str
    run: str
    task: str | None
    score: float | None
