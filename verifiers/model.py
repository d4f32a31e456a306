"""The scoring model: what one check says, and what a report holds.

`error` means "the verifier could not judge" (missing GT, unreadable evidence, a verifier bug).
It is kept apart from the agent's failures: a report with errors says its score is incomplete
and how many points were never judged, instead of counting them as zero.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Status = Literal["pass", "partial", "fail", "error"]

#: Version of the report.json layout; documented in docs/report-schema.md.
REPORT_SCHEMA = "tally.report/1"

#: Scores within this of 1 (or 0) count as pass (or fail): floating noise is not partial credit.
SCORE_EPS = 1e-6


@dataclass
class CheckResult:
    name: str
    weight: float
    score: float  # 0..1; 0 for errors (never summed: see Report)
    status: Status
    evidence: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    curve: dict[str, Any] | None = None  # the catalog curve that turned the measurement into `score`

    @property
    def points(self) -> float:
        return 0.0 if self.status == "error" else self.weight * self.score

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def status_for(score: float) -> Status:
    if score >= 1 - SCORE_EPS:
        return "pass"
    if score <= SCORE_EPS:
        return "fail"
    return "partial"


def clamp01(value: float) -> float:
    """Scores are clamped, and a NaN score is a bug that must not pass silently."""
    if math.isnan(value):
        raise ValueError("check score is NaN")
    return min(1.0, max(0.0, float(value)))


@dataclass
class Report:
    task: str
    family: str
    title: str
    checks: list[CheckResult]
    implemented: bool = True
    notes: list[str] = field(default_factory=list)
    inputs: dict[str, Any] = field(default_factory=dict)

    @property
    def errors(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status == "error"]

    @property
    def score(self) -> float:
        """Points earned out of 100; checks in error earn nothing *and* are listed as unjudged."""
        return round(sum(c.points for c in self.checks), 4)

    @property
    def unjudged_weight(self) -> float:
        return round(sum(c.weight for c in self.errors), 4)

    @property
    def complete(self) -> bool:
        return self.implemented and not self.errors

    @property
    def status(self) -> str:
        if not self.implemented:
            return "not_implemented"
        return "complete" if self.complete else "incomplete"

    def to_dict(self) -> dict[str, Any]:
        judged = 100.0 - self.unjudged_weight
        return {
            "schema": REPORT_SCHEMA,
            "task": self.task,
            "family": self.family,
            "title": self.title,
            "status": self.status,
            "implemented": self.implemented,
            "score": self.score,
            "complete": self.complete,
            "judged_weight": round(judged, 4),
            "unjudged_weight": self.unjudged_weight,
            "score_of_judged_pct": round(100.0 * self.score / judged, 4) if judged > 0 else None,
            "checks": [c.to_dict() for c in self.checks],
            "errors": [{"check": c.name, "weight": c.weight, "message": c.message} for c in self.errors],
            "notes": list(self.notes),
            "inputs": self.inputs,
        }
