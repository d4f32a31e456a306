"""Typed evidence contract beyond rtmp: every producer's payload is exactly its dataclass, and the
readers (streaming scorers, the dashboard) parse a real recorded OBS stream through the same types.

A producer that renames or adds a key fails its exact round trip here (`from_payload` keeps only
declared keys, so `to_payload()` differs); a recorded stream whose keys no longer fit makes the
scorers' parsing raise EvidenceError; the dashboard notes an unreadable payload in `problems`.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from verifiers.evidence import (
    OBS_EVENT_DATA,
    AudioMeter,
    AuditWrite,
    EvidenceError,
    ObsConnected,
    ObsEvent,
    ObsLogWsRequest,
    ObsSnapshot,
    ObsState,
    ObsStats,
    ProxyWsRequest,
    RtmpHealth,
    RtmpStats,
    ScenarioAction,
    ScenarioExpectation,
    VideoFrame,
    VmixOutput,
    VmixProgram,
    VmixSnapshot,
)
from verifiers.evidence.audit import AuditStarted
from verifiers.evidence.schema import EVENTS

FIXTURE = Path(__file__).resolve().parents[1] / "dash" / "fixtures" / "real_t05_run" / "events.jsonl"


def _real_events() -> list[dict[str, Any]]:
    """A real `tally run` bundle: OBS 30 under Xvfb, the observer, the ingest, the audit."""
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]


class _Emits:
    """A bus stand-in recording emit(source, kind, payload, mono_ns)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def emit(self, source: str, kind: str, payload: dict[str, Any] | None = None, mono_ns: int | None = None) -> None:
        self.events.append({"source": source, "kind": kind, "mono_ns": mono_ns, "payload": payload or {}})

    __call__ = emit

    def subscribe(self, *_a: Any, **_k: Any) -> Any:
        return None


def _exact(cls: Any, e: dict[str, Any]) -> None:
    assert cls.matches(e), (cls.__name__, e["source"], e["kind"])
    assert cls.from_event(e).to_payload() == e["payload"], f"{cls.__name__}: the producer's keys differ from the type"


# ---- a real OBS event stream --------------------------------------------------------------------

def test_every_recorded_event_of_a_typed_kind_round_trips() -> None:
    typed = {(c.SOURCE, c.KIND): c for c in EVENTS}
    seen = set()
    for e in _real_events():
        cls = typed.get((e["source"], e["kind"]))
        if cls is None:
            continue
        _exact(cls, e)
        seen.add(cls)
        if cls is ObsEvent:
            ev = ObsEvent.from_event(e)
            if ev.type in OBS_EVENT_DATA:
                assert ev.typed().to_payload() == {k: v for k, v in ev.data.items()
                                                    if k in ev.typed().to_payload()}
    assert {ObsConnected, ObsEvent, ObsSnapshot, ObsStats, RtmpStats, AuditStarted} <= seen


def test_real_obs_stream_through_the_streaming_scorers_event_reading() -> None:
    """T06 and T20 read program changes, mutes and the start scene through verifiers.evidence."""
    from verifiers.tasks.streaming._shared.run_events import (
        initial_program_scene,
        mute_changes,
        program_changes,
    )
    from verifiers.tasks.streaming.t06_nested_overlay import live_hotkeys

    events = _real_events()
    raw = [(e["mono_ns"] / 1e6, e["payload"]) for e in events if e["source"] == "obs" and e["kind"] == "event"]
    scenes = [p["data"]["sceneName"] for _t, p in raw if p["type"] == "CurrentProgramSceneChanged"]
    mutes = [p["data"]["inputMuted"] for _t, p in raw if p["type"] == "InputMuteStateChanged"]
    assert scenes == ["Live", "BRB", "Live"] and mutes == [True, False]

    changes = program_changes(events)
    assert [s for _t, s in changes] == scenes
    starts = [t for t, p in raw if p["type"] == "SceneTransitionStarted"]
    assert [t for t, _s in changes] == starts  # each switch dated by its Fade's start, as T06/T20 judge it
    assert mute_changes(events, "Music") == [(t, p["data"]["inputMuted"]) for t, p in raw
                                             if p["type"] == "InputMuteStateChanged"]
    assert initial_program_scene(events) == "Scene"
    # T06's live judgement consumes the same stream (no scenario actions recorded: every step fails)
    passed, failed = live_hotkeys(events, initial_program_scene(events))
    assert passed == [] and failed


def test_a_renamed_key_in_the_recorded_stream_stops_the_scorers() -> None:
    from verifiers.tasks.streaming._shared.run_events import program_changes

    events = copy.deepcopy(_real_events())
    for e in events:
        if e["kind"] == "event" and e["payload"]["type"] == "CurrentProgramSceneChanged":
            e["payload"]["data"]["scene_name"] = e["payload"]["data"].pop("sceneName")
    with pytest.raises(EvidenceError, match="sceneName"):
        program_changes(events)


# ---- each producer's payload is its dataclass ----------------------------------------------------

def test_obs_snapshot_producer() -> None:
    from monitor.observers.obs_client import ALLOWED_REQUESTS
    from monitor.observers.obs_snapshot import Capabilities, take_snapshot, take_stats
    from tests.obs.test_observer_unit import FakeRequester

    caps = Capabilities("31.0.0", "5.5.4", 1, frozenset(ALLOWED_REQUESTS))
    state = take_snapshot(FakeRequester(), caps)  # type: ignore[arg-type]
    assert ObsState.from_payload(state).to_payload() == state
    stats = take_stats(FakeRequester(), caps)  # type: ignore[arg-type]
    assert ObsStats.from_payload(stats).to_payload() == stats
    assert ObsConnected.from_payload(caps.as_payload()).to_payload() == caps.as_payload()


async def test_obs_observer_emits_typed_events() -> None:
    from monitor.observers.obs import ObsObserver

    bus = _Emits()
    obs = ObsObserver(bus, env_file=None)  # type: ignore[arg-type]
    obs._on_event("InputMuteStateChanged", {"inputName": "Mic", "inputMuted": True}, 123, 1.5)
    obs.close()
    _exact(ObsEvent, bus.events[0])
    assert ObsEvent.from_event(bus.events[0]).typed().inputMuted is True


class _ScreenshotRequester:
    """obs-websocket's answers to the two requests a program screenshot takes."""

    def __init__(self, image_data: str) -> None:
        self.image_data = image_data
        self.calls: list[tuple[str, Any]] = []

    def request(self, name: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
        self.calls.append((name, data))
        if name == "GetCurrentProgramScene":
            return {"sceneName": "Live", "sceneUuid": "u1", "currentProgramSceneName": "Live"}
        assert name == "GetSourceScreenshot"
        return {"imageData": self.image_data}


async def test_obs_screenshot_producer_feeds_t12(tmp_path: Path) -> None:
    """The observer's screenshot event is exactly ObsScreenshot, and T12's live check judges it: the
    ticker over the scene passes, a black band fails (same producer, same scorer path)."""
    import asyncio

    from monitor.observers.obs import ObsObserver
    from monitor.observers.obs_screenshot import ScreenshotConfig
    from verifiers.evidence import ObsScreenshot
    from verifiers.synth import score_solution, synth_instance
    from verifiers.tasks.streaming.t12_browser_ticker import screenshot

    task = "R06.12.01.01-T12"
    inst = synth_instance(task, tmp_path / "i", seed=2)
    scene_rgb = json.loads((inst / "gt" / "ticker.json").read_text())["scene_rgb"]
    scores = {}
    for opaque in (False, True):
        bus = _Emits()
        obs = ObsObserver(bus, env_file=None, screenshots=ScreenshotConfig(interval_s=2.0, width_px=192))  # type: ignore[arg-type]
        req = _ScreenshotRequester(screenshot(scene_rgb, opaque))
        obs._loop, obs._req = asyncio.get_running_loop(), req  # type: ignore[assignment]
        shot = await obs.screenshot_now()
        obs.close()
        assert [c[0] for c in req.calls] == ["GetCurrentProgramScene", "GetSourceScreenshot"]
        assert req.calls[1][1] == {"sourceName": "Live", "imageFormat": "png", "imageWidth": 192}
        _exact(ObsScreenshot, bus.events[0])
        assert ObsScreenshot.from_event(bus.events[0]) == shot
        sol = tmp_path / f"sol{opaque}"
        shutil.copytree(inst / "oracle", sol)
        (sol / "events.jsonl").write_text(json.dumps({"seq": 0, "wall_time": 0.0, **bus.events[0],
                                                      "mono_ns": 1}) + "\n")
        checks = {c["name"]: c["score"] for c in score_solution(task, inst, sol)["checks"]}
        scores[opaque] = checks["renders_transparent"]
    assert scores == {False: 1.0, True: 0.0}


def test_scenario_engine_emits_typed_actions_and_expectations() -> None:
    from scenarios.engine import ScenarioEngine
    from scenarios.evaluate import ActionRecord, ExpectationResult
    from scenarios.loader import parse_scenario

    sc = parse_scenario("steps:\n  - {id: k1, at_ms: 0, key: ctrl+alt+1}\n", "t.yaml")
    bus = _Emits()
    engine = ScenarioEngine(sc, bus)  # type: ignore[arg-type]
    engine._emit_action(ActionRecord("k1", "key", "ctrl+alt+1", 10, 12, 13, None, "ok", "", {"x": 1}))
    _exact(ScenarioAction, bus.events[0])
    ex = ExpectationResult("e1", "program_scene", True, "Live after 90 ms", 90.0, "k1", 500.0)
    typed = ScenarioExpectation(scenario=sc.name, **ex.to_dict())
    assert typed.to_payload() == {"scenario": sc.name, **ex.to_dict()}


def test_audit_write_producer(tmp_path: Path) -> None:
    from monitor.audit.component import AuditComponent

    comp = AuditComponent(tmp_path)
    bus = _Emits()
    comp._bus = bus  # type: ignore[assignment]
    comp._on_write({"path": str(tmp_path / "a.json"), "pid": 7, "exe": "/usr/bin/obs", "cmdline": ["obs"],
                    "comm": "obs", "ppid": 1, "cwd": str(tmp_path), "identified_at": "close", "mono_ns": 5})
    _exact(AuditWrite, bus.events[0])
    assert AuditWrite.from_event(bus.events[0]).process == "obs"


def test_vmix_producers() -> None:
    from monitor.observers.vmix import diff_states, snapshot_payload
    from tests.vmix.conftest import FIXTURES
    from verifiers.apps.vmix import parse_api_xml

    state = parse_api_xml((FIXTURES / "api_full.xml").read_bytes())
    snap = {"via": "http", **snapshot_payload(state)}
    assert VmixSnapshot.from_payload(snap).to_payload() == snap
    other = copy.deepcopy(state)
    other.active, other.preview = state.preview, state.active
    for o in other.outputs.values():
        o.active = not o.active
    kinds = {"program": VmixProgram, "output": VmixOutput}
    diffs = [(k, p) for k, p in diff_states(state, other) if k in kinds]
    assert {k for k, _p in diffs} == set(kinds)
    for kind, p in diffs:
        _exact(kinds[kind], {"source": "vmix", "kind": kind, "payload": {"via": "http", **p}})


def test_probe_producers() -> None:
    from probes.audio_probe import AudioProbe
    from probes.types import AudioBlock
    from probes.types import VideoFrame as Picture
    from probes.video_probe import VideoProbe

    sink = _Emits()
    sr = 48000
    x = (0.3 * np.sin(2 * np.pi * 1000 * np.arange(sr) / sr)).astype(np.float32)[:, None].repeat(2, 1)
    audio = AudioProbe(sink, sr, 2, tones_hz=[1000], name="mic")
    audio.push(AudioBlock(x, sr, 0.0))
    audio.flush()
    video = VideoProbe(sink, rate_hz=10, name="program")
    for i in range(3):
        video.push(Picture(np.full((36, 64), 40 * i, np.uint8), i / 10))
    meters = [e for e in sink.events if e["kind"] == "meter"]
    frames = [e for e in sink.events if e["kind"] == "frame"]
    assert meters and frames
    for e in meters:
        _exact(AudioMeter, e)
    for e in frames:
        _exact(VideoFrame, e)


def test_video_probe_frames_feed_t09(tmp_path: Path) -> None:
    """The video probe's `frame` events carry the picture (imageData, bounded rate and width) and T09's
    live check judges them: the alert in the top-centre box passes, one in the corner fails."""
    import cv2

    from probes.types import VideoFrame as Picture
    from probes.video_probe import VideoProbe
    from verifiers.synth import score_solution, synth_instance
    from verifiers.tasks.streaming._shared.run_events import event
    from verifiers.tasks.streaming._shared.screenshots import decode_data_uri
    from verifiers.tasks.streaming.t09_streamlabs_widgets import frame

    task = "R06.12.01.01-T09"
    inst = synth_instance(task, tmp_path / "i", seed=2)
    bg = json.loads((inst / "gt" / "widgets.json").read_text())["background_rgb"]
    scores = {}
    for name, box in (("top_centre", (56, 0, 80, 30)), ("corner", (0, 0, 80, 30))):
        program = decode_data_uri(frame(bg, box))
        big = cv2.resize(program, (960, 540), interpolation=cv2.INTER_NEAREST)  # the program as decoded
        sink = _Emits()
        probe = VideoProbe(sink, rate_hz=5, image_every_s=1.0, image_width_px=320)
        for i in range(15):   # 3 s at 5 fps: images at 0, 1 and 2 s
            probe.push(Picture(cv2.cvtColor(big, cv2.COLOR_RGB2GRAY), i / 5, full_range=True, rgb=big))
        frames = [e for e in sink.events if e["kind"] == "frame"]
        for e in frames:
            _exact(VideoFrame, e)
        shots = [VideoFrame.from_event(e) for e in frames if "imageData" in e["payload"]]
        assert [f.t_s for f in shots] == [0.0, 1.0, 2.0]
        assert decode_data_uri(shots[0].imageData).shape == (180, 320, 3)
        bundle = [event("streamlabs", "test_alert", 500, {"type": "follow"}),
                  *({**e, "seq": 0, "wall_time": 0.0, "mono_ns": int(e["payload"]["t_s"] * 1e9)} for e in frames)]
        sol = tmp_path / name
        shutil.copytree(inst / "oracle", sol)
        (sol / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in bundle))
        checks = {c["name"]: c["score"] for c in score_solution(task, inst, sol)["checks"]}
        scores[name] = checks["test_alert_renders"]
    assert scores == {"top_centre": 1.0, "corner": 0.0}


def test_obs_websocket_request_producers() -> None:
    from tests.obs.test_ws_log import block, connect, parse, reply

    lines = [connect(50001), *block({"op": 6, "d": {"requestType": "GetSceneList", "requestId": "tally-1"}}),
             *reply("GetSceneList", "tally-1")]
    reqs = [p for k, p in parse(lines) if k == "ws/request"]
    assert reqs
    for p in reqs:
        _exact(ObsLogWsRequest, {"source": "obs", "kind": "ws/request", "payload": p})
    proxied = ProxyWsRequest("SetInputMute", "x-1", "other", False, {"inputName": "Mic"}, True, 100, session=2)
    assert ProxyWsRequest.from_payload(proxied.to_payload()) == proxied


def test_rtmp_health_producer() -> None:
    from rtmp.health import StreamHealth
    from rtmp.platforms import load_profiles
    from rtmp.stats import StreamStats

    health = StreamHealth(load_profiles("youtube"))
    s = StreamStats()
    health.evaluate(s, s.snapshot())
    for view in health.view().values():
        e = {"source": "rtmp", "kind": "health", "payload": {"app": "live", "key": "k", **view}}
        _exact(RtmpHealth, e)


# ---- the dashboard folds typed payloads only -------------------------------------------------------

def test_dashboard_fold_on_the_real_stream() -> None:
    from monitor.dash.state import DashState

    st = DashState()
    for e in _real_events():
        st.apply(e)
    assert st.problems == []
    assert st.obs.connected and st.obs.program == "Live" and st.obs.muted == {"Music": False}
    assert st.obs.outputs.get("stream") is not None and st.obs.active_fps is not None
    (view,) = st.streams.values()
    assert view.width_px and view.fps and view.bitrate_bps


def test_dashboard_notes_a_renamed_key_instead_of_guessing() -> None:
    from monitor.dash.state import DashState

    st = DashState()
    good = VmixProgram.from_payload({"input": {"number": 2, "key": "k2", "title": "CAM2"}, "via": "tcp"})
    st.apply(good.event(1.0))
    assert st.vmix.program == "CAM2"
    st.apply({"source": "vmix", "kind": "program", "mono_ns": 2, "payload": {"input_title": "CAM3"}})
    assert st.vmix.program == "CAM2" and st.problems and "vmix/program" in st.problems[0]


def test_x_input_producer() -> None:
    from collections import Counter

    from monitor.observers.x_input import Segment, WindowTarget
    from verifiers.evidence.ui import XInput

    target = WindowTarget(0x1A00007, "xterm", "XTerm", 4242, "agent@box: ~/work")
    seg = Segment(target, 10, 20, key_presses=3, button_presses=1, buttons=Counter({1: 1}))
    _exact(XInput, {"source": "x11", "kind": "ui/input", "payload": seg.as_payload()})


def test_a_payload_that_does_not_fit_makes_only_its_checks_error(tmp_path: Path) -> None:
    """T20 on the oracle's run with one mute event renamed: the live checks are `error` (tally's
    evidence is unreadable), never `fail` (the agent did nothing wrong)."""
    from verifiers.scoring import score_task
    from verifiers.synth import load_solution_events, synth_instance

    task = "R06.12.01.01-T20"
    inst = synth_instance(task, tmp_path / "i", seed=1)
    events = load_solution_events(inst / "oracle")
    for e in events:
        if e["kind"] == "event" and e["payload"]["type"] == "InputMuteStateChanged":
            e["payload"]["data"]["input_muted"] = e["payload"]["data"].pop("inputMuted")
    rep = score_task(task, inst / "oracle", inst / "gt", events).to_dict()
    by = {c["name"]: c for c in rep["checks"]}
    bad = [n for n, c in by.items() if "unreadable live evidence" in (c.get("message") or "")]
    assert bad and all(by[n]["status"] == "error" for n in bad)
    assert any(c["status"] == "pass" for c in by.values())  # the file checks still judged


# ---- run/*, node/* and the RTMP session's own kinds ------------------------------------------------

def test_every_recorded_run_kind_and_the_rtmp_session_kinds_are_typed() -> None:
    """A real run's lifecycle events and the ingest's connect/metadata/disconnect all have a type
    (the round trip above then holds each of them to its dataclass exactly)."""
    typed = {(c.SOURCE, c.KIND) for c in EVENTS}
    kinds = {(e["source"], e["kind"]) for e in _real_events()}
    assert {k for k in kinds if k[0] == "run"} <= typed
    assert {("rtmp", "connect"), ("rtmp", "metadata"), ("rtmp", "disconnect")} <= kinds & typed


async def test_the_component_host_emits_typed_run_events() -> None:
    from monitor.bus import EventBus
    from monitor.run.component import ComponentHost, Unavailable
    from verifiers.evidence.base import REGISTRY

    class _Ok:
        name = "ok"

        async def start(self, bus: Any) -> None:
            return None

        async def stop(self) -> None:
            return None

        def describe(self) -> dict[str, Any]:
            return {"port": 1935}

    class _Broken(_Ok):
        name = "broken"

        async def start(self, bus: Any) -> None:
            raise RuntimeError("no display")

    bus, seen = EventBus(), []
    bus.add_sink(lambda ev: seen.append(ev.to_dict()))
    host = ComponentHost(bus)
    host.record_unavailable([Unavailable("vmix", "no vMix on Linux")])
    await host.start_all([_Ok(), _Broken()])
    await host.stop_all()
    kinds = [e["kind"] for e in seen]
    assert kinds == ["component_unavailable", "component_started", "component_failed", "component_stopped"]
    for e in seen:
        _exact(REGISTRY[(e["source"], e["kind"])], e)
    assert seen[1]["payload"]["info"] == {"port": 1935}
    with pytest.raises(EvidenceError, match="missing key 'reason'"):
        REGISTRY[("run", "component_unavailable")].from_event({**seen[0], "payload": {"need": "vmix", "why": "x"}})
