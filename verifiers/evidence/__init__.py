"""Typed evidence: one dataclass per recorded event (source, kind), shared by producers and scorers.

A leaf package: it imports nothing of this repo, so every layer (rtmp/, probes/, scenarios/,
monitor/, verifiers/) may import it (the import-linter contract in .importlinter allows exactly this).
Producers emit through `to_payload()`, scorers parse through `from_event()`, synthetic instances
build their events with the same constructors (`.event(t_ms)`), so a renamed key cannot pass a
self-test silently. `python -m verifiers.evidence.schema` writes docs/evidence.schema.json.
"""

from verifiers.evidence.base import EvidenceError, EvidenceEvent
from verifiers.evidence.rtmp import (
    AudioStats,
    RtmpListening,
    RtmpPublish,
    RtmpStats,
    RtmpUnpublish,
    StreamSnapshot,
    Summary,
    VideoStats,
)

__all__ = ["AudioStats", "EvidenceError", "EvidenceEvent", "RtmpListening", "RtmpPublish", "RtmpStats",
           "RtmpUnpublish", "StreamSnapshot", "Summary", "VideoStats"]
