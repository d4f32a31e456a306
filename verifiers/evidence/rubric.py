"""Evidence a rater records for a rubric check (verifiers/rubric.py), source "rubric".

A person (or a VLM judge) scores one check 0..1; tally never computes these. Synthetic instances
carry a stand-in judgment whose `rater` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from verifiers.evidence.base import EvidenceEvent


@dataclass(frozen=True)
class RubricJudgment(EvidenceEvent, source="rubric", kind="judgment"):
    """One rater's score (0..1) for one check."""

    _omit_none: ClassVar[tuple[str, ...]] = ("rater", "note")
    check: str
    score: float
    rater: str | None = None
    note: str | None = None
