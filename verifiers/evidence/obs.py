"""Evidence the OBS observer (monitor/observers/obs.py) records, source "obs".

Every obs-websocket event is one `event` {type, data} (`ObsEvent`); the event data of the types
scorers and the dashboard read is typed by `OBS_EVENT_DATA` (OBS's own camelCase keys, as OBS
sends them: renaming one would be a different protocol). Snapshots carry the observer's whole
state (`ObsState`, built by monitor/observers/obs_snapshot.take_snapshot).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from verifiers.evidence.base import EvidenceError, EvidenceEvent, Payload


@dataclass(frozen=True)
class ObsConnected(EvidenceEvent, source="obs", kind="connected"):
    """The observer (re)connected; what this OBS and obs-websocket can do."""

    obs_version: str
    ws_version: str
    rpc_version: int = 1
    has_uuids: bool = False
    has_filter_settings_event: bool = False


@dataclass(frozen=True)
class ObsGap(EvidenceEvent, source="obs", kind="gap"):
    """The connection to OBS was lost (phase start) or is back (phase end)."""

    _omit_none: ClassVar[tuple[str, ...]] = ("reason", "duration_s", "attempts")
    phase: str
    reason: str | None = None
    duration_s: float | None = None
    attempts: int | None = None


# ---- obs-websocket event data (OBS's keys) ----------------------------------------------------

@dataclass(frozen=True)
class SceneData(Payload):
    """CurrentProgramSceneChanged / CurrentPreviewSceneChanged."""

    _omit_none: ClassVar[tuple[str, ...]] = ("sceneUuid",)
    sceneName: str
    sceneUuid: str | None = None


@dataclass(frozen=True)
class InputMuteData(Payload):
    """InputMuteStateChanged."""

    _omit_none: ClassVar[tuple[str, ...]] = ("inputUuid",)
    inputName: str
    inputMuted: bool
    inputUuid: str | None = None


@dataclass(frozen=True)
class InputSyncOffsetData(Payload):
    """InputAudioSyncOffsetChanged (offset in ms, as OBS names it)."""

    _omit_none: ClassVar[tuple[str, ...]] = ("inputUuid",)
    inputName: str
    inputAudioSyncOffset: int
    inputUuid: str | None = None


@dataclass(frozen=True)
class TransitionData(Payload):
    """SceneTransitionStarted/Ended/VideoEnded, CurrentSceneTransitionChanged."""

    _omit_none: ClassVar[tuple[str, ...]] = ("transitionName", "transitionUuid")
    transitionName: str | None = None
    transitionUuid: str | None = None


@dataclass(frozen=True)
class OutputStateData(Payload):
    """Stream/Record/ReplayBuffer/VirtualcamStateChanged (outputPath only on a stopped recording)."""

    _omit_none: ClassVar[tuple[str, ...]] = ("outputPath",)
    outputActive: bool
    outputState: str = ""
    outputPath: str | None = None


@dataclass(frozen=True)
class ReplaySavedData(Payload):
    """ReplayBufferSaved."""

    savedReplayPath: str


#: obs-websocket event type -> the type of its data, for the types this project reads
OBS_EVENT_DATA: dict[str, type[Payload]] = {
    "CurrentProgramSceneChanged": SceneData, "CurrentPreviewSceneChanged": SceneData,
    "InputMuteStateChanged": InputMuteData, "InputAudioSyncOffsetChanged": InputSyncOffsetData,
    "SceneTransitionStarted": TransitionData, "SceneTransitionEnded": TransitionData,
    "SceneTransitionVideoEnded": TransitionData, "CurrentSceneTransitionChanged": TransitionData,
    "StreamStateChanged": OutputStateData, "RecordStateChanged": OutputStateData,
    "ReplayBufferStateChanged": OutputStateData, "VirtualcamStateChanged": OutputStateData,
    "ReplayBufferSaved": ReplaySavedData,
}


@dataclass(frozen=True)
class ObsEvent(EvidenceEvent, source="obs", kind="event"):
    """One obs-websocket event as the observer received it (receipt time = the event's mono_ns)."""

    _omit_none: ClassVar[tuple[str, ...]] = ("receipt_mono_ns", "receipt_wall")
    type: str
    data: dict[str, Any] = field(default_factory=dict)
    receipt_mono_ns: int | None = None
    receipt_wall: float | None = None

    @classmethod
    def of(cls, etype: str, data: Payload) -> ObsEvent:
        """The event of `etype` carrying typed `data` (synthetic instances, tests)."""
        if not isinstance(data, OBS_EVENT_DATA.get(etype, Payload)):
            raise TypeError(f"{etype} carries {OBS_EVENT_DATA[etype].__name__}, not {type(data).__name__}")
        return cls(etype, data.to_payload())

    def typed(self) -> Any:
        """The data as its declared type (EvidenceError when it does not fit); untyped types: the dict."""
        cls = OBS_EVENT_DATA.get(self.type)
        return self.data if cls is None else cls.from_payload(self.data, f"obs/event {self.type}")


@dataclass(frozen=True)
class ObsState(Payload):
    """What one snapshot saw (monitor/observers/obs_snapshot.take_snapshot); inputs by name."""

    current_program_scene: str | None = None
    current_preview_scene: str | None = None
    studio_mode: bool | None = None
    scenes: list[dict[str, Any]] = field(default_factory=list)
    groups: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    filters: dict[str, Any] = field(default_factory=dict)
    transition: dict[str, Any] = field(default_factory=dict)
    transitions: list[Any] = field(default_factory=list)
    video: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] | None = None
    stream: dict[str, Any] | None = None
    record: dict[str, Any] | None = None
    replay_buffer: dict[str, Any] | None = None
    virtualcam: dict[str, Any] | None = None

    def muted(self) -> dict[str, bool]:
        """input name -> muted, for the inputs that have audio."""
        return {n: bool(i["muted"]) for n, i in self.inputs.items() if isinstance(i.get("muted"), bool)}


@dataclass(frozen=True)
class ObsSnapshot(EvidenceEvent, source="obs", kind="snapshot"):
    """The observer's full read of OBS (at start, after changes, periodically)."""

    _omit_none: ClassVar[tuple[str, ...]] = ("took_ms",)
    reason: str
    state: ObsState
    took_ms: float | None = None


@dataclass(frozen=True)
class ObsStats(EvidenceEvent, source="obs", kind="stats"):
    """GetStats and the output statuses, every stats interval (None: this OBS has no such output)."""

    stats: dict[str, Any] = field(default_factory=dict)
    stream: dict[str, Any] | None = None
    record: dict[str, Any] | None = None
    replay_buffer: dict[str, Any] | None = None
    virtualcam: dict[str, Any] | None = None


@dataclass(frozen=True)
class ObsScreenshot(EvidenceEvent, source="obs", kind="screenshot"):
    """A program frame the observer took with GetSourceScreenshot (read-only) of the program scene.

    OBS has no screenshot event: the observer asks at a bounded rate when a task needs frames
    (catalog live need `obs_screenshots`); `image_data` is OBS's answer as sent (a data: URI,
    e.g. data:image/png;base64,...), scaled to `width_px` wide. Scorers decode it (T12)."""

    _omit_none: ClassVar[tuple[str, ...]] = ("took_ms",)
    scene: str
    image_format: str
    width_px: int
    image_data: str
    took_ms: float | None = None


@dataclass(frozen=True)
class ObsFiltersChanged(EvidenceEvent, source="obs", kind="filters_changed"):
    """A source's filter list differs from the last poll (obs-websocket 5.1 has no such event)."""

    source: str
    before: list[dict[str, Any]]
    after: list[dict[str, Any]]


@dataclass(frozen=True)
class ObsWsLog(EvidenceEvent, source="obs", kind="ws/log"):
    """OBS's log file the log observer follows; `debug`: OBS runs with --websocket_debug."""

    file: str
    debug: bool
    from_end: bool = False


@dataclass(frozen=True)
class WsRequestFields(Payload):
    """One obs-websocket request a client sent and how OBS answered (ok None: answer unseen).

    `client` is who sent it, from the request id's prefix (monitor/observers/obs_log.client_of)."""

    request_type: str | None = None
    request_id: Any = None
    client: str | None = None
    batch: bool = False
    names: dict[str, Any] = field(default_factory=dict)
    ok: bool | None = None
    code: int | None = None


@dataclass(frozen=True)
class ObsLogWsRequest(WsRequestFields, EvidenceEvent, source="obs", kind="ws/request"):
    """A request read from OBS's own debug log (monitor/observers/obs_log.py: lossy, torn lines)."""

    _omit_none: ClassVar[tuple[str, ...]] = ("truncated", "recovered")
    log_time: str | None = None
    truncated: bool | None = None
    recovered: str | None = None


@dataclass(frozen=True)
class ProxyWsRequest(WsRequestFields, EvidenceEvent, source="obs-proxy", kind="ws/request"):
    """A request seen by the obs-websocket proxy (monitor/observers/obs_ws_proxy.py: exact)."""

    session: int | None = None
    comment: str | None = None


def obs_event_of(e: Any) -> ObsEvent | None:
    """The ObsEvent when `e` is one (EvidenceError when it claims to be and does not fit), else None."""
    if not isinstance(e, dict) or not ObsEvent.matches(e):
        return None
    return ObsEvent.from_event(e)


__all__ = ["OBS_EVENT_DATA", "EvidenceError", "InputMuteData", "InputSyncOffsetData", "ObsConnected", "ObsEvent",
           "ObsFiltersChanged", "ObsGap", "ObsLogWsRequest", "ObsScreenshot", "ObsSnapshot", "ObsState", "ObsStats", "ObsWsLog",
           "OutputStateData", "ProxyWsRequest", "ReplaySavedData", "SceneData", "TransitionData",
           "WsRequestFields"]
