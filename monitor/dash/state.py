"""What the dashboard shows, folded from events: a pure reducer, so it is tested without a screen.

Every event source speaks its own payloads (rtmp stats snapshots, obs-websocket events,
vMix diffs, probe meter frames, scenario records); this module is the one place that knows how
each maps onto the panels, and it tolerates missing keys: a dashboard must not die on a
payload it did not expect.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

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
            handler(self, kind, payload, event)


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _rtmp(st: DashState, kind: str, p: dict[str, Any], _e: dict[str, Any]) -> None:
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
        v, a = p.get("video") or {}, p.get("audio") or {}
        view.width_px, view.height_px = v.get("width"), v.get("height")
        view.fps = _num(v.get("fps"))
        view.video_codec = v.get("codec")
        view.bitrate_bps = _num(v.get("bitrate_bps"))
        if view.bitrate_bps is not None:
            view.bitrate_history_bps.append(view.bitrate_bps)
        ki = v.get("keyframe_interval_s") or {}
        view.keyframe_last_s, view.keyframe_mean_s = _num(ki.get("last")), _num(ki.get("mean"))
        if a.get("codec"):
            rate, ch = a.get("sample_rate_hz"), a.get("channels")
            view.audio = f"{a['codec']} {rate or '?'} Hz {ch or '?'} ch"
        view.duration_s = _num(p.get("duration_s")) or view.duration_s
        for name, h in (p.get("health") or {}).items():
            if isinstance(h, dict):
                view.health[str(name)] = (str(h.get("status", "?")), [str(i.get("type")) for i in h.get("issues") or []])
    elif kind == "health" and p.get("profile"):
        view.health[str(p["profile"])] = (str(p.get("status", "?")),
                                          [str(i.get("type")) for i in p.get("issues") or []])


_OBS_OUTPUT_EVENTS = {"StreamStateChanged": "stream", "RecordStateChanged": "record",
                      "ReplayBufferStateChanged": "replay", "VirtualcamStateChanged": "virtualcam"}


def _obs(st: DashState, kind: str, p: dict[str, Any], _e: dict[str, Any]) -> None:
    o = st.obs
    if kind == "connected":
        o.connected = True
        o.version = str(p.get("obs_websocket_version") or p.get("obsWebSocketVersion") or p.get("version") or "")
    elif kind == "gap":
        o.connected = p.get("phase") == "end"
    elif kind == "event":
        etype, data = p.get("type"), p.get("data") or {}
        if etype == "CurrentProgramSceneChanged":
            o.program = str(data.get("sceneName", ""))
        elif etype == "CurrentPreviewSceneChanged":
            o.preview = str(data.get("sceneName", ""))
        elif etype == "InputMuteStateChanged":
            o.muted[str(data.get("inputName"))] = bool(data.get("inputMuted"))
        elif etype == "CurrentSceneTransitionChanged":
            o.transition = str(data.get("transitionName", ""))
        elif etype in _OBS_OUTPUT_EVENTS:
            o.outputs[_OBS_OUTPUT_EVENTS[etype]] = bool(data.get("outputActive"))
    elif kind == "snapshot":
        s = p.get("state") or {}
        o.connected = True
        o.program = str(s.get("current_program_scene") or s.get("program_scene") or o.program)
        o.preview = str(s.get("current_preview_scene") or s.get("preview_scene") or o.preview or "")
        for inp in s.get("inputs") or []:
            if isinstance(inp, dict) and "muted" in inp:
                o.muted[str(inp.get("name"))] = bool(inp["muted"])
        _obs_stats(o, s)
    elif kind == "stats":
        _obs_stats(o, p)


def _obs_stats(o: ObsView, p: dict[str, Any]) -> None:
    stats = p.get("stats") or {}
    if stats:
        o.cpu_pct = _num(stats.get("cpuUsage"))
        o.active_fps = _num(stats.get("activeFps"))
        o.render_skipped = stats.get("renderSkippedFrames")
        o.output_skipped = stats.get("outputSkippedFrames")
    for key in ("stream", "record", "replay_buffer"):
        status = p.get(key)
        if isinstance(status, dict) and "outputActive" in status:
            o.outputs[key.replace("_buffer", "")] = bool(status["outputActive"])


def _vmix(st: DashState, kind: str, p: dict[str, Any], _e: dict[str, Any]) -> None:
    v = st.vmix
    if kind == "connected" or kind == "gap.end":
        v.connected = True
    elif kind == "gap.start":
        v.connected = False
    elif kind in ("program", "preview"):
        name = p.get("title") or p.get("input_title") or p.get("input") or p.get("number") or p.get("new")
        setattr(v, kind, str(name))
    elif kind == "tally":
        if p.get("program"):
            v.program = ",".join(str(x) for x in p["program"]) if isinstance(p["program"], list) else str(p["program"])
        if p.get("preview"):
            v.preview = ",".join(str(x) for x in p["preview"]) if isinstance(p["preview"], list) else str(p["preview"])
    elif kind == "output" and "name" in p:
        v.outputs[str(p["name"])] = bool(p.get("active", p.get("on", p.get("value"))))


def _probe_audio(st: DashState, kind: str, p: dict[str, Any], e: dict[str, Any]) -> None:
    if kind != "meter":
        return
    track = str(p.get("track") if p.get("track") is not None else p.get("name") or e.get("source"))
    if p.get("app") is not None:
        track = f"{p['app']}/{p.get('key')} track {track}"
    m = st.meters.setdefault(track, MeterView())
    m.momentary_lufs = _num(p.get("momentary_lufs"))
    m.short_term_lufs = _num(p.get("short_term_lufs"))
    m.integrated_lufs = _num(p.get("integrated_lufs"))
    tp = p.get("true_peak_dbtp")
    m.true_peak_dbtp = max(tp) if isinstance(tp, list) and tp else _num(tp)
    m.target_lufs = _num(p.get("target_lufs")) or m.target_lufs


def _scenario(st: DashState, kind: str, p: dict[str, Any], e: dict[str, Any]) -> None:
    at_s = None
    if isinstance(e.get("mono_ns"), int) and st.first_mono_ns is not None:
        at_s = (e["mono_ns"] - st.first_mono_ns) / 1e9
    if kind == "action":
        name = " ".join(str(x) for x in (p.get("step"), p.get("action"), p.get("arg")) if x)
        st.scenario.append(ScenarioRow("action", name, at_s, _num(p.get("lateness_ms")),
                                       str(p.get("status", "ok")), detail=str(p.get("error") or "")))
    elif kind == "expectation":
        st.scenario.append(ScenarioRow("expect", str(p.get("id")), at_s, None,
                                       "pass" if p.get("passed") else "FAIL", _num(p.get("latency_ms")),
                                       str(p.get("detail", ""))))


def _run(st: DashState, kind: str, p: dict[str, Any], _e: dict[str, Any]) -> None:
    st.task = str(p.get("task") or st.task)
    st.run = str(p.get("run") or p.get("run_id") or st.run)
    if kind in ("phase", "state", "status"):
        st.phase = str(p.get("phase") or p.get("state") or st.phase)
    elif kind in ("start", "started"):
        st.phase = "running"
    elif kind in ("done", "scored", "report"):
        st.phase = "scored" if kind != "done" else "scoring"
        if isinstance(p.get("report"), dict):
            st.report = p["report"]


def _node(st: DashState, kind: str, p: dict[str, Any], _e: dict[str, Any]) -> None:
    """A node's retained status (`node/status`) or the score of its last run (`node/score`)."""
    name = str(p.get("node") or "?")
    row = st.nodes.setdefault(name, {"node": name, "state": "?", "task": None, "run": None, "last_score": None})
    if kind == "status":
        row["state"] = str(p.get("state") or row["state"])
        for key in ("task", "run"):
            if p.get(key):
                row[key] = p[key]
        if p.get("last_run"):
            row["run"] = p["last_run"]
        if p.get("last_score") is not None:
            row["last_score"] = p["last_score"]
    elif kind == "score":
        row.update(run=p.get("run") or row["run"], task=p.get("task") or row["task"], last_score=p.get("score"))


_HANDLERS = {"rtmp": _rtmp, "obs": _obs, "vmix": _vmix, "scenario": _scenario, "run": _run, "node": _node}
