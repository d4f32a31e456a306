"""What a sweep scores: bundle dirs, folders holding bundles, or JSONL lines of
`{task, workdir, gt, events?, labels?, id?}` (relative paths are relative to the JSONL file).

An input that cannot be read becomes an item with a `problem`: the sweep writes it as a failed
row and goes on, it never stops the sweep.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from monitor.bundle import EVENTS_NAME, MANIFEST_NAME


@dataclass
class Item:
    id: str
    kind: str  # bundle | spec
    task: str | None = None
    bundle: str | None = None
    workdir: str | None = None
    gt: str | None = None
    events: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    problem: str | None = None
    named: bool = False  # the JSONL line gave its own id (then the id is part of the item's key)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Item:
        return cls(**d)


def is_bundle(path: Path) -> bool:
    return path.is_dir() and ((path / MANIFEST_NAME).is_file() or (path / EVENTS_NAME).is_file())


def _bundle_item(path: Path, labels: dict[str, str]) -> Item:
    item = Item(id=str(path.resolve()), kind="bundle", bundle=str(path.resolve()), labels=dict(labels))
    try:
        manifest = json.loads((path / MANIFEST_NAME).read_text(encoding="utf-8"))
        run = manifest.get("run") or {}
        item.task = run.get("task") or manifest.get("task")
        item.labels = {**{str(k): str(v) for k, v in (run.get("labels") or {}).items()}, **labels}
        if not item.task:
            item.problem = f"{path}: the manifest records no task"
    except (OSError, ValueError) as exc:
        item.problem = f"{path}: unreadable manifest ({type(exc).__name__}: {exc})"
    return item


def _spec_items(path: Path, labels: dict[str, str]) -> list[Item]:
    base = path.resolve().parent
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        ident = f"{path.resolve()}:{number}"
        try:
            spec = json.loads(line)
            if not isinstance(spec, dict) or not all(isinstance(spec.get(k), str) for k in ("task", "workdir", "gt")):
                raise ValueError("needs string fields task, workdir, gt")
        except ValueError as exc:
            out.append(Item(id=ident, kind="spec", labels=dict(labels), problem=f"{ident}: bad line ({exc})"))
            continue
        def rel(p: str | None) -> str | None:
            return None if p is None else str((base / p) if not Path(p).is_absolute() else Path(p))
        item_labels = {**labels, **{str(k): str(v) for k, v in (spec.get("labels") or {}).items()}}
        out.append(Item(id=str(spec.get("id") or ident), kind="spec", task=spec["task"], workdir=rel(spec["workdir"]),
                        gt=rel(spec["gt"]), events=rel(spec.get("events")), labels=item_labels,
                        named=bool(spec.get("id"))))
    return out


def discover(inputs: list[Path], labels: dict[str, str] | None = None) -> list[Item]:
    """Items in input order; a folder contributes every bundle under it (sorted by path)."""
    labels = dict(labels or {})
    out: list[Item] = []
    for raw in inputs:
        path = Path(raw)
        if path.is_file() and path.suffix in (".jsonl", ".json"):
            out.extend(_spec_items(path, labels))
        elif is_bundle(path):
            out.append(_bundle_item(path, labels))
        elif path.is_dir():
            found = sorted({p.parent for name in (MANIFEST_NAME, EVENTS_NAME) for p in path.rglob(name)
                            if "snapshot" not in p.relative_to(path).parts})
            out.extend(_bundle_item(p, labels) for p in found)
        else:
            out.append(Item(id=str(path), kind="bundle", bundle=str(path), labels=dict(labels),
                            problem=f"{path}: not a bundle, a folder of bundles or a .jsonl file"))
    return out


def parse_labels(pairs: list[str]) -> dict[str, str]:
    """`agent=NAME` pairs from the command line."""
    out = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--label {pair!r}: expected KEY=VALUE")
        out[key] = value
    return out
