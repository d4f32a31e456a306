"""A rubric-judged check (design impact, naturalness) as a declared-check Result.

The judgment events and their averaging are verifiers.rubric's (one rule for every family); this
adapts its `Checks`-filling form to the `Result` a `@check` method returns.
"""

from __future__ import annotations

from typing import Any

from verifiers.base import ScoreContext
from verifiers.checks import Result
from verifiers.rubric import rubric_check


class _OneCheck:
    """Receives what rubric_check records for its one check."""

    result: Result | None = None

    def set(self, name: str, score: float, evidence: dict[str, Any] | None = None, message: str = "") -> None:
        self.result = Result(score, evidence or {}, message)

    def error(self, name: str, message: str, evidence: dict[str, Any] | None = None) -> None:
        self.result = Result.cannot_judge(message, evidence)


def rubric_result(ctx: ScoreContext, name: str, what: str = "human rubric") -> Result:
    """The mean of the recorded rubric judgments for check `name`; cannot_judge without any."""
    sink = _OneCheck()
    rubric_check(ctx, sink, name, what)  # type: ignore[arg-type]  (duck-typed: set/error only)
    assert sink.result is not None
    return sink.result
