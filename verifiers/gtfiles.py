"""Typed ground-truth files: one frozen dataclass per GT JSON file, read by `ctx.gt_typed(Cls)`.

A GT file is parsed by the same strict loader as the event payloads (verifiers.evidence.base):
a missing key or a wrong type is one GTError naming the file and the key, instead of a hand-written
`try: ... except (KeyError, TypeError, ValueError): raise GTError` per task. Each class names its
file (`FILE`) and the task that reads it (`TASK`); `@gt_file` registers it so docs/gt.schema.json
documents every typed GT file per task (`python -m verifiers.gtfiles` rewrites it; a test fails
when it is stale). Synthetic instances write the file with `to_payload()`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from verifiers.evidence.base import Payload
from verifiers.evidence.schema import object_schema

G = TypeVar("G", bound="GTFile")
DOC = Path(__file__).resolve().parents[1] / "docs" / "gt.schema.json"


class GTFile(Payload):
    """A ground-truth JSON file of one task (gt/<FILE>)."""

    FILE: ClassVar[str]
    TASK: ClassVar[str]


GT_FILES: dict[str, type[GTFile]] = {}


def gt_file(cls: type[G]) -> type[G]:
    """Register a GT file type (by task and file) for the schema document."""
    GT_FILES[f"{cls.TASK}/{cls.FILE}"] = cls
    return cls


def schema() -> dict[str, Any]:
    from verifiers.registry import import_all

    import_all()  # the GT types live beside their scorers
    defs: dict[str, Any] = {}
    files = {key: object_schema(cls, defs) for key, cls in sorted(GT_FILES.items())}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "tally typed ground-truth files",
            "description": "gt/<file> of each task, by task id and file name (verifiers/gtfiles.py)",
            "files": files, "$defs": dict(sorted(defs.items()))}


def render() -> str:
    return json.dumps(schema(), indent=2) + "\n"


if __name__ == "__main__":
    from verifiers import gtfiles  # the registry the task modules fill (this file runs as __main__)

    gtfiles.DOC.write_text(gtfiles.render(), encoding="utf-8")
    print(f"wrote {DOC}", file=sys.stderr)
