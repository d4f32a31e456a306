"""The work dir's OBS config as the streaming scorers read it: scene collections, the active profile, saved paths.

The OBS config dir is the work dir's `obs-studio/` (docs/catalog.md). Collections are parsed by
verifiers.apps.obs (one parser for the project); an unreadable file becomes an agent-output failure
with the parser's one-line reason. The run's live events are read by run_events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, TypeVar

from verifiers.apps.obs.collection import Collection, load_collection
from verifiers.apps.obs.errors import ObsFileError
from verifiers.apps.obs.profile import Profile, load_profile
from verifiers.apps.obs.profile import read_ini as obs_read_ini
from verifiers.base import AgentOutputError, ScoreContext

OBS_DIR = "obs-studio"
SCENES_DIR = f"{OBS_DIR}/basic/scenes"
PROFILES_DIR = f"{OBS_DIR}/basic/profiles"

T = TypeVar("T")


def parsed_files(d: Path, load: Callable[[Path], T], unreadable: type[Exception]) -> Iterator[tuple[Path, T]]:
    """(path, parsed) for every *.json in `d` that its app's parser reads, in file-name order (stable).

    A file the parser refuses (`unreadable`: another app's JSON, a half-written save) is skipped: a
    folder of app configs may hold more than the one a task looks for."""
    for p in sorted(d.glob("*.json")) if d.is_dir() else []:
        try:
            parsed = load(p)
        except unreadable:
            continue
        yield p, parsed


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
    return [coll for _p, coll in parsed_files(ctx.workdir / SCENES_DIR, load_collection, ObsFileError)]


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
