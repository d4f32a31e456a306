"""What a task verifier is: a small class with a scorer and a synthetic-instance generator.

Modelled on AndroidWorld's TaskEval, plus weighted checks with evidence and a mutant suite.
A verifier never does live I/O: it reads the work dir, the hidden GT dir and the recorded
events (plain dicts, as in events.jsonl) and fills in its checks.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from verifiers.catalog import CheckSpec, TaskSpec
from verifiers.evidence.base import EvidenceError
from verifiers.measure import safe_io
from verifiers.measure.errors import MediaError
from verifiers.model import CheckResult, clamp01, status_for

if TYPE_CHECKING:
    from verifiers.gtfiles import GTFile

G = TypeVar("G", bound="GTFile")

#: Longest text kept in a check's evidence (a scorer may quote what the agent wrote).
MAX_EVIDENCE_CHARS = 2000


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

    def kind_of(self, rel: str) -> str:
        """The catalog kind of a declared artifact (its size cap), "any" for anything else."""
        want = rel.rstrip("/")
        for spec in self.task.artifacts:
            if spec.path.rstrip("/") == want:
                return spec.kind
        return "any"

    def _checked(self, rel: str, kind: str | None) -> Path:
        """`workdir/rel` if it is a regular file (or directory) inside the work dir, reached
        without a symlink, within its kind's size cap (verifiers.measure.safe_io)."""
        kind = kind or self.kind_of(rel)
        path = safe_io.inside(self.workdir, rel, allow_dir=True)
        if not path.is_dir():
            os.close(safe_io.open_regular(self.workdir, rel, kind))
        return path

    def artifact(self, rel: str, kind: str | None = None) -> Path:
        """Path of an expected output; AgentOutputError naming it when absent, or when it is a
        symlink, a FIFO/device, outside the work dir or over its size cap (never followed)."""
        return self._resolve(rel, kind, AgentOutputError(f"artifact missing: {rel}"), "artifact refused")

    def input(self, rel: str, kind: str | None = None) -> Path:
        """A task input in the work dir: missing is GTError (the task is broken), but one the agent
        replaced by a link or special file is the agent's failure (AgentOutputError)."""
        return self._resolve(rel, kind, GTError(f"task input missing from work dir: {rel}"), "task input refused")

    def _resolve(self, rel: str, kind: str | None, missing: Exception, refused: str) -> Path:
        """`_checked`, with a missing file raised as `missing` and an unsafe one as the agent's failure."""
        try:
            return self._checked(rel, kind)
        except FileNotFoundError:
            raise missing from None
        except safe_io.UnsafeFile as exc:
            raise AgentOutputError(f"{refused}: {exc}") from None

    # -- typed readers of agent files: the choke point tasks should use instead of open() ----------

    def _agent_error(self, exc: MediaError) -> AgentOutputError:
        return AgentOutputError(str(exc))

    def read_bytes(self, rel: str, kind: str | None = None) -> bytes:
        """Bytes of an agent file, checked as `artifact` (and read through the checked descriptor)."""
        self.artifact(rel, kind)
        try:
            return safe_io.read_bytes(self.workdir, rel, kind or self.kind_of(rel))
        except MediaError as exc:
            raise self._agent_error(exc) from None

    def read_text(self, rel: str, kind: str | None = None, encoding: str = "utf-8") -> str:
        data = self.read_bytes(rel, kind)
        try:
            return data.decode(encoding)
        except UnicodeDecodeError as exc:
            raise AgentOutputError(f"{rel}: not {encoding} text (byte {exc.start})") from None

    def json(self, rel: str, kind: str | None = None) -> Any:
        """An agent JSON file: depth-capped, AgentOutputError (never RecursionError) when unusable."""
        try:
            return safe_io.load_json(self.read_bytes(rel, kind or "json"), rel)
        except MediaError as exc:
            raise self._agent_error(exc) from None

    def xml(self, rel: str, kind: str | None = None, gzip_ok: bool = False):
        """An agent XML file's ElementTree root: gzip inflated with a cap, nesting capped."""
        data = self.read_bytes(rel, kind)
        try:
            if gzip_ok and safe_io.is_gzip(data):
                data = safe_io.gunzip(data, rel)
            return safe_io.parse_xml(data, rel)
        except MediaError as exc:
            raise self._agent_error(exc) from None

    def image(self, rel: str, flags: int | None = None, kind: str | None = None) -> np.ndarray:
        """cv2.imread of an agent image after the header's pixel count is checked."""
        try:
            return safe_io.read_image(self.workdir, rel, flags, kind or "image")
        except FileNotFoundError:
            raise AgentOutputError(f"artifact missing: {rel}") from None
        except MediaError as exc:
            raise self._agent_error(exc) from None

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

    def gt_typed(self, cls: type[G], rel: str | None = None) -> G:
        """gt/<cls.FILE> (or gt/<rel>) parsed into its dataclass (verifiers.gtfiles): a missing key,
        a wrong type or a broken rule of the file is one GTError naming the file and the key."""
        raw = self.gt_json(rel or cls.FILE)
        try:
            return cls.parse(raw)
        except EvidenceError as exc:
            raise GTError(str(exc)) from None

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
                                         _plain(evidence or {}), message, spec.curve.describe())

    def fail(self, name: str, message: str, evidence: dict[str, Any] | None = None) -> None:
        self.set(name, 0.0, evidence, message)

    def error(self, name: str, message: str, evidence: dict[str, Any] | None = None) -> None:
        spec = self.spec(name)
        self.results[name] = CheckResult(name, spec.weight, 0.0, "error", _plain(evidence or {}), message,
                                         spec.curve.describe())

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
    """Evidence must be JSON: convert numpy values and round floats so reports are stable; texts
    are capped (a scorer quoting an agent file must not put the file in the report)."""
    if isinstance(obj, str):
        return obj if len(obj) <= MAX_EVIDENCE_CHARS else f"{obj[:MAX_EVIDENCE_CHARS]}…[+{len(obj) - MAX_EVIDENCE_CHARS} chars]"
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
