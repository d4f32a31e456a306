"""Score one task: a pure function of (task, work dir, GT dir, recorded events).

What the agent wrote must never decide whether the scorer can judge. So before any scorer code
runs, every declared artifact and input is inspected (verifiers.measure.safe_io.inspect): a
symlink, FIFO, device, oversized file, decompression bomb, image header beyond the pixel limit or
JSON nested beyond the depth limit fails every check with a message saying which file and why
(nothing of a link's target is read). And a RecursionError or MemoryError while scoring, or a
refusal from the safe opener, is the agent's `fail` too: the GT is ours and the scorers are pure
functions of it and the agent's files, so running out of stack or memory comes from the latter.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

from verifiers.base import AgentOutputError, Checks, GTError, NoLiveEvidence, ScoreContext
from verifiers.catalog import TaskSpec, load_catalog
from verifiers.measure import safe_io
from verifiers.model import CheckResult, Report
from verifiers.registry import verifier_class


class UnusableInput(Exception):
    """Inputs so broken nothing can be scored (unknown task, no GT dir, unreadable work dir): exit 2."""


#: Longest exception text carried into a check message or the notes.
MAX_ERROR_CHARS = 300


def refused_files(task: TaskSpec, workdir: Path) -> list[str]:
    """Why each declared artifact / input must not be read (empty: all fine or absent)."""
    found = []
    for spec in task.artifacts:
        why = safe_io.inspect(workdir, spec.path, spec.kind)
        if why:
            found.append(why)
    for rel in task.inputs:
        why = safe_io.inspect(workdir, rel, "any")
        if why:
            found.append(why)
    return found


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + "…"


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
    refused = refused_files(task, workdir)
    if refused:
        checks.fail_rest("refused agent file: " + "; ".join(refused[:3]))
        notes.append(f"{len(refused)} agent file(s) refused before scoring (not read): " + "; ".join(refused[:10]))
        return Report(task.id, task.family, task.title, checks.ordered(), notes=notes, inputs=inputs)
    try:
        cls(task).score(ctx, checks)
    except AgentOutputError as exc:
        checks.fail_rest(str(exc))
    except safe_io.UnsafeFile as exc:  # the safe opener refused an agent file the scorer reached for
        checks.fail_rest(f"refused agent file: {exc}")
    except (GTError, NoLiveEvidence) as exc:
        checks.error_rest(str(exc))
    except RecursionError:
        checks.fail_rest("an agent file is nested too deeply to score (RecursionError): the agent's failure")
    except MemoryError:
        checks.fail_rest("an agent file is too large to score (MemoryError): the agent's failure")
    except Exception as exc:  # a verifier bug must surface as "could not judge", not as the agent's 0
        checks.error_rest(f"verifier crashed: {type(exc).__name__}: {_short(exc)}")
        notes.append("verifier traceback:\n" + traceback.format_exc(limit=6)[-4000:])
    for name in checks.pending():
        checks.error(name, "verifier did not judge this check (bug)")
    if task.emulated:
        notes.append(f"emulated evidence: {task.emulated}")
    return Report(task.id, task.family, task.title, checks.ordered(), notes=notes, inputs=inputs)
