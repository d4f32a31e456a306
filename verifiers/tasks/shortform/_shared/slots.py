"""A template's time slot as ground truth gives it (gt/template.json of T02, gt/slots.json of T12)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from verifiers.evidence.base import Payload
from verifiers.gtfiles import gt_field


@dataclass(frozen=True)
class TimeSlot(Payload):
    """Where the export (or preview) shows one slot."""

    start_s: float = gt_field(doc="slot start")
    end_s: float = gt_field(doc="slot end")


def slots_ordered(slots: list[TimeSlot]) -> bool:
    """Non-empty, each slot ends after it starts, and each starts after the one before it."""
    return bool(slots) and all(s.start_s < s.end_s for s in slots) \
        and all(a.start_s < b.start_s for a, b in itertools.pairwise(slots))
