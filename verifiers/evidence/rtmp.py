"""Evidence the RTMP ingest (rtmp/) records: listening, connect, publish, sequence headers, metadata,
periodic stats, health, unpublish, disconnect.

`StreamSnapshot` is what `rtmp.stats.StreamStats.snapshot()` measures (it builds one of these and
emits `to_payload()`); a `stats` event is the snapshot with the stream's app/key/client, an
`unpublish` carries the final snapshot under `stats`. T05/T18/T19 read these through `from_event`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from verifiers.evidence.base import EvidenceError, EvidenceEvent, Payload


@dataclass(frozen=True)
class Summary(Payload):
    """last/mean/min/max of a series (GOP bitrates, keyframe intervals); all None before the first value."""

    last: float | None = None
    mean: float | None = None
    min: float | None = None
    max: float | None = None

    @classmethod
    def of(cls, values: Any) -> Summary:
        if not values:
            return cls()
        return cls(last=round(values[-1], 4), mean=round(sum(values) / len(values), 4),
                   min=round(min(values), 4), max=round(max(values), 4))


@dataclass(frozen=True)
class VideoStats(Payload):
    """The video track as measured from the bitstream (size from the codec's sequence header)."""

    _omit_none: ClassVar[tuple[str, ...]] = ("profile", "level", "width", "height")
    codec: str | None = None
    profile: str | None = None  # the four sequence-header fields are absent until one arrived
    level: float | None = None
    width: int | None = None
    height: int | None = None
    frames: int = 0
    keyframes: int = 0
    fps: float | None = None
    fps_overall: float | None = None
    bitrate_bps: float | None = None
    bitrate_1s_bps: float | None = None
    bitrate_gop_bps: Summary = field(default_factory=Summary)
    bitrate_overall_bps: float | None = None
    keyframe_interval_s: Summary = field(default_factory=Summary)
    gaps: int = 0
    timestamps_backwards: int = 0
    bytes: int = 0
    first_ts_ms: int | None = None
    last_ts_ms: int | None = None

    @property
    def gop_bitrate_kbps(self) -> float | None:
        """Bitrate over whole GOPs (what a CBR setting should hit), else the overall bitrate."""
        b = self.bitrate_gop_bps.mean if self.bitrate_gop_bps.mean is not None else self.bitrate_overall_bps
        return None if b is None else b / 1000


@dataclass(frozen=True)
class AudioStats(Payload):
    """The audio track (rate/channels from the AAC config or the FLV tag header)."""

    _omit_none: ClassVar[tuple[str, ...]] = ("object_type", "profile", "sample_rate_hz", "channels", "sbr")
    codec: str | None = None
    object_type: int | None = None
    profile: str | None = None
    sample_rate_hz: int | None = None
    channels: int | None = None
    sbr: bool | None = None
    frames: int = 0
    bitrate_bps: float | None = None
    bitrate_1s_bps: float | None = None
    frame_rate_hz: float | None = None
    timestamps_backwards: int = 0
    bytes: int = 0
    first_ts_ms: int | None = None
    last_ts_ms: int | None = None


@dataclass(frozen=True)
class StreamSnapshot(Payload):
    """Everything measured about one published stream at one moment."""

    duration_s: float = 0.0
    bytes: int = 0
    av_skew_ms: int | None = None
    max_abs_av_skew_ms: int = 0
    video: VideoStats = field(default_factory=VideoStats)
    audio: AudioStats = field(default_factory=AudioStats)
    claimed: dict[str, Any] = field(default_factory=dict)  # onMetaData claims, as the encoder sent them


_SNAPSHOT_KEYS = ("duration_s", "bytes", "av_skew_ms", "max_abs_av_skew_ms", "video", "audio", "claimed")


@dataclass(frozen=True)
class RtmpListening(EvidenceEvent, source="rtmp", kind="listening"):
    host: str
    port: int
    record_dir: str | None = None  # where the ingest records each stream (None: it does not)


@dataclass(frozen=True)
class RtmpConnect(EvidenceEvent, source="rtmp", kind="connect"):
    """An encoder's RTMP connect command (before it publishes)."""

    client: str
    app: str
    tc_url: str  # without credentials (rtmp/session.py `_public_url`)
    flash_ver: str
    type: str


@dataclass(frozen=True)
class RtmpDisconnect(EvidenceEvent, source="rtmp", kind="disconnect"):
    client: str
    app: str | None
    reason: str
    bytes_received: int


@dataclass(frozen=True)
class RtmpMetadata(EvidenceEvent, source="rtmp", kind="metadata"):
    """The stream's onMetaData as the encoder sent it (its claims; rtmp/stats measures the truth)."""

    app: str
    key: str
    metadata: dict[str, Any]


@dataclass(frozen=True)
class RtmpSequenceHeader(EvidenceEvent, source="rtmp", kind="sequence_header"):
    """A track's decoder configuration arrived (AVC/HEVC record, AAC AudioSpecificConfig): what the
    encoder set up before its first frame. Video (H.264/HEVC) carries profile, level and size, AAC its
    object type, rate and channels; other codecs only `codec`. Field order is the payload's key order."""

    _omit_none: ClassVar[tuple[str, ...]] = ("enhanced", "object_type", "profile", "level", "width", "height",
                                             "sample_rate_hz", "channels", "sbr")
    app: str
    key: str
    track: str  # "video" | "audio"
    codec: str
    enhanced: bool | None = None  # video: sent as an Enhanced RTMP (FourCC) tag
    object_type: int | None = None  # AAC audio object type (2 = LC)
    profile: str | None = None  # video profile ("High") or AAC object name ("AAC LC")
    level: float | None = None
    width: int | None = None
    height: int | None = None
    sample_rate_hz: int | None = None  # AAC core rate
    channels: int | None = None
    sbr: bool | None = None  # explicitly signalled SBR: output rate twice the core rate


@dataclass(frozen=True)
class RtmpPublish(EvidenceEvent, source="rtmp", kind="publish"):
    app: str
    key: str
    client: str | None = None
    type: str | None = None  # the publish command's type argument ("live"), as the encoder sent it
    stream_id: int | None = None
    recording: str | None = None  # the file the ingest records this stream to (None: not recording)


@dataclass(frozen=True)
class HealthView(Payload):
    """One platform profile's verdict on a live stream (rtmp/health.ProfileHealth.view)."""

    _omit_none: ClassVar[tuple[str, ...]] = ("platform_status",)
    profile: str
    status: str
    version: Any = None
    issues: list[dict[str, Any]] = field(default_factory=list)
    not_evaluated: list[str] = field(default_factory=list)
    platform_status: str | None = None

    @property
    def issue_types(self) -> list[str]:
        return [str(i.get("type")) for i in self.issues]


@dataclass(frozen=True)
class RtmpHealth(HealthView, EvidenceEvent, source="rtmp", kind="health"):
    """A profile's verdict on a stream changed (the ingest runs with platform profiles)."""

    app: str = ""
    key: str = ""


@dataclass(frozen=True)
class RtmpStats(EvidenceEvent, source="rtmp", kind="stats"):
    """The 1 Hz stats of one live stream: its identity and a snapshot, flat in one payload."""

    app: str
    key: str
    snapshot: StreamSnapshot
    client: str | None = None
    health: dict[str, HealthView] | None = None  # by profile name, when the ingest runs with profiles

    def to_payload(self) -> dict[str, Any]:
        out = {"app": self.app, "key": self.key, "client": self.client, **self.snapshot.to_payload()}
        if self.health is not None:
            out["health"] = {k: h.to_payload() for k, h in self.health.items()}
        return out

    @classmethod
    def from_payload(cls, raw: Any, where: str = "") -> RtmpStats:
        where = where or "rtmp/stats"
        if not isinstance(raw, dict):
            raise EvidenceError(f"{where}: payload must be an object")
        for k in ("app", "key"):
            if not isinstance(raw.get(k), str):
                raise EvidenceError(f"{where}: missing key {k!r}")
        snap = StreamSnapshot.from_payload({k: raw[k] for k in _SNAPSHOT_KEYS if k in raw}, where)
        client = raw.get("client")
        health = raw.get("health")
        if health is not None:
            if not isinstance(health, dict):
                raise EvidenceError(f"{where}.health: {health!r} is not an object")
            health = {str(k): HealthView.from_payload(h, f"{where}.health[{k!r}]") for k, h in health.items()}
        return cls(raw["app"], raw["key"], snap, client if isinstance(client, str) else None, health)


@dataclass(frozen=True)
class RtmpUnpublish(EvidenceEvent, source="rtmp", kind="unpublish"):
    """A stream ended (the publisher's deleteStream/close or a kick); `stats` is its final snapshot."""

    app: str
    key: str
    stats: StreamSnapshot
    reason: str = ""
    client: str | None = None
    recording: dict[str, Any] | None = None
