"""What the RTMP ingest recorded for one stream, read through the typed evidence (verifiers.evidence).

No rtmp events at all: the ingest was not part of the run (NoLiveEvidence, an error). Events but
none for this app/key: the ingest was listening and the agent's stream never came (a failure).
A payload that does not fit its type is the producer's fault, not the agent's: an error.
"""

from __future__ import annotations

from typing import Any

from verifiers.base import AgentOutputError, NoLiveEvidence, ScoreContext
from verifiers.evidence import EvidenceError, RtmpStats, RtmpUnpublish, StreamSnapshot


def final_stats(ctx: ScoreContext, app: str, key: str) -> tuple[StreamSnapshot, bool]:
    """The last stats snapshot of that stream, and whether it was unpublished (stopped)."""
    evs = ctx.events_of("rtmp")
    try:
        ends = [u.stats for u in (RtmpUnpublish.from_event(e) for e in evs if RtmpUnpublish.matches(e))
                if (u.app, u.key) == (app, key)]
        if ends:
            return ends[-1], True
        stats = [s.snapshot for s in (RtmpStats.from_event(e) for e in evs if RtmpStats.matches(e))
                 if (s.app, s.key) == (app, key)]
    except EvidenceError as exc:
        raise NoLiveEvidence(f"malformed ingest event: {exc}") from None
    if not stats:
        raise AgentOutputError(f"the ingest received no stream {app}/{key}")
    return stats[-1], False


def snapshots_of(events: list[dict[str, Any]], app: str) -> list[StreamSnapshot]:
    """Every snapshot of app's streams: the final ones (unpublish) first, then the live ones (stats)."""
    try:
        return [u.stats for u in (RtmpUnpublish.from_event(e) for e in events if RtmpUnpublish.matches(e))
                if u.app == app] + \
            [s.snapshot for s in (RtmpStats.from_event(e) for e in events if RtmpStats.matches(e)) if s.app == app]
    except EvidenceError as exc:
        raise NoLiveEvidence(f"malformed ingest event: {exc}") from None


#: "keyframe 2 s" at the ingest (T05, T19): within 3 frames at 30 fps (OBS's keyint_sec 2 gives 60 frames,
#: 2.000 s; at 29.97 fps 2.002 s); the ingest dates frames in whole ms, so a GOP of 63 frames sits on the line
KEYFRAME_TOL_S = 0.1


def keyframe_ok(ki_s: float | None, want_s: float) -> bool:
    """The ingest's mean keyframe spacing is the asked interval (within KEYFRAME_TOL_S)."""
    return ki_s is not None and abs(ki_s - want_s) <= KEYFRAME_TOL_S
