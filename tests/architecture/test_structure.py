"""Structure the scorer architecture promises (issue 17), checked on the source of the task modules:
all 80 scorers of the four families are declared checks (no procedural score(); a score() in a task
module would be at most MAX_SCORE_LINES), every check body is at most MAX_CHECK_LINES, mutants name
checks through the catalog symbols (no check-name string typed again), and no task module imports another."""

from __future__ import annotations

import ast

import pytest

from verifiers.catalog import load_catalog
from verifiers.checks import CheckedTask
from verifiers.registry import scorer_index, verifier_class

#: every family's scorers are declared checks (all 80 tasks)
CONVERTED = ("streaming", "sound", "grading", "shortform")
MAX_CHECK_LINES = 40
MAX_SCORE_LINES = 25


def _tasks(family: str) -> list[str]:
    return sorted(t.id for t in load_catalog().family(family))


def _tree(task_id: str) -> ast.Module:
    return ast.parse(scorer_index()[task_id].path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("task_id", [t for f in CONVERTED for t in _tasks(f)])
def test_converted_scorer_is_declared_checks(task_id: str) -> None:
    cls = verifier_class(task_id)
    assert cls is not None and issubclass(cls, CheckedTask), f"{task_id} is not a CheckedTask"
    assert "score" not in vars(cls), f"{task_id} still overrides score()"
    spec = load_catalog().get(task_id)
    assert all(c.curve.kind != "inline" for c in spec.checks)


@pytest.mark.parametrize("task_id", [t for f in CONVERTED for t in _tasks(f)])
def test_check_bodies_are_short_and_mutants_use_symbols(task_id: str) -> None:
    names = {c.name for c in load_catalog().get(task_id).checks}
    tree = _tree(task_id)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(
                isinstance(d, ast.Call) and getattr(d.func, "id", None) == "check" for d in node.decorator_list):
            lines = node.end_lineno - node.lineno + 1
            assert lines <= MAX_CHECK_LINES, f"{task_id} check {node.name}: {lines} lines"
        if isinstance(node, ast.FunctionDef) and node.name == "score":
            assert node.end_lineno - node.lineno + 1 <= MAX_SCORE_LINES, f"{task_id} score() too long"
        if isinstance(node, ast.Call) and (getattr(node.func, "attr", None) == "mutant"
                                           or getattr(node.func, "id", None) == "solution"):
            for arg in node.args:
                if isinstance(arg, (ast.List, ast.Tuple)):
                    typed = [e.value for e in arg.elts if isinstance(e, ast.Constant) and e.value in names]
                    assert not typed, f"{task_id} line {node.lineno}: mutant names checks as strings {typed}"


def test_all_80_tasks_are_declared_checks() -> None:
    ids = [t for f in CONVERTED for t in _tasks(f)]
    assert len(ids) == 80
    assert all(issubclass(verifier_class(t), CheckedTask) for t in ids)


def test_no_task_module_imports_another() -> None:
    modules = {w.module for w in scorer_index().values()}
    bad = []
    for w in scorer_index().values():
        if not w.module.startswith(tuple(f"verifiers.tasks.{f}." for f in CONVERTED)):
            continue
        for node in ast.walk(ast.parse(w.path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in modules - {w.module}:
                bad.append(f"{w.module} -> {node.module}")
    assert not bad
