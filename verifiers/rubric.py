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


def rubric_check(ctx: ScoreContext, checks: Checks, name: str, what: str = "human rubric") -> None:
    judged = [e.get("payload", {}) for e in (ctx.events or []) if e.get("source") == "rubric"
              and e.get("kind") == "judgment" and e.get("payload", {}).get("check") == name]
    scores = []
    for j in judged:
        try:
            s = float(j.get("score"))
        except (TypeError, ValueError):
            continue
        if 0.0 <= s <= 1.0:
            scores.append(s)
    if not scores:
        checks.error(name, f"needs {what}: no rubric judgment recorded for this run")
        return
    checks.set(name, float(np.mean(scores)), {"raters": [j.get("rater") for j in judged], "scores": scores},
               f"mean of {len(scores)} rubric judgment(s)")


def rubric_event(name: str, score: float, rater: str = "synthetic stand-in for a human rater") -> dict[str, Any]:
    """The judgment event a rater would record (for synthetic instances: tests the plumbing only)."""
    return {"source": "rubric", "kind": "judgment", "payload": {"check": name, "score": score, "rater": rater}}


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
