"""The task catalog: every task as data (id, family, artifacts, live needs, weighted checks).

The catalog files (`verifiers/catalog/<family>.yaml`) are loaded and validated once. Validation
is strict because a typo in a weight or a key silently changes what agents are scored on:
unknown keys are rejected and every task's weights must sum to 100, with a message that names
the file and the task.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from verifiers.curves import INLINE, Curve, CurveError, parse_curve
from verifiers.params import NoParams, ParamsError, build_params, type_for

FAMILIES = ("streaming", "sound", "grading", "shortform")
TASK_ID_RE = re.compile(r"^R06\.\d\d\.\d\d\.\d\d-T\d\d$")
LIVE_NEEDS = ("ingest", "obs", "obs_screenshots", "vmix", "scenario", "audit", "probe_audio", "probe_video",
              "probe_video_images")

_FILE_KEYS = {"family", "seed", "title", "tasks"}
_TASK_KEYS = {"id", "title", "apps", "inputs", "artifacts", "live", "checks", "notes", "emulated",
              "forbidden_writers", "app_files", "app_writers", "params"}
_ARTIFACT_KEYS = {"path", "kind", "optional", "description"}
_CHECK_KEYS = {"name", "weight", "description", "params", "evidence", "group", "curve"}
_ARTIFACT_KINDS = {"audio", "video", "image", "text", "json", "csv", "project", "config", "dir", "any",
                   "subtitle", "edl"}


#: libyaml's safe loader when PyYAML was built with it (5x faster: the catalog is read at every start)
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class CatalogError(ValueError):
    """The catalog data is inconsistent; the message names the file and task."""


@dataclass(frozen=True)
class ArtifactSpec:
    path: str
    kind: str = "any"
    optional: bool = False
    description: str = ""


@dataclass(frozen=True)
class CheckSpec:
    name: str
    weight: float
    description: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    evidence: str = "files"  # files | live | audit | gt-only; says where a check's evidence comes from
    group: str | None = None  # the seed's share this check belongs to, when the seed splits one share
    curve: Curve = INLINE  # how its measurement becomes a score (verifiers/curves.py); INLINE: not declared
    typed: Any = None  # params as their dataclass (verifiers/params.py); None: no dataclass declared


@dataclass(frozen=True)
class TaskSpec:
    id: str
    family: str
    title: str
    checks: tuple[CheckSpec, ...]
    artifacts: tuple[ArtifactSpec, ...] = ()
    inputs: tuple[str, ...] = ()
    apps: tuple[str, ...] = ()
    live: frozenset[str] = frozenset()
    notes: str = ""
    emulated: str = ""
    forbidden_writers: tuple[str, ...] = ()
    app_files: tuple[str, ...] = ()  # file suffixes only `app_writers` may write (verifiers/provenance.py)
    app_writers: tuple[str, ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    source_file: str = ""

    def check(self, name: str) -> CheckSpec:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"{self.id} has no check {name!r}")

    @property
    def number(self) -> int:
        return int(self.id.rsplit("-T", 1)[1])


@dataclass(frozen=True)
class Catalog:
    tasks: dict[str, TaskSpec]

    def get(self, task_id: str) -> TaskSpec:
        try:
            return self.tasks[task_id]
        except KeyError:
            raise KeyError(f"unknown task {task_id!r}") from None

    def resolve(self, ref: str, family: str | None = None) -> str:
        """The full task id a user meant by `ref`: a full id, or its short form `T11` / `t11`.

        Why: every family numbers its tasks T01..T20, so a short id is only unambiguous within a
        family; without one, an ambiguous short id is refused with the candidates listed rather
        than guessed."""
        if ref in self.tasks:
            return ref
        short = ref.strip().upper()
        hits = [t.id for t in self.tasks.values()
                if t.id.upper().endswith("-" + short) and (family is None or t.family == family)]
        if len(hits) == 1:
            return hits[0]
        if not hits:
            where = f" in family {family!r}" if family else ""
            raise KeyError(f"unknown task {ref!r}{where}")
        raise KeyError(f"task {ref!r} is ambiguous: {', '.join(hits)}; give --family or the full id")

    def family(self, family: str) -> list[TaskSpec]:
        return [t for t in self.tasks.values() if t.family == family]

    def __iter__(self):
        return iter(self.tasks.values())

    def __len__(self) -> int:
        return len(self.tasks)


def _reject_unknown(obj: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise CatalogError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(allowed))})")


def _curve(c: dict[str, Any], where: str) -> Curve:
    if "curve" not in c:
        return INLINE
    try:
        return parse_curve(c["curve"], f"{where} check {c['name']!r}")
    except CurveError as exc:
        raise CatalogError(str(exc)) from None


def _typed(tid: str, family: str, c: dict[str, Any], where: str) -> Any:
    """The check's params as its declared dataclass (NoParams when it declares one and has none)."""
    cls = type_for(tid, c["name"], family)
    raw = c.get("params") or {}
    if cls is None:
        return None
    try:
        return build_params(cls, raw) if cls is not NoParams else NoParams()
    except ParamsError as exc:
        raise CatalogError(f"{where} check {c['name']!r}: {exc}") from None


def _parse_task(raw: Any, family: str, fname: str) -> TaskSpec:
    if not isinstance(raw, dict):
        raise CatalogError(f"{fname}: every task must be a mapping, got {type(raw).__name__}")
    tid = raw.get("id", "<no id>")
    where = f"{fname}: task {tid}"
    _reject_unknown(raw, _TASK_KEYS, where)
    if not isinstance(tid, str) or not TASK_ID_RE.match(tid):
        raise CatalogError(f"{where}: id must look like R06.12.01.01-T05")
    for key in ("title", "checks"):
        if key not in raw:
            raise CatalogError(f"{where}: missing {key!r}")
    checks = []
    for i, c in enumerate(raw["checks"] or []):
        if not isinstance(c, dict):
            raise CatalogError(f"{where}: check #{i + 1} must be a mapping")
        _reject_unknown(c, _CHECK_KEYS, f"{where} check {c.get('name', i + 1)!r}")
        if "name" not in c or "weight" not in c:
            raise CatalogError(f"{where}: check #{i + 1} needs name and weight")
        w = c["weight"]
        if not isinstance(w, (int, float)) or isinstance(w, bool) or not (0 < w <= 100):
            raise CatalogError(f"{where}: check {c['name']!r} weight must be a number in (0, 100]")
        if c.get("evidence", "files") not in {"files", "live", "audit", "files+live", "files+audit"}:
            raise CatalogError(f"{where}: check {c['name']!r} evidence must be files|live|audit|files+live|files+audit")
        checks.append(CheckSpec(name=c["name"], weight=float(w), description=c.get("description", ""),
                                params=dict(c.get("params") or {}), evidence=c.get("evidence", "files"),
                                group=c.get("group"), curve=_curve(c, where),
                                typed=_typed(tid, family, c, where)))
    names = [c.name for c in checks]
    if len(set(names)) != len(names):
        raise CatalogError(f"{where}: duplicate check names {names}")
    total = sum(c.weight for c in checks)
    if not math.isclose(total, 100.0, abs_tol=1e-9):
        raise CatalogError(f"{where}: check weights sum to {total:g}, not 100")
    artifacts = []
    for a in raw.get("artifacts") or []:
        if isinstance(a, str):
            a = {"path": a}
        _reject_unknown(a, _ARTIFACT_KEYS, f"{where} artifact {a.get('path')!r}")
        kind = a.get("kind", "any")
        if kind not in _ARTIFACT_KINDS:
            raise CatalogError(f"{where}: artifact {a.get('path')!r} kind {kind!r} not one of {sorted(_ARTIFACT_KINDS)}")
        path = a["path"]
        if path.startswith("/") or ".." in Path(path).parts:
            raise CatalogError(f"{where}: artifact path {path!r} must be relative to the work dir")
        artifacts.append(ArtifactSpec(path=path, kind=kind, optional=bool(a.get("optional", False)),
                                      description=a.get("description", "")))
    live = raw.get("live") or {}
    if isinstance(live, list):
        live = {k: True for k in live}
    _reject_unknown(live, set(LIVE_NEEDS), f"{where} live")
    return TaskSpec(
        id=tid, family=family, title=str(raw["title"]), checks=tuple(checks), artifacts=tuple(artifacts),
        inputs=tuple(raw.get("inputs") or ()), apps=tuple(raw.get("apps") or ()),
        live=frozenset(k for k, v in live.items() if v), notes=str(raw.get("notes") or ""),
        emulated=str(raw.get("emulated") or ""), forbidden_writers=tuple(raw.get("forbidden_writers") or ()),
        app_files=tuple(raw.get("app_files") or ()), app_writers=tuple(raw.get("app_writers") or ()),
        params=dict(raw.get("params") or {}), source_file=fname,
    )


def parse_catalog_file(text: str, fname: str) -> list[TaskSpec]:
    try:
        data = yaml.load(text, Loader=_SafeLoader)
    except yaml.YAMLError as exc:
        raise CatalogError(f"{fname}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise CatalogError(f"{fname}: top level must be a mapping")
    _reject_unknown(data, _FILE_KEYS, fname)
    family = data.get("family")
    if family not in FAMILIES:
        raise CatalogError(f"{fname}: family must be one of {FAMILIES}, got {family!r}")
    return [_parse_task(t, family, fname) for t in data.get("tasks") or []]


def load_catalog_from(paths: list[Path]) -> Catalog:
    tasks: dict[str, TaskSpec] = {}
    for p in paths:
        for t in parse_catalog_file(Path(p).read_text(encoding="utf-8"), Path(p).name):
            if t.id in tasks:
                raise CatalogError(f"{p.name}: task {t.id} is defined twice")
            tasks[t.id] = t
    return Catalog(dict(sorted(tasks.items())))


@functools.cache
def load_catalog() -> Catalog:
    """The packaged catalog, loaded and validated once per process."""
    folder = resources.files("verifiers") / "catalog"
    paths = sorted(Path(str(p)) for p in folder.iterdir() if p.name.endswith(".yaml"))
    return load_catalog_from(paths)
