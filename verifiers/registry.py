"""One scorer per task id, imported only when a task is scored (lazy).

Where each task's scorer lives is found by reading the source of `verifiers/tasks/**` (a scorer is
a class with `task_id = "R06..."`), not by importing it: importing all 80 scorers (numpy, PyAV,
OCR, ...) took ~3 s, and `tally tasks` only needs to know which tasks have one and where.
`tests/architecture/test_registry.py` proves the index equals what importing every module registers.

A task without a registered scorer is listed as not implemented and can never pass.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # not at run time: verifiers.base pulls numpy, and `tally tasks` needs none of it
    from verifiers.base import TaskVerifier

_REGISTRY: dict[str, type[TaskVerifier]] = {}

TASKS_DIR = Path(__file__).parent / "tasks"
_CLASS_RE = re.compile(r"^class\s+(\w+)\b")
_TASK_ID_RE = re.compile(r"^[ \t]+task_id\s*(?::[^=]*)?=\s*(?:[\"']([^\"']+)[\"']|(\w+))\s*$")
_CONST_RE = re.compile(r"^(\w+)\s*(?::[^=]*)?=\s*[\"'](R06[^\"']+)[\"']")


@dataclass(frozen=True)
class Where:
    """Where a task's scorer is: module, class, and the file to open."""

    task_id: str
    module: str
    cls: str
    path: Path


def register(cls: type[TaskVerifier]) -> type[TaskVerifier]:
    """Make `cls` the scorer of `cls.task_id` (idempotent). A CheckedTask calls it itself when its
    class body names its task_id; as a class decorator it is then redundant, though harmless."""
    tid = cls.task_id
    if tid in _REGISTRY and _REGISTRY[tid] is not cls:
        raise RuntimeError(f"two verifiers registered for {tid}: {_REGISTRY[tid].__name__} and {cls.__name__}")
    _REGISTRY[tid] = cls
    return cls


@functools.cache
def scorer_index() -> dict[str, Where]:
    """task id -> where its scorer class is, from the sources (no import)."""
    out: dict[str, Where] = {}
    for path in sorted(TASKS_DIR.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "task_id" not in text:
            continue
        rel = path.relative_to(TASKS_DIR.parent.parent).with_suffix("")
        module = ".".join(rel.parts)
        for cls, tid in _declared(text):
            if tid in out:
                raise RuntimeError(f"two scorers declare {tid}: {out[tid].module}.{out[tid].cls} and {module}.{cls}")
            out[tid] = Where(tid, module, cls, path)
    return out


def _declared(text: str) -> list[tuple[str, str]]:
    """(class, task id) for each top-level class whose body sets task_id to a string literal or to a
    module-level constant assigned one (`TASK = "R06..."`, `task_id = TASK`)."""
    out, cls, consts = [], None, {}
    for line in text.splitlines():
        if m := _CONST_RE.match(line):
            consts[m.group(1)] = m.group(2)
        elif m := _CLASS_RE.match(line):
            cls = m.group(1)
        elif cls and (m := _TASK_ID_RE.match(line)):
            tid = m.group(1) or consts.get(m.group(2))
            if tid:
                out.append((cls, tid))
            cls = None
    return out


def verifier_class(task_id: str) -> type[TaskVerifier] | None:
    """The scorer of `task_id`, importing only its module (None when no scorer declares it)."""
    if task_id not in _REGISTRY:
        where = scorer_index().get(task_id)
        if where is None:
            return None
        importlib.import_module(where.module)
    return _REGISTRY.get(task_id)


def implemented_ids() -> set[str]:
    return set(scorer_index())


def import_all() -> dict[str, type[TaskVerifier]]:
    """Import every module under verifiers.tasks (what the registry did eagerly before): for tests."""
    import verifiers.tasks as pkg

    for mod in pkgutil.walk_packages(pkg.__path__, prefix="verifiers.tasks."):
        importlib.import_module(mod.name)
    return dict(_REGISTRY)
