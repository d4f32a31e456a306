"""What a task verifier is: a small class with a scorer and a synthetic-instance generator.

Modelled on AndroidWorld's TaskEval, plus weighted checks with evidence and a mutant suite.
A verifier never does live I/O: it reads the work dir, the hidden GT dir and the recorded
events (plain dicts, as in events.jsonl) and fills in its checks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from verifiers.catalog import CheckSpec, TaskSpec
from verifiers.model import CheckResult, clamp01, status_for


class VerifierInputError(Exception):
    """Base of errors a scorer raises to stop early with a clear message."""


class GTError(VerifierInputError):
    """Hidden ground truth missing or malformed: the verifier cannot judge (status error)."""


class AgentOutputError(VerifierInputError):
    """The agent's artifact is missing or unusable: the agent failed the checks that need it."""


class NoLiveEvidence(VerifierInputError):
    """The run recorded no events of the kind a live check needs: cannot judge (status error)."""


@dataclass
class ScoreContext:
    task: TaskSpec
    workdir: Path
    gt: Path
    events: list[dict[str, Any]] | None = None  # None: scored without a run (no live evidence at all)
    manifest: dict[str, Any] = field(default_factory=dict)

    def artifact(self, rel: str) -> Path:
        """Path of an expected output; raises AgentOutputError naming it when absent."""
        path = self.workdir / rel
        if not path.exists():
            raise AgentOutputError(f"artifact missing: {rel}")
        return path

    def input(self, rel: str) -> Path:
        path = self.workdir / rel
        if not path.exists():
            raise GTError(f"task input missing from work dir: {rel}")
        return path

    def gt_path(self, rel: str) -> Path:
        path = self.gt / rel
        if not path.exists():
            raise GTError(f"ground truth missing: {rel}")
        return path

    def gt_json(self, rel: str) -> Any:
        path = self.gt_path(rel)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise GTError(f"ground truth {rel} is not valid JSON: {exc}") from None

    def events_of(self, source: str, kind: str | None = None) -> list[dict[str, Any]]:
        """Recorded events of one source (and kind); raises NoLiveEvidence when the run recorded none."""
        if self.events is None:
            raise NoLiveEvidence("no live evidence: scored without a recorded run")
        found = [e for e in self.events if e.get("source") == source and (kind is None or e.get("kind") == kind)]
        if not found:
            raise NoLiveEvidence(f"no live evidence: no {source}/{kind or '*'} events recorded")
        return found


class Checks:
    """Collects one result per catalog check; anything left unset at the end is a verifier bug."""

    def __init__(self, task: TaskSpec) -> None:
        self.task = task
        self.results: dict[str, CheckResult] = {}

    def spec(self, name: str) -> CheckSpec:
        return self.task.check(name)

    def params(self, name: str) -> dict[str, Any]:
        return self.spec(name).params

    def set(self, name: str, score: float, evidence: dict[str, Any] | None = None, message: str = "") -> None:
        spec = self.spec(name)
        s = clamp01(score)
        self.results[name] = CheckResult(name, spec.weight, round(s, 6), status_for(s),
                                         _plain(evidence or {}), message)

    def fail(self, name: str, message: str, evidence: dict[str, Any] | None = None) -> None:
        self.set(name, 0.0, evidence, message)

    def error(self, name: str, message: str, evidence: dict[str, Any] | None = None) -> None:
        spec = self.spec(name)
        self.results[name] = CheckResult(name, spec.weight, 0.0, "error", _plain(evidence or {}), message)

    def pending(self) -> list[str]:
        return [c.name for c in self.task.checks if c.name not in self.results]

    def fail_rest(self, message: str, names: Iterable[str] | None = None) -> None:
        for n in list(names) if names is not None else self.pending():
            if n not in self.results:
                self.fail(n, message)

    def error_rest(self, message: str, names: Iterable[str] | None = None) -> None:
        for n in list(names) if names is not None else self.pending():
            if n not in self.results:
                self.error(n, message)

    def ordered(self) -> list[CheckResult]:
        return [self.results[c.name] for c in self.task.checks]


def _plain(obj: Any) -> Any:
    """Evidence must be JSON: convert numpy values and round floats so reports are stable."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist())
    if isinstance(obj, np.generic):
        return _plain(obj.item())
    if isinstance(obj, float):
        return round(obj, 6) if np.isfinite(obj) else None
    if isinstance(obj, Path):
        return str(obj)
    return obj


class TaskVerifier:
    """One task's scorer and synthetic-instance generator. Subclasses set task_id and override."""

    task_id: ClassVar[str]

    def __init__(self, task: TaskSpec) -> None:
        self.task = task

    def score(self, ctx: ScoreContext, checks: Checks) -> None:
        raise NotImplementedError

    def synth(self, inst: Any, rng: np.random.Generator) -> None:  # inst: verifiers.synth.InstanceWriter
        raise NotImplementedError(f"{self.task_id} has no synthetic instance generator")

    @property
    def has_synth(self) -> bool:
        return type(self).synth is not TaskVerifier.synth
