"""Expectations judged from synthetic observer events with known times."""

from __future__ import annotations

from typing import Any

import pytest

from monitor.events import Event
from scenarios.evaluate import ActionRecord, Timeline, evaluate
from scenarios.loader import parse_scenario
from verifiers.evidence import EvidenceError, ObsEvent, ObsSnapshot, ObsState

MS = 1_000_000
T0 = 1_000_000 * MS   # an arbitrary monotonic origin


def ev(t_ms: float, kind: str, **payload: Any) -> Event:
    """An OBS observer event (monitor/observers/obs): `state` is its start snapshot (program scene,
    inputs_muted by name), anything else an obs-websocket event of that type with that data."""
    if kind == "state":
        state = ObsState(current_program_scene=payload["program_scene"],
                         inputs={n: {"muted": m} for n, m in payload.get("inputs_muted", {}).items()})
        return Event(0, T0 + int(t_ms * MS), 0.0, "obs", "snapshot", ObsSnapshot("start", state).to_payload())
    return Event(0, T0 + int(t_ms * MS), 0.0, "obs", "event", ObsEvent(kind, dict(payload)).to_payload())


def switch(t_start_ms: float, t_done_ms: float, scene: str) -> list[Event]:
    return [ev(t_start_ms, "SceneTransitionStarted", transitionName="Fade"),
            ev(t_done_ms, "CurrentProgramSceneChanged", sceneName=scene)]


def rec(step: str, t_ms: float) -> ActionRecord:
    ns = T0 + int(t_ms * MS)
    return ActionRecord(step, "focus", "", scheduled_ns=ns, actual_ns=ns, done_ns=ns, status="ok")


T20 = """
steps:
  - {id: notes, at_ms: 1000, focus: Notes}
  - {id: vault, at_ms: 3000, focus: Vault}
  - {id: leave, at_ms: 5000, focus: Notes}
  - {id: end, at_ms: 9000, mark: end}
expect:
  - {id: nofalse, no_switch: {to: [Privacy]}, after: notes, until: vault}
  - {id: privacy, program_scene: Privacy, after: vault, within_ms: 500, stays_s: 1}
  - {id: back, program_scene: Gameplay, after: leave, not_before_ms: 1500, within_ms: 2500}
  - {id: mic, muted_while: {input: Mic, scene: Privacy}, after: notes, until: end}
"""
ACTIONS = {"notes": rec("notes", 1000), "vault": rec("vault", 3000), "leave": rec("leave", 5000),
           "end": rec("end", 9000)}


def judge(events: list[Event], text: str = T20, actions: dict | None = None) -> dict:
    sc = parse_scenario(text, "t.yaml")
    results = evaluate(sc, actions or ACTIONS, events, end_ns=T0 + 9500 * MS)
    return {r.id: r for r in results}


def responder_events(delay_ms: float, return_ms: float = 2000, notes_too: bool = False) -> list[Event]:
    out = [ev(0, "state", program_scene="Gameplay", inputs_muted={"Mic": False})]
    if notes_too:
        out += [*switch(1000 + delay_ms, 1400 + delay_ms, "Privacy"),
                ev(1000 + delay_ms, "InputMuteStateChanged", inputName="Mic", inputMuted=True)]
    else:
        out += switch(3000 + delay_ms, 3350 + delay_ms, "Privacy")
        out.append(ev(3005 + delay_ms, "InputMuteStateChanged", inputName="Mic", inputMuted=True))
    out += switch(5000 + return_ms, 5350 + return_ms, "Gameplay")
    out.append(ev(5004 + return_ms, "InputMuteStateChanged", inputName="Mic", inputMuted=False))
    return out


def test_good_responder_passes_with_latency_from_transition_start() -> None:
    r = judge(responder_events(100))
    assert all(x.passed for x in r.values()), {k: v.detail for k, v in r.items()}
    assert abs(r["privacy"].latency_ms - 100.0) < 1e-6          # not 450 (the scene-changed event)
    assert "scene-changed event at 450 ms" in r["privacy"].detail
    assert abs(r["back"].latency_ms - 2000.0) < 1e-6
    assert r["mic"].latency_ms is not None and r["mic"].latency_ms <= 5.0 + 1e-6


def test_slow_responder_fails_the_deadline() -> None:
    r = judge(responder_events(700))
    assert not r["privacy"].passed
    assert abs(r["privacy"].latency_ms - 700.0) < 1e-6
    assert "later than 500 ms" in r["privacy"].detail
    assert r["nofalse"].passed


def test_false_trigger_fails_no_switch() -> None:
    r = judge(responder_events(100, notes_too=True))
    assert not r["nofalse"].passed
    assert abs(r["nofalse"].latency_ms - 100.0) < 1e-6


def test_return_too_early_or_too_late() -> None:
    assert not judge(responder_events(100, return_ms=1000))["back"].passed
    late = judge(responder_events(100, return_ms=3000))["back"]
    assert not late.passed and abs(late.latency_ms - 3000) < 1e-6


def test_mute_lagging_the_scene_fails_muted_while() -> None:
    events = responder_events(100)
    events = [e for e in events if not (e.kind == "event" and e.payload["type"] == "InputMuteStateChanged"
                                        and e.payload["data"]["inputMuted"])]
    events.append(ev(3100 + 800, "InputMuteStateChanged", inputName="Mic", inputMuted=True))
    r = judge(events)
    assert not r["mic"].passed
    assert abs(r["mic"].latency_ms - 800.0) < 1e-6


def test_stays_fails_when_program_leaves_early() -> None:
    events = responder_events(100) + switch(3500, 3800, "Desktop")
    r = judge(events)
    assert not r["privacy"].passed and "left for 'Desktop'" in r["privacy"].detail


def test_missing_step_and_missing_events() -> None:
    actions = dict(ACTIONS)
    actions["vault"] = ActionRecord("vault", "focus", "Vault", status="failed", error="no window")
    r = judge(responder_events(100), actions=actions)
    assert not r["privacy"].passed and "did not run" in r["privacy"].detail
    r = judge([])
    assert not r["privacy"].passed and "not seen" in r["privacy"].detail
    assert not r["mic"].passed and "no mute state" in r["mic"].detail


def test_toggle_and_event_expectations() -> None:
    text = """
steps:
  - {id: m, at_ms: 0, key: ctrl+alt+m}
  - {id: f9, at_ms: 1000, key: F9}
expect:
  - {id: toggled, input_muted: {input: Mic, muted: toggle}, after: m, within_ms: 300}
  - {id: saved, event: ReplayBufferSaved, after: f9, within_ms: 2000}
"""
    actions = {"m": rec("m", 0), "f9": rec("f9", 1000)}
    events = [ev(-50, "state", program_scene="A", inputs_muted={"Mic": True}),
              ev(40, "InputMuteStateChanged", inputName="Mic", inputMuted=False),
              ev(1800, "ReplayBufferSaved", savedReplayPath="/r/x.mkv")]
    r = judge(events, text, actions)
    assert r["toggled"].passed and abs(r["toggled"].latency_ms - 40) < 1e-6
    assert r["saved"].passed and abs(r["saved"].latency_ms - 800) < 1e-6
    # wrong direction: already unmuted, the toggle must mute
    events[0] = ev(-50, "state", program_scene="A", inputs_muted={"Mic": False})
    assert not judge(events, text, actions)["toggled"].passed


def test_timeline_refuses_payloads_that_do_not_fit_the_evidence_types() -> None:
    """No guessing: a wrapper or a renamed key is an EvidenceError, never a silently missed switch."""
    wrapped = Event(0, T0, 0.0, "obs", "event", {"eventType": "CurrentProgramSceneChanged",
                                                  "eventData": {"sceneName": "X"}})
    snake = Event(1, T0 + MS, 0.0, "obs", "event", {"type": "InputMuteStateChanged",
                                                    "data": {"input_name": "Mic", "input_muted": True}})
    for bad in (wrapped, snake):
        with pytest.raises(EvidenceError):
            Timeline([bad])
    tl = Timeline([ev(0, "CurrentProgramSceneChanged", sceneName="X")])
    assert tl.program_at(T0) == "X" and tl.muted_at("Mic", T0) is None


def obs_event(t_ms: float, etype: str, **data: object) -> Event:
    """The shape monitor/observers/obs publishes: kind `event` {type, data}."""
    return Event(0, T0 + int(t_ms * MS), 0.0, "obs", "event", {"type": etype, "data": dict(data)})


def test_observer_shaped_events_and_stale_snapshots() -> None:
    events = [
        Event(0, T0, 0.0, "obs", "snapshot", {"reason": "start", "state": {
            "current_program_scene": "Gameplay", "inputs": {"Mic": {"muted": False, "kind": "x"}}}}),
        obs_event(3100, "SceneTransitionStarted", transitionName="Fade"),
        obs_event(3102, "InputMuteStateChanged", inputName="Mic", inputMuted=True),
        obs_event(3450, "CurrentProgramSceneChanged", sceneName="Privacy"),
        # a change-triggered snapshot whose state was read just before the switch: it must not
        # count as a switch back to Gameplay
        Event(0, T0 + 3500 * MS, 0.0, "obs", "snapshot", {"reason": "change", "state": {
            "current_program_scene": "Gameplay", "inputs": {"Mic": {"muted": False}}}}),
        obs_event(7100, "SceneTransitionStarted", transitionName="Fade"),
        obs_event(7101, "InputMuteStateChanged", inputName="Mic", inputMuted=False),
        obs_event(7400, "CurrentProgramSceneChanged", sceneName="Gameplay"),
    ]
    r = judge(events)
    assert all(x.passed for x in r.values()), {k: v.detail for k, v in r.items()}
    assert abs(r["privacy"].latency_ms - 100) < 1e-6 and abs(r["back"].latency_ms - 2100) < 1e-6
