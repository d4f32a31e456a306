"""tally as a library: the reward function an RL pipeline or a notebook calls.

    from monitor.api import score
    report = score("R06.12.01.01-T05", "/runs/42/workdir", "/gt/T05", events="/runs/42/events.jsonl")
    report.score, report.complete, [c.status for c in report.checks]

    from monitor.api import ray_score          # needs Ray (pip install 'tally[ray]')
    refs = [ray_score.remote(task, workdir, gt) for task, workdir, gt in batch]
    rewards = [r["score"] for r in ray.get(refs)]

`score` is the same pure function `tally score` runs (verifiers.scoring.score_task): a function of
(task, work dir, GT dir, recorded events), no clock, no network. `ray_score` is its Ray remote
wrapper (num_cpus=1, retried on worker loss) and returns the report as a plain dict, which
pickles small and needs nothing of tally on the caller's side. The top-level package is
`monitor` (fixed by the product brief), so the API lives at `monitor.api`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from verifiers.model import Report

__all__ = ["Report", "score", "score_bundle"]  # and ray_score, made on first use

EventsArg = str | Path | Iterable[dict[str, Any]] | None


def _events(events: EventsArg) -> list[dict[str, Any]] | None:
    if events is None:
        return None
    if isinstance(events, (str, Path)):
        from monitor.bundle import read_events

        return [e.to_dict() for e in read_events(Path(events)).events]
    return list(events)


def score(task: str, workdir: str | Path, gt: str | Path, events: EventsArg = None) -> Report:
    """Score one task's work dir against its hidden GT (events: an events.jsonl path or event dicts).

    Raises verifiers.scoring.UnusableInput for an unknown task or missing folders."""
    from verifiers.scoring import score_task

    return score_task(task, Path(workdir), Path(gt), _events(events))


def score_bundle(bundle: str | Path, gt_root: str | Path | None = None) -> dict[str, Any]:
    """Re-score a run bundle (from its snapshot when it has one), as `tally replay` does."""
    from monitor.run.rescore import score_bundle as _score_bundle

    return _score_bundle(Path(bundle), gt_root=Path(gt_root) if gt_root else None)


def _score_dict(task: str, workdir: str, gt: str, events: EventsArg = None) -> dict[str, Any]:
    return score(task, workdir, gt, events).to_dict()


@functools.cache
def _ray_score() -> Any:
    import ray

    return ray.remote(num_cpus=1, max_retries=3)(_score_dict)


def __getattr__(name: str) -> Any:
    if name == "ray_score":  # made on first use, so importing monitor.api never needs Ray
        return _ray_score()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
