"""Shared reading for the streaming scorers: the work dir's OBS config and the run's events.

The OBS config dir is the work dir's `obs-studio/` (docs/catalog.md). Collections are parsed by
verifiers.apps.obs (one parser for the project); an unreadable file becomes an agent-output failure
with the parser's one-line reason. Live evidence (observer, scenario, ingest events) is read through
ScoreContext.events_of, so a run without it makes the checks `error`, never `fail`.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from verifiers.apps.obs.collection import Collection, load_collection
from verifiers.apps.obs.errors import ObsFileError
from verifiers.apps.obs.profile import Profile, load_profile
from verifiers.apps.obs.profile import read_ini as obs_read_ini
from verifiers.base import AgentOutputError, ScoreContext
from verifiers.evidence import ObsEvent, ObsSnapshot, ScenarioAction

OBS_DIR = "obs-studio"
SCENES_DIR = f"{OBS_DIR}/basic/scenes"
PROFILES_DIR = f"{OBS_DIR}/basic/profiles"


def collection_rel(name: str) -> str:
    return f"{SCENES_DIR}/{name.replace(' ', '_')}.json"


def load_named_collection(ctx: ScoreContext, name: str) -> Collection:
    """The collection OBS saved for `name`; AgentOutputError when absent or unreadable."""
    path = ctx.artifact(collection_rel(name))
    try:
        return load_collection(path)
    except ObsFileError as exc:
        raise AgentOutputError(f"unreadable collection {collection_rel(name)}: {exc.reason}") from None


def load_collections(ctx: ScoreContext) -> list[Collection]:
    """Every readable collection in obs-studio/basic/scenes/, sorted by file name (stable)."""
    d = ctx.workdir / SCENES_DIR
    out = []
    for p in sorted(d.glob("*.json")) if d.is_dir() else []:
        try:
            out.append(load_collection(p))
        except ObsFileError:
            continue
    return out


def collection_with(ctx: ScoreContext, *, scene: str | None = None, source: str | None = None) -> Collection:
    """The collection holding a scene/source the task names (the active one from global.ini first)."""
    colls = load_collections(ctx)
    if not colls:
        raise AgentOutputError(f"artifact missing: no readable scene collection in {SCENES_DIR}/")
    active = _active_collection_file(ctx)
    colls.sort(key=lambda c: (Path(c.path).stem != active, Path(c.path).name))
    for c in colls:
        if (scene is None or scene in c.scenes) and (source is None or source in c.sources):
            return c
    what = f"scene {scene!r}" if scene else f"source {source!r}"
    raise AgentOutputError(f"no scene collection in {SCENES_DIR}/ has {what}")


def _active_collection_file(ctx: ScoreContext) -> str | None:
    ini = read_ini(ctx.workdir / OBS_DIR / "global.ini")
    return ini.get("Basic", {}).get("SceneCollectionFile") if ini else None


# ---- profile ---------------------------------------------------------------------------------

def read_ini(path: Path) -> dict[str, dict[str, str]] | None:
    """An OBS ini file (global.ini) via the OBS parser; None when absent or unreadable."""
    if not path.is_file():
        return None
    try:
        return obs_read_ini(path)
    except ObsFileError:
        return None


def active_profile(ctx: ScoreContext) -> Profile:
    """The profile global.ini names (or the only one), parsed by verifiers.apps.obs.profile.

    AgentOutputError when there is none or its files cannot be read (the agent's config).
    """
    root = ctx.workdir / PROFILES_DIR
    dirs = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    if not dirs:
        raise AgentOutputError(f"artifact missing: no profile in {PROFILES_DIR}/")
    ini = read_ini(ctx.workdir / OBS_DIR / "global.ini") or {}
    want = ini.get("Basic", {}).get("ProfileDir")
    chosen = next((d for d in dirs if d.name == want), dirs[0] if len(dirs) == 1 else None)
    if chosen is None:
        chosen = next((d for d in dirs if (d / "basic.ini").is_file()), dirs[0])
    try:
        return load_profile(chosen)
    except ObsFileError as exc:
        raise AgentOutputError(f"unreadable profile {PROFILES_DIR}/{chosen.name}: {exc.reason}") from None


# ---- paths -----------------------------------------------------------------------------------

def path_ends_with(saved: Any, rel: str) -> bool:
    """OBS saves absolute paths; the task names work-dir-relative ones. Compare the trailing parts."""
    if not isinstance(saved, str) or not saved:
        return False
    parts = (PureWindowsPath(saved).parts if "\\" in saved else PurePosixPath(saved).parts)
    want = PurePosixPath(rel).parts
    return len(parts) >= len(want) and tuple(p.lower() for p in parts[-len(want):]) == tuple(w.lower() for w in want)


# ---- live events -----------------------------------------------------------------------------

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
