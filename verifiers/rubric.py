"""Checks judged by people (or a VLM judge), never computed by tally.

A rubric check's score comes only from recorded judgments — events
{"source": "rubric", "kind": "judgment", "payload": {"check": name, "score": 0..1, "rater": ..., "note": ...}}
in the run's event log (mean over raters). Without any, the check is an error ("needs a judge"):
unjudged, not failed, and never invented. Synthetic instances carry a stand-in judgment so the
plumbing is proven; it says so in its `rater`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from verifiers.base import Checks, ScoreContext
from verifiers.checks import Result
from verifiers.evidence import EvidenceError
from verifiers.evidence.rubric import RubricJudgment


def judgments(events: list[dict[str, Any]] | None, name: str) -> tuple[list[RubricJudgment], int]:
    """The recorded judgments of one check (verifiers.evidence.RubricJudgment), and how many
    judgment events did not fit the type (a rater's malformed record is skipped, not scored)."""
    out, bad = [], 0
    for e in events or []:
        if not RubricJudgment.matches(e):
            continue
        try:
            j = RubricJudgment.from_event(e)
        except EvidenceError:
            bad += 1
            continue
        if j.check == name:
            out.append(j)
    return out, bad


def rubric_check(ctx: ScoreContext, checks: Checks, name: str, what: str = "human rubric") -> None:
    judged, _bad = judgments(ctx.events, name)
    scores = [j.score for j in judged if 0.0 <= j.score <= 1.0]
    if not scores:
        checks.error(name, f"needs {what}: no rubric judgment recorded for this run")
        return
    checks.set(name, float(np.mean(scores)), {"raters": [j.rater for j in judged], "scores": scores},
               f"mean of {len(scores)} rubric judgment(s)")


def rubric_event(name: str, score: float, rater: str = "synthetic stand-in for a human rater") -> dict[str, Any]:
    """The judgment event a rater would record (for synthetic instances: tests the plumbing only)."""
    return RubricJudgment(name, score, rater).event()


class _OneCheck:
    """Receives what rubric_check records for its one check."""

    result: Result | None = None

    def set(self, name: str, score: float, evidence: dict[str, Any] | None = None, message: str = "") -> None:
        self.result = Result(score, evidence or {}, message)

    def error(self, name: str, message: str, evidence: dict[str, Any] | None = None) -> None:
        self.result = Result.cannot_judge(message, evidence)


def rubric_result(ctx: ScoreContext, name: str, what: str = "human rubric") -> Result:
    """A declared check's form of rubric_check: the mean of the recorded judgments for check `name`
    as a Result (its curve is per_item: the mean of 0..1 judgments); cannot_judge without any."""
    sink = _OneCheck()
    rubric_check(ctx, sink, name, what)  # type: ignore[arg-type]  (duck-typed: set/error only)
    assert sink.result is not None
    return sink.result
