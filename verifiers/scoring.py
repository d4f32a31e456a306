"""Score one task: a pure function of (task, work dir, GT dir, recorded events)."""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

from verifiers.base import AgentOutputError, Checks, GTError, NoLiveEvidence, ScoreContext
from verifiers.catalog import load_catalog
from verifiers.model import CheckResult, Report
from verifiers.registry import verifier_class


class UnusableInput(Exception):
    """Inputs so broken nothing can be scored (unknown task, no GT dir, unreadable work dir): exit 2."""


def score_task(task_id: str, workdir: Path, gt: Path, events: list[dict[str, Any]] | None = None,
               manifest: dict[str, Any] | None = None) -> Report:
    catalog = load_catalog()
    try:
        task = catalog.get(task_id)
    except KeyError as exc:
        raise UnusableInput(str(exc.args[0])) from None
    workdir, gt = Path(workdir), Path(gt)
    if not workdir.is_dir():
        raise UnusableInput(f"work dir {workdir} is not a readable directory")
    if not gt.is_dir():
        raise UnusableInput(f"GT dir {gt} is not a readable directory")
    inputs = {"workdir": str(workdir), "gt": str(gt), "live_evidence": events is not None,
              "event_count": len(events) if events is not None else 0}
    cls = verifier_class(task_id)
    if cls is None:
        checks = [CheckResult(c.name, c.weight, 0.0, "error", {}, "not implemented: no scorer for this task")
                  for c in task.checks]
        return Report(task.id, task.family, task.title, checks, implemented=False,
                      notes=["no scorer is registered for this task; it cannot pass"], inputs=inputs)
    ctx = ScoreContext(task, workdir, gt, events, manifest or {})
    checks = Checks(task)
    notes: list[str] = []
    try:
        cls(task).score(ctx, checks)
    except AgentOutputError as exc:
        checks.fail_rest(str(exc))
    except (GTError, NoLiveEvidence) as exc:
        checks.error_rest(str(exc))
    except Exception as exc:  # a verifier bug must surface as "could not judge", not as the agent's 0
        checks.error_rest(f"verifier crashed: {type(exc).__name__}: {exc}")
        notes.append("verifier traceback:\n" + traceback.format_exc(limit=6))
    for name in checks.pending():
        checks.error(name, "verifier did not judge this check (bug)")
    if task.emulated:
        notes.append(f"emulated evidence: {task.emulated}")
    return Report(task.id, task.family, task.title, checks.ordered(), notes=notes, inputs=inputs)
