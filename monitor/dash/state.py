"""What the dashboard shows, folded from events: a pure reducer, so it is tested without a screen.

Every event source speaks its own payloads (rtmp stats snapshots, obs-websocket events, vMix
diffs, probe meter frames, scenario records); this module maps them onto the panels. Payloads
of typed evidence are parsed by their dataclass (verifiers.evidence, the producers' own types):
no key is guessed. A payload that does not fit its type is noted in `problems` and skipped, so
the dashboard never dies on one (and a renamed key shows there instead of a blank panel).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from verifiers.evidence import (
    AudioMeter,
    EvidenceError,
    NodeScore,
    NodeStatus,
    ObsConnected,
    ObsEvent,
    ObsGap,
    ObsSnapshot,
    ObsStats,
    RtmpHealth,
    RtmpSequenceHeader,
    RtmpStats,
    RunDone,
    RunPhase,
    RunReport,
    RunStarted,
    ScenarioAction,
    ScenarioExpectation,
    VmixOutput,
    VmixPreview,
    VmixProgram,
    VmixTally,
)
from verifiers.evidence.obs import InputMuteData, OutputStateData, SceneData, TransitionData

HISTORY_POINTS = 120


@dataclass
class StreamView:
    app: str
    key: str
    state: str = "live"
    client: str = ""
    width_px: int | None = None
    height_px: int | None = None
    fps: float | None = None
    video_codec: str | None = None
    bitrate_bps: float | None = None
    keyframe_last_s: float | None = None
    keyframe_mean_s: float | None = None
    audio: str = ""
    duration_s: float = 0.0
    #: platform profile -> (status, issue types) from the ingest's health (rtmp/health)
    health: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    bitrate_history_bps: deque[float] = field(default_factory=lambda: deque(maxlen=HISTORY_POINTS))

    @property
    def name(self) -> str:
        return f"{self.app}/{self.key}"


@dataclass
class ObsView:
    connected: bool | None = None
    version: str = ""
    program: str = ""
    preview: str = ""
    muted: dict[str, bool] = field(default_factory=dict)
    outputs: dict[str, bool] = field(default_factory=dict)
    cpu_pct: float | None = None
    active_fps: float | None = None
    render_skipped: int | None = None
    output_skipped: int | None = None
    transition: str = ""


@dataclass
class VmixView:
    connected: bool | None = None
    program: str = ""
    preview: str = ""
    outputs: dict[str, bool] = field(default_factory=dict)


@dataclass
class MeterView:
    momentary_lufs: float | None = None
    short_term_lufs: float | None = None
    integrated_lufs: float | None = None
    true_peak_dbtp: float | None = None
    target_lufs: float | None = None


@dataclass
class ScenarioRow:
    kind: str  # action | expect
    name: str
    at_s: float | None  # run time the action happened / the expectation was reported
    lateness_ms: float | None  # actual − scheduled, for actions
    result: str  # ok / failed / skipped / pass / FAIL
    latency_ms: float | None = None  # measured reaction, for expectations
    detail: str = ""


@dataclass
class DashState:
    task: str = ""
    run: str = ""
    phase: str = "waiting"
    first_mono_ns: int | None = None
    last_mono_ns: int | None = None
    streams: dict[str, StreamView] = field(default_factory=dict)
    obs: ObsView = field(default_factory=ObsView)
    vmix: VmixView = field(default_factory=VmixView)
    meters: dict[str, MeterView] = field(default_factory=dict)
    scenario: list[ScenarioRow] = field(default_factory=list)
    log: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=5000))
    report: dict[str, Any] | None = None
    event_count: int = 0
    problems: list[str] = field(default_factory=list)
    #: every `tally serve` node on the broker: node -> {state, task, run, last_score} (retained status)
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def elapsed_s(self) -> float:
        if self.first_mono_ns is None or self.last_mono_ns is None:
            return 0.0
        return (self.last_mono_ns - self.first_mono_ns) / 1e9

    def apply(self, event: dict[str, Any]) -> None:
        """Fold one event (as a dict, the events.jsonl shape) into the view."""
        self.event_count += 1
        mono = event.get("mono_ns")
        if isinstance(mono, int):
            if self.first_mono_ns is None:
                self.first_mono_ns = mono
            self.last_mono_ns = max(mono, self.last_mono_ns or mono)
        self.log.append(event)
        source, kind = str(event.get("source", "")), str(event.get("kind", ""))
        payload = event.get("payload") or {}
        if not isinstance(payload, dict):
            return
        handler = _HANDLERS.get(source) or (_probe_audio if source.startswith("probe.audio") else None)
        if handler is not None:
            try:
                handler(self, kind, payload, event)
            except EvidenceError as exc:  # a producer's payload does not fit its type
                self.problems.append(f"unreadable {source}/{kind}: {exc}")


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _rtmp(st: DashState, kind: str, p: dict[str, Any], e: dict[str, Any]) -> None:
    if "app" not in p or "key" not in p or p.get("key") is None:
        return
    name = f"{p['app']}/{p['key']}"
    view = st.streams.get(name)
    if view is None:
        if kind not in ("publish", "stats", "metadata", "sequence_header"):
            return
        view = st.streams[name] = StreamView(str(p["app"]), str(p["key"]))
    if kind == "publish":
        view.state, view.client = "live", str(p.get("client", ""))
    elif kind == "unpublish":
        view.state = "ended"
    elif kind == "stats":
        stats = RtmpStats.from_event(e)
        snap = stats.snapshot
        v, a = snap.video, snap.audio
        view.width_px, view.height_px = v.width, v.height
        view.fps = v.fps
        view.video_codec = v.codec
        view.bitrate_bps = v.bitrate_bps
        if view.bitrate_bps is not None:
            view.bitrate_history_bps.append(view.bitrate_bps)
        view.keyframe_last_s, view.keyframe_mean_s = v.keyframe_interval_s.last, v.keyframe_interval_s.mean
        if a.codec:
            view.audio = f"{a.codec} {a.sample_rate_hz or '?'} Hz {a.channels or '?'} ch"
        view.duration_s = snap.duration_s or view.duration_s
        for name, h in (stats.health or {}).items():
            view.health[name] = (h.status, h.issue_types)
    elif kind == "sequence_header":  # the size and codec are known before the first 1 Hz stats
        hdr = RtmpSequenceHeader.from_event(e)
        if hdr.track == "video":
            view.video_codec = view.video_codec or hdr.codec
            view.width_px, view.height_px = view.width_px or hdr.width, view.height_px or hdr.height
    elif kind == "health":
        hv = RtmpHealth.from_event(e)
        view.health[hv.profile] = (hv.status, hv.issue_types)


_OBS_OUTPUT_EVENTS = {"StreamStateChanged": "stream", "RecordStateChanged": "record",
                      "ReplayBufferStateChanged": "replay", "VirtualcamStateChanged": "virtualcam"}


def _obs(st: DashState, kind: str, _p: dict[str, Any], e: dict[str, Any]) -> None:
    o = st.obs
    if kind == "connected":
        o.connected, o.version = True, ObsConnected.from_event(e).ws_version
    elif kind == "gap":
        o.connected = ObsGap.from_event(e).phase == "end"
    elif kind == "event":
        ev = ObsEvent.from_event(e)
        data = ev.typed()
        if isinstance(data, SceneData):
            setattr(o, "program" if ev.type == "CurrentProgramSceneChanged" else "preview", data.sceneName)
        elif isinstance(data, InputMuteData):
            o.muted[data.inputName] = data.inputMuted
        elif isinstance(data, TransitionData) and ev.type == "CurrentSceneTransitionChanged":
            o.transition = data.transitionName or ""
        elif isinstance(data, OutputStateData) and ev.type in _OBS_OUTPUT_EVENTS:
            o.outputs[_OBS_OUTPUT_EVENTS[ev.type]] = data.outputActive
    elif kind == "snapshot":
        state = ObsSnapshot.from_event(e).state
        o.connected = True
        o.program = state.current_program_scene or o.program
        o.preview = state.current_preview_scene or o.preview
        o.muted.update(state.muted())
        _obs_stats(o, ObsStats(state.stats or {}, state.stream, state.record, state.replay_buffer))
    elif kind == "stats":
        _obs_stats(o, ObsStats.from_event(e))


def _obs_stats(o: ObsView, p: ObsStats) -> None:
    stats = p.stats
    if stats:
        o.cpu_pct = _num(stats.get("cpuUsage"))  # GetStats' own keys (obs-websocket's protocol)
        o.active_fps = _num(stats.get("activeFps"))
        o.render_skipped = stats.get("renderSkippedFrames")
        o.output_skipped = stats.get("outputSkippedFrames")
    for key, status in (("stream", p.stream), ("record", p.record), ("replay", p.replay_buffer)):
        if status is not None and "outputActive" in status:
            o.outputs[key] = bool(status["outputActive"])


def _vmix(st: DashState, kind: str, _p: dict[str, Any], e: dict[str, Any]) -> None:
    v = st.vmix
    if kind == "connected" or kind == "gap.end":
        v.connected = True
    elif kind == "gap.start":
        v.connected = False
    elif kind in ("program", "preview"):
        switch = (VmixProgram if kind == "program" else VmixPreview).from_event(e)
        setattr(v, kind, switch.input.label)
    elif kind == "tally":
        t = VmixTally.from_event(e)
        v.program = ",".join(map(str, t.program)) or v.program
        v.preview = ",".join(map(str, t.preview)) or v.preview
    elif kind == "output":
        out = VmixOutput.from_event(e)
        v.outputs[out.name] = out.active


def _probe_audio(st: DashState, kind: str, _p: dict[str, Any], e: dict[str, Any]) -> None:
    if kind != "meter":
        return
    p = AudioMeter.from_event(e)
    track = str(p.track if p.track is not None else p.name or e.get("source"))
    if p.app is not None:
        track = f"{p.app}/{p.key} track {track}"
    m = st.meters.setdefault(track, MeterView())
    m.momentary_lufs, m.short_term_lufs, m.integrated_lufs = p.momentary_lufs, p.short_term_lufs, p.integrated_lufs
    peaks = [x for x in p.true_peak_dbtp if x is not None]
    m.true_peak_dbtp = max(peaks) if peaks else None
    m.target_lufs = p.target_lufs or m.target_lufs


def _scenario(st: DashState, kind: str, _p: dict[str, Any], e: dict[str, Any]) -> None:
    at_s = None
    if isinstance(e.get("mono_ns"), int) and st.first_mono_ns is not None:
        at_s = (e["mono_ns"] - st.first_mono_ns) / 1e9
    if kind == "action":
        a = ScenarioAction.from_event(e)
        name = " ".join(x for x in (a.step, a.action, a.arg) if x)
        st.scenario.append(ScenarioRow("action", name, at_s, a.lateness_ms, a.status, detail=a.error))
    elif kind == "expectation":
        x = ScenarioExpectation.from_event(e)
        st.scenario.append(ScenarioRow("expect", x.id, at_s, None, "pass" if x.passed else "FAIL", x.latency_ms,
                                       x.detail))


def _run(st: DashState, kind: str, _p: dict[str, Any], e: dict[str, Any]) -> None:
    """The run's lifecycle (typed run/* events): task, run id and phase; the report of a replay."""
    if kind == "started":
        s = RunStarted.from_event(e)
        st.task, st.run, st.phase = s.task, s.run_id, "running"
    elif kind == "phase":
        ph = RunPhase.from_event(e)
        st.task, st.run, st.phase = ph.task or st.task, ph.run or st.run, ph.phase
    elif kind == "done":
        RunDone.from_event(e)
        st.phase = "scoring"
    elif kind == "report":
        r = RunReport.from_event(e)
        st.task, st.phase, st.report = r.task or st.task, "scored", r.report


def _node(st: DashState, kind: str, p: dict[str, Any], e: dict[str, Any]) -> None:
    """A node's retained status (`node/status`) or the score of its last run (`node/score`)."""
    if kind not in ("status", "score"):
        return
    ev = NodeStatus.from_event(e) if kind == "status" else NodeScore.from_event(e)
    row = st.nodes.setdefault(ev.node, {"node": ev.node, "state": "?", "task": None, "run": None, "last_score": None})
    if isinstance(ev, NodeStatus):
        row["state"] = ev.state or row["state"]
        row["task"], row["run"] = ev.task or row["task"], ev.last_run or ev.run or row["run"]
        if ev.last_score is not None:
            row["last_score"] = ev.last_score
    else:
        row.update(run=ev.run or row["run"], task=ev.task or row["task"], last_score=ev.score)


_HANDLERS = {"rtmp": _rtmp, "obs": _obs, "vmix": _vmix, "scenario": _scenario, "run": _run, "node": _node}
