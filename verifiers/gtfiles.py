"""Typed ground-truth files: one frozen dataclass per GT JSON file, read by `ctx.gt_typed(Cls)`.

A GT file is parsed by the same strict loader as the event payloads (verifiers.evidence.base):
a missing key or a wrong type is one GTError naming the file and the key, instead of a hand-written
`try: ... except (KeyError, TypeError, ValueError): raise GTError` per task. Field names carry units
(`gt_field(key="horizon_y")` reads the file's `horizon_y` into `horizon_y_px`); what the types cannot
say (six shots, [first, end) frames) a class checks in `validate()` through `expect`, so a bad GT is
`error` with a message naming file and key before any check runs.

Each class names its file (`FILE`) and the task that reads it (`TASK`); `@gt_file` registers it so
docs/gt.schema.json and docs/gt.md document every typed GT file per task (`python -m verifiers.gtfiles`
rewrites both; a test fails when either is stale). Synthetic instances write the file with `to_json()`.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import typing
from pathlib import Path
from typing import Any, ClassVar, TypeVar, dataclass_transform

from verifiers.evidence.base import EvidenceError, Payload, key_of
from verifiers.evidence.schema import object_schema

G = TypeVar("G", bound="GTFile")
DOCS = Path(__file__).resolve().parents[1] / "docs"
DOC = DOCS / "gt.schema.json"
DOC_MD = DOCS / "gt.md"


def gt_field(key: str | None = None, doc: str = "", **kw: Any) -> Any:
    """A GT field whose file key is `key` (default: the field name) with a one-line `doc`."""
    meta: dict[str, str] = {"doc": doc} if doc else {}
    if key:
        meta["key"] = key
    return dataclasses.field(metadata=meta, **kw)


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(dataclasses.field, gt_field))
class GTFile(Payload):
    """A ground-truth JSON file of one task (gt/<FILE>). `ROOT`: the file is a JSON list (or an object
    keyed by names), held whole in the field of that name.

    Declared in one line: `class SkyFacts(ShotFacts, task=TASK)` or `class Holes(GTFile, file="holes.json",
    task=TASK)`; the class keywords set FILE, TASK (TASKS for a file several tasks read) and ROOT, make the
    class a frozen keyword-only dataclass and register it (with a task) for the documents."""

    FILE: ClassVar[str]
    TASK: ClassVar[str]
    #: a file several tasks read (a shared helper's): all their ids, instead of TASK
    TASKS: ClassVar[tuple[str, ...]] = ()
    ROOT: ClassVar[str | None] = None

    def __init_subclass__(cls, *, file: str | None = None, task: str | None = None, tasks: tuple[str, ...] = (),
                          root: str | None = None, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        for name, value in (("FILE", file), ("TASK", task), ("TASKS", tuple(tasks)), ("ROOT", root)):
            if value:
                setattr(cls, name, value)
        if file or task or tasks:  # the one-line form (a class with an explicit @dataclass gives none)
            dataclasses.dataclass(frozen=True, kw_only=True)(cls)
            if task or tasks:
                gt_file(cls)

    @classmethod
    def parse(cls: type[G], raw: Any) -> G:
        """The file's JSON as its type: EvidenceError naming the file and the key when it does not fit."""
        where = f"ground truth {cls.FILE}"
        obj = cls.from_payload({cls.ROOT: raw} if cls.ROOT else raw, where)
        obj.validate()
        return obj

    def validate(self) -> None:
        """What the types cannot say; call `expect` per rule (default: nothing more)."""

    def expect(self, ok: bool, name: str, why: str) -> None:
        """Refuse the file when `ok` is false: the message names the file, the key and the rule."""
        if not ok:
            f = next(f for f in dataclasses.fields(self) if f.name == name)  # type: ignore[arg-type]
            raise EvidenceError(f"ground truth {self.FILE}.{key_of(f)}: {why}")

    def to_json(self) -> Any:
        """What a writer puts in gt/<FILE> (synthetic instances)."""
        out = self.to_payload()
        return out[self.ROOT] if self.ROOT else out


GT_FILES: dict[str, type[GTFile]] = {}


def gt_file(cls: type[G]) -> type[G]:
    """Register a GT file type (by task and file) for the schema documents."""
    for task in cls.TASKS or (cls.TASK,):
        GT_FILES[f"{task}/{cls.FILE}"] = cls
    return cls


def _all() -> dict[str, type[GTFile]]:
    from verifiers.registry import import_all

    import_all()  # the GT types live beside their scorers
    return dict(sorted(GT_FILES.items()))


def schema() -> dict[str, Any]:
    defs: dict[str, Any] = {}
    files = {key: object_schema(cls, defs) for key, cls in _all().items()}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "tally typed ground-truth files",
            "description": "gt/<file> of each task, by task id and file name (verifiers/gtfiles.py)",
            "files": files, "$defs": dict(sorted(defs.items()))}


def render() -> str:
    return json.dumps(schema(), indent=2) + "\n"


#: unit of a field, by the suffix of its name (the project's naming rule: names carry units)
_UNITS = {"px": "px", "s": "s", "ms": "ms", "db": "dB", "lufs": "LUFS", "deg": "°", "hz": "Hz",
          "frame": "frame", "frames": "frames", "pct": "%", "stop": "stop", "stops": "stops", "de2000": "ΔE2000"}


def _unit(name: str) -> str:
    return _UNITS.get(name.rsplit("_", 1)[-1], "") if "_" in name else ""


def _type_name(tp: Any) -> str:
    if isinstance(tp, type):
        return tp.__name__
    return re.sub(r"\b(?:typing|verifiers(?:\.\w+)*)\.", "", str(tp)).replace("|", "\\|")  # in a table cell


def _rows(cls: type[GTFile], nested: dict[str, type]) -> list[str]:
    hints = typing.get_type_hints(cls)
    rows = []
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        tp = hints[f.name]
        for inner in (tp, *typing.get_args(tp)):
            if isinstance(inner, type) and issubclass(inner, Payload):
                nested[inner.__name__] = inner
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        rows.append(f"| `{key_of(f)}` | `{f.name}` | `{_type_name(tp)}` | {_unit(f.name)} | "
                    f"{'yes' if required else 'no'} | {f.metadata.get('doc', '')} |")
    return rows


def _table(cls: type, nested: dict[str, type]) -> list[str]:
    return ["| key | field | type | unit | required | meaning |", "|---|---|---|---|---|---|", *_rows(cls, nested)]


def render_md() -> str:
    """docs/gt.md: per family and task, each typed GT file's keys, fields, types and units."""
    out = ["# Ground-truth files", "",
           "Generated by `python -m verifiers.gtfiles` from the typed GT classes (verifiers/gtfiles.py);",
           "tests/architecture/test_gt_files.py fails when this page is stale. A file that does not fit",
           "(missing key, wrong type, a broken rule) makes the checks that read it `error`, with a",
           "message naming the file and the key. JSON Schema: docs/gt.schema.json.", ""]
    by_family: dict[str, list[tuple[str, type[GTFile]]]] = {}
    for key, cls in _all().items():
        by_family.setdefault(cls.__module__.split(".")[2], []).append((key.rsplit("/", 1)[0], cls))
    for family in sorted(by_family):
        out += [f"## {family}", ""]
        for task, cls in by_family[family]:
            nested: dict[str, type] = {}
            doc = " ".join((cls.__doc__ or "").split())
            out += [f"### {task}: gt/{cls.FILE}", "", f"{doc} (`{cls.__module__}.{cls.__name__}`"
                    + (f"; the file is a JSON list of `{cls.ROOT}`)" if cls.ROOT else ")"), "", *_table(cls, nested), ""]
            for name, sub in sorted(nested.items()):
                out += [f"`{name}`:", "", *_table(sub, {}), ""]
    return "\n".join(out).rstrip("\n") + "\n"


if __name__ == "__main__":
    from verifiers import gtfiles  # the registry the task modules fill (this file runs as __main__)

    gtfiles.DOC.write_text(gtfiles.render(), encoding="utf-8")
    gtfiles.DOC_MD.write_text(gtfiles.render_md(), encoding="utf-8")
    print(f"wrote {gtfiles.DOC} and {gtfiles.DOC_MD}", file=sys.stderr)
