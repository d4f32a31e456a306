"""The run's live events as the streaming scorers read them: OBS events, program and mute changes,
scenario step times.

Live evidence (observer, scenario, ingest events) is read through ScoreContext.events_of and the
typed payloads of verifiers.evidence, so a run without it makes the checks `error`, never `fail`.
"""

from __future__ import annotations

from typing import Any

from verifiers.base import ScoreContext
from verifiers.evidence import ObsEvent, ObsSnapshot, ScenarioAction


def t_ms(e: dict[str, Any]) -> float:
    return float(e.get("mono_ns", 0)) / 1e6


def payload(e: dict[str, Any]) -> dict[str, Any]:
    p = e.get("payload") or {}
    return p if isinstance(p, dict) else {}


def obs_events(events: list[dict[str, Any]] | None, etype: str) -> list[tuple[float, Any]]:
    """(t_ms, data) of every recorded OBS event of one type, in time order.

    Read through verifiers.evidence (`obs`/`event` {type, data}, as monitor/observers/obs records
    it); the data is the type's dataclass (OBS_EVENT_DATA), so a payload that does not fit is an
    EvidenceError, never a silently skipped event.
    """
    out = []
    for e in events or []:
        if ObsEvent.matches(e):
            ev = ObsEvent.from_event(e)
            if ev.type == etype:
                out.append((t_ms(e), ev.typed()))
    return sorted(out, key=lambda x: x[0])


def require_obs_events(ctx: ScoreContext) -> list[dict[str, Any]]:
    """The run's OBS observer events; NoLiveEvidence (an error) when the observer recorded nothing."""
    return ctx.events_of("obs")


def initial_program_scene(events: list[dict[str, Any]] | None) -> str | None:
    """The program scene of the observer's first snapshot, before any change event."""
    for e in events or []:
        if ObsSnapshot.matches(e):
            name = ObsSnapshot.from_event(e).state.current_program_scene
            if name is not None:
                return name
    return None


#: how long before a CurrentProgramSceneChanged its transition may have started
TRANSITION_LOOKBACK_MS = 2000.0


def program_changes(events: list[dict[str, Any]]) -> list[tuple[float, str]]:
    """(t_ms, scene) for each program-scene change the OBS observer recorded, in time order.

    The time is when the switch began: OBS 29 sends CurrentProgramSceneChanged when a Fade ends
    (350-560 ms after the key under load, measured in a real run), SceneTransitionStarted a few ms
    after it. So a change is dated by the last transition start before it (after the previous
    change, within 2 s), as the scenario evaluator does; without one, by its own time.
    """
    starts = [t for t, _d in obs_events(events, "SceneTransitionStarted")]
    out: list[tuple[float, str]] = []
    prev = -float("inf")
    for t, d in obs_events(events, "CurrentProgramSceneChanged"):
        began = [ts for ts in starts if max(prev, t - TRANSITION_LOOKBACK_MS) < ts <= t]
        out.append((began[-1] if began else t, d.sceneName))
        prev = t
    return out


def mute_changes(events: list[dict[str, Any]], input_name: str) -> list[tuple[float, bool]]:
    return [(t, d.inputMuted) for t, d in obs_events(events, "InputMuteStateChanged") if d.inputName == input_name]


def scenario_actions(events: list[dict[str, Any]]) -> dict[str, float]:
    """step id -> when it happened (t_ms), from the scenario's action events that succeeded."""
    out = {}
    for e in events:
        if ScenarioAction.matches(e):
            a = ScenarioAction.from_event(e)
            at = a.at_ms(e.get("mono_ns"))
            if at is not None and a.status == "ok":
                out[a.step] = at
    return out


def scene_at(changes: list[tuple[float, str]], t: float, initial: str | None = None) -> str | None:
    cur = initial
    for tc, name in changes:
        if tc > t:
            break
        cur = name
    return cur


def event(source: str, kind: str, t_ms_: float, payload_: dict[str, Any]) -> dict[str, Any]:
    """One recorded event of a source with no typed evidence yet (streamlabs) for synthetic instances.

    Typed events are built with their constructors: `ObsEvent.of(SceneData("Live"), ...).event(t_ms)`."""
    return {"source": source, "kind": kind, "mono_ns": round(t_ms_ * 1e6), "payload": payload_}
