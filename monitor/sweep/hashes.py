"""Identity of what a score depends on: the inputs (file trees), the catalog, the scorer's code.

A sweep skips an item when (bundle hash, scorer hash, catalog hash) was already scored, so these
hashes must change exactly when the score could: the scorer hash covers the task's module and
every `verifiers.*` module it reaches through its globals (family helpers, measurement code, the
scoring frame), so fixing one task's verifier re-scores that task only, and fixing shared code
re-scores everything that uses it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import inspect
import shutil
import subprocess
import sys
import types
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from monitor.bundle import gt_record, tree_sha256

__all__ = ["catalog_sha256", "run_provenance", "scorer_sha256", "tree_sha256"]

#: Modules every score runs through, whatever the task (the frame around the verifier).
CORE_MODULES = ("verifiers.scoring", "verifiers.base", "verifiers.model", "verifiers.registry")


@functools.cache
def catalog_sha256() -> str:
    """Digest of the packaged catalog YAML files (name and bytes), in name order."""
    digest = hashlib.sha256(b"tally.catalog/1\n")
    folder = resources.files("verifiers") / "catalog"
    for p in sorted(folder.iterdir(), key=lambda p: p.name):
        if p.name.endswith(".yaml"):
            digest.update(p.name.encode() + b"\0" + p.read_bytes() + b"\n")
    return digest.hexdigest()


def _module_file(mod: types.ModuleType) -> Path | None:
    try:
        src = inspect.getsourcefile(mod)
    except TypeError:
        return None
    return Path(src) if src else None


def module_closure(root: str) -> list[str]:
    """Names of the `verifiers.*` modules reachable from `root` through module globals (sorted)."""
    seen: set[str] = set()
    todo = [root, *CORE_MODULES]
    while todo:
        name = todo.pop()
        if name in seen or not (name == "verifiers" or name.startswith("verifiers.")):
            continue
        mod = sys.modules.get(name)
        if mod is None:
            try:
                mod = importlib.import_module(name)
            except ImportError:
                continue
        seen.add(name)
        for value in vars(mod).values():
            if isinstance(value, types.ModuleType):
                if not value.__name__.startswith(name + "."):  # submodules are attributes of their package
                    todo.append(value.__name__)
            else:
                owner = getattr(value, "__module__", None)
                if isinstance(owner, str):
                    todo.append(owner)
        parent = name.rpartition(".")[0]
        if parent:
            todo.append(parent)  # a package's __init__ runs before its modules
    return sorted(seen)


@functools.cache
def scorer_sha256(task_id: str) -> str:
    """Digest of the source of the task's scorer and every verifiers module it can reach.

    A task without a scorer hashes the frame only (its report says 'not implemented')."""
    from verifiers.registry import verifier_class

    cls = verifier_class(task_id)
    root = cls.__module__ if cls is not None else "verifiers.scoring"
    digest = hashlib.sha256(b"tally.scorer/1\n")
    for name in module_closure(root):
        path = _module_file(sys.modules[name])
        if path is not None and path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\n")
    return digest.hexdigest()


def scorer_module(task_id: str) -> str | None:
    from verifiers.registry import verifier_class

    cls = verifier_class(task_id)
    return cls.__module__ if cls is not None else None


@functools.cache
def tally_version() -> str:
    try:
        return importlib.metadata.version("tally")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@functools.cache
def ffmpeg_versions() -> dict[str, str]:
    """The ffmpeg binary on PATH (first line of -version) and the libav inside PyAV."""
    out: dict[str, str] = {}
    exe = shutil.which("ffmpeg")
    if exe:
        try:
            proc = subprocess.run([exe, "-hide_banner", "-version"], capture_output=True, text=True, timeout=10)
            out["ffmpeg"] = (proc.stdout.splitlines() or [""])[0].strip()
        except (OSError, subprocess.SubprocessError):
            pass
    try:
        import av

        out["pyav"] = str(av.__version__)
        fmt = av.library_versions.get("libavformat")
        if fmt:
            out["libavformat"] = ".".join(str(x) for x in fmt)
    except ImportError:
        pass
    return out


def app_versions(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Versions of the apps a run saw: OBS / obs-websocket (observer's `connected`), vMix, ffmpeg."""
    apps: dict[str, Any] = {}
    for e in events:
        p = e.get("payload") or {}
        if e.get("source") == "obs" and e.get("kind") == "connected":
            apps["obs"] = p.get("obs_version")
            apps["obs_websocket"] = p.get("ws_version")
        elif e.get("source") == "vmix" and p.get("version"):
            apps["vmix"] = p.get("version")
    apps.update(ffmpeg_versions())
    return dict(sorted(apps.items()))


def run_provenance(task_id: str, gt: Path, events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Manifest fields that say what scored this run and against what (the GT by id and hash)."""
    return {"tally_version": tally_version(), "catalog_sha256": catalog_sha256(),
            "scorer": {"module": scorer_module(task_id), "sha256": scorer_sha256(task_id)},
            "apps": app_versions(events), "gt": gt_record(gt)}


def seal_fields(bundle_dir: Path, workdir: Path, gt: Path, task_id: str, artifacts: Iterable[str]) -> dict[str, Any]:
    """What makes a closing bundle self-contained: the work dir snapshot and the provenance.

    Called at the end of `tally run` / a `tally serve` run, before the report is scored, so the
    run's own report is scored from the snapshot exactly as a replay elsewhere will be."""
    from monitor.bundle import EVENTS_NAME, read_events, snapshot_workdir

    events_path = Path(bundle_dir) / EVENTS_NAME
    events = [e.to_dict() for e in read_events(events_path).events] if events_path.is_file() else []
    snapshot = snapshot_workdir(bundle_dir, workdir, first=artifacts, exclude=[bundle_dir]) \
        if Path(workdir).is_dir() else None
    return {**run_provenance(task_id, gt, events), "snapshot": snapshot}


def scoring_provenance(task_id: str) -> dict[str, str]:
    """The code that scored a report (put in report.run, so a collector can key MQTT reports)."""
    return {"scorer_sha256": scorer_sha256(task_id), "catalog_sha256": catalog_sha256()}
