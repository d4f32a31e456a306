"""Evidence a scenario run records (scenarios/engine.py), source "scenario".

`action` is one step's record (scenarios.evaluate.ActionRecord.to_dict() plus the scenario's
name); `expectation` one judged expectation (ExpectationResult.to_dict()). Times are monotonic ns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from verifiers.evidence.base import EvidenceEvent


@dataclass(frozen=True)
class ScenarioAction(EvidenceEvent, source="scenario", kind="action"):
    """What one step did: when it was due, when it happened, how it went (status ok|failed|skipped)."""

    _omit_none: ClassVar[tuple[str, ...]] = ("scenario",)
    step: str
    action: str = ""
    arg: str = ""
    status: str = "ok"
    scheduled_ns: int | None = None
    actual_ns: int | None = None
    done_ns: int | None = None
    anchor_ns: int | None = None
    lateness_ms: float | None = None
    error: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    scenario: str | None = None

    def at_ms(self, event_mono_ns: int | None) -> float | None:
        """When the step happened (actual_ns, else the event's own time), in ms."""
        ns = self.actual_ns if self.actual_ns is not None else event_mono_ns
        return None if ns is None else ns / 1e6


@dataclass(frozen=True)
class ScenarioExpectation(EvidenceEvent, source="scenario", kind="expectation"):
    """One expectation judged at the end of the run (latency from its anchor step, in ms)."""

    id: str
    kind: str
    passed: bool
    detail: str = ""
    latency_ms: float | None = None
    anchor: str | None = None
    limit_ms: float | None = None
    scenario: str | None = None
