"""Typed evidence: one dataclass per recorded event (source, kind), shared by producers and scorers.

A leaf package: it imports nothing of this repo, so every layer (rtmp/, probes/, scenarios/,
monitor/, verifiers/) may import it (the import-linter contract in .importlinter allows exactly this).
Producers emit through `to_payload()`, scorers parse through `from_event()`, synthetic instances
build their events with the same constructors (`.event(t_ms)`), so a renamed key cannot pass a
self-test silently. `python -m verifiers.evidence.schema` writes docs/evidence.schema.json.
"""

from verifiers.evidence.audit import AUDIT_WRITE_KINDS, AuditStarted, AuditWrite, audit_writes
from verifiers.evidence.base import EvidenceError, EvidenceEvent
from verifiers.evidence.obs import (
    OBS_EVENT_DATA,
    InputMuteData,
    ObsConnected,
    ObsEvent,
    ObsGap,
    ObsLogWsRequest,
    ObsScreenshot,
    ObsSnapshot,
    ObsState,
    ObsStats,
    ObsWsLog,
    OutputStateData,
    ProxyWsRequest,
    SceneData,
    TransitionData,
)
from verifiers.evidence.probe import AudioMeter, VideoFrame
from verifiers.evidence.rtmp import (
    AudioStats,
    HealthView,
    RtmpHealth,
    RtmpListening,
    RtmpPublish,
    RtmpStats,
    RtmpUnpublish,
    StreamSnapshot,
    Summary,
    VideoStats,
)
from verifiers.evidence.scenario import ScenarioAction, ScenarioExpectation
from verifiers.evidence.vmix import (
    VmixInputBrief,
    VmixOutput,
    VmixPreview,
    VmixProgram,
    VmixSnapshot,
    VmixTally,
)

__all__ = [
    "AUDIT_WRITE_KINDS",
    "OBS_EVENT_DATA",
    "AudioMeter",
    "AudioStats",
    "AuditStarted",
    "AuditWrite",
    "EvidenceError",
    "EvidenceEvent",
    "HealthView",
    "InputMuteData",
    "ObsConnected",
    "ObsEvent",
    "ObsGap",
    "ObsLogWsRequest",
    "ObsScreenshot",
    "ObsSnapshot",
    "ObsState",
    "ObsStats",
    "ObsWsLog",
    "OutputStateData",
    "ProxyWsRequest",
    "RtmpHealth",
    "RtmpListening",
    "RtmpPublish",
    "RtmpStats",
    "RtmpUnpublish",
    "ScenarioAction",
    "ScenarioExpectation",
    "SceneData",
    "StreamSnapshot",
    "Summary",
    "TransitionData",
    "VideoFrame",
    "VideoStats",
    "VmixInputBrief",
    "VmixOutput",
    "VmixPreview",
    "VmixProgram",
    "VmixSnapshot",
    "VmixTally",
    "audit_writes",
]
