"""Synthetic task instances and the self-test that proves each verifier.

An instance folder holds `workdir/` (what the agent gets), `gt/` (hidden truth), `oracle/`
(a perfect solution's outputs, laid over the work dir) and `mutants/<name>/` (outputs with one
planted fault) each with `expect.json` = {"lowers": [check names]}. In oracle and mutant folders
two top-level names are reserved: `expect.json`, and `events.jsonl` (the live evidence a run
would have recorded for that solution), which are not laid over the work dir.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from verifiers.catalog import load_catalog
from verifiers.registry import verifier_class
from verifiers.scoring import UnusableInput, score_task

RESERVED = {"expect.json", "events.jsonl", ".built"}
ORACLE_MIN = 99.0
NOTHING_MAX = 5.0
UNCHANGED_TOL = 1e-3


class InstanceWriter:
    """What a verifier's `synth` writes through; keeps the folder layout in one place."""

    def __init__(self, root: Path, seed: int) -> None:
        self.root = Path(root)
        self.seed = seed
        for sub in ("workdir", "gt", "oracle", "mutants"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)

    @property
    def workdir(self) -> Path:
        return self.root / "workdir"

    @property
    def gt(self) -> Path:
        return self.root / "gt"

    @property
    def oracle(self) -> Path:
        return self.root / "oracle"

    def mutant(self, name: str, lowers: list[str], why: str = "") -> Path:
        path = self.root / "mutants" / name
        path.mkdir(parents=True, exist_ok=True)
        (path / "expect.json").write_text(json.dumps({"lowers": sorted(lowers), "why": why}, indent=2) + "\n")
        return path

    def export_case(self, name: str, files: list[tuple[str, str]], min_score: float | None = None,
                    why: str = "") -> None:
        """A realistic export of the oracle (recipes in verifiers.synthcases), built and scored at
        self-test time; it must score ≥ min_score (default synthcases.EXPORT_MIN)."""
        from verifiers.synthcases import EXPORT_MIN

        self._add_case({"kind": "export", "name": name, "files": files,
                        "min": EXPORT_MIN if min_score is None else min_score, "why": why})

    def baseline_case(self, name: str, files: list[tuple[str, str]], max_score: float | None = None,
                      why: str = "") -> None:
        """A gaming attempt built from the instance; it must score ≤ max_score (default BASELINE_MAX)."""
        from verifiers.synthcases import BASELINE_MAX

        self._add_case({"kind": "baseline", "name": name, "files": files,
                        "max": BASELINE_MAX if max_score is None else max_score, "why": why})

    def _add_case(self, case: dict[str, Any]) -> None:
        from verifiers.synthcases import CASES_FILE, load_cases

        cases = [c for c in load_cases(self.root) if c["name"] != case["name"]] + [case]
        self.write_json(self.root / CASES_FILE, cases)

    @staticmethod
    def write_json(path: Path, obj: Any) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return path

    @staticmethod
    def write_events(folder: Path, events: list[dict[str, Any]]) -> Path:
        """Live evidence for a solution, in the bundle's events.jsonl encoding."""
        path = folder / "events.jsonl"
        with open(path, "w", encoding="utf-8") as fh:
            for i, e in enumerate(events):
                line = {"seq": i, "mono_ns": 0, "wall_time": 0.0, "payload": {}, **e}
                fh.write(json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n")
        return path


def synth_instance(task_id: str, out: Path, seed: int = 0) -> Path:
    cls = verifier_class(task_id)
    if cls is None:
        raise UnusableInput(f"{task_id}: not implemented (no verifier)")
    verifier = cls(load_catalog().get(task_id))
    if not verifier.has_synth:
        raise UnusableInput(f"{task_id}: the verifier has no synthetic instance generator")
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    cached = _session_instance(cls, task_id, seed)
    if cached is not None and cached.is_dir():
        shutil.copytree(cached, out, symlinks=True)
        return out
    verifier.synth(InstanceWriter(out, seed), np.random.default_rng(seed))
    if cached is not None:
        _offer_to_session(out, cached)
    return out


INSTANCE_CACHE_ENV = "TALLY_INSTANCE_CACHE"
"""A folder where synth_instance keeps every instance it wrote, for one test session (tests/conftest.py
makes a fresh one and removes it at the end). A synth is deterministic for (task, seed) and the code
(the seed drives every random choice; x264 is deterministic), so while the code cannot change the
same instance is synthesised once and copied, even by another pytest worker or a `tally` subprocess.
The verifier module's bytes are in the key too, so a folder left set across an edit is not stale for
that module (other modules it uses are not hashed: never keep the folder across sessions)."""


def _session_instance(cls: type, task_id: str, seed: int) -> Path | None:
    import hashlib
    import inspect
    import os

    root = os.environ.get(INSTANCE_CACHE_ENV)
    if not root:
        return None
    try:
        code = hashlib.sha256(Path(inspect.getfile(cls)).read_bytes()).hexdigest()[:16]
    except (OSError, TypeError):
        return None
    return Path(root) / f"{task_id}-seed{seed}-{code}"


def _offer_to_session(inst: Path, cached: Path) -> None:
    """Copy a freshly written instance to the session folder (atomically: workers may race)."""
    import os

    tmp = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(inst, tmp, symlinks=True)
        os.rename(tmp, cached)
    except OSError:  # another worker won the race (its copy is the same), or the folder is gone
        shutil.rmtree(tmp, ignore_errors=True)


def overlay(workdir: Path, solution: Path, dest: Path) -> None:
    """dest = copy of workdir with the solution's files laid over it (reserved names skipped)."""
    shutil.copytree(workdir, dest, dirs_exist_ok=True)
    for item in solution.iterdir():
        if item.name in RESERVED:
            continue
        target = dest / item.name
        if item.is_dir():
            shutil.copytree(item, target, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(item, target)


def load_solution_events(solution: Path | None) -> list[dict[str, Any]] | None:
    if solution is None or not (solution / "events.jsonl").exists():
        return None
    return [json.loads(line) for line in (solution / "events.jsonl").read_text().splitlines() if line.strip()]


def score_solution(task_id: str, inst: Path, solution: Path | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tally-selftest-") as tmp:
        work = Path(tmp) / "work"
        if solution is None:
            shutil.copytree(inst / "workdir", work)
        else:
            overlay(inst / "workdir", solution, work)
        return score_task(task_id, work, inst / "gt", load_solution_events(solution)).to_dict()


@dataclass
class SelftestResult:
    task: str
    ok: bool
    oracle: float | None = None
    nothing: float | None = None
    mutants: dict[str, dict[str, Any]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    #: every case with its bound and margin (positive = inside the bound): oracle, do-nothing,
    #: each export, each baseline, each mutant
    cases: list[dict[str, Any]] = field(default_factory=list)
    seconds: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task, "ok": self.ok, "oracle": self.oracle, "nothing": self.nothing,
                "mutants": self.mutants, "problems": self.problems, "cases": self.cases,
                "seconds": self.seconds}


def _by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in report["checks"]}


def selftest_task(task_id: str, seed: int = 0, keep: Path | None = None,
                  progress: Callable[[str], None] | None = None) -> SelftestResult:
    import time

    from verifiers.synthcases import remember_instance, reuse_instance

    t0 = time.perf_counter()
    res = SelftestResult(task_id, ok=False)
    with tempfile.TemporaryDirectory(prefix="tally-synth-") as tmp:
        inst = (keep or Path(tmp)) / task_id
        if not reuse_instance(task_id, seed, inst):
            inst = synth_instance(task_id, inst, seed)
        remember_instance(task_id, seed, inst)
        if progress:
            progress(f"{task_id}: oracle")
        oracle = score_solution(task_id, inst, inst / "oracle")
        res.oracle = oracle["score"]
        res.cases.append({"kind": "oracle", "name": "oracle", "score": oracle["score"], "bound": f">= {ORACLE_MIN}",
                          "margin": round(oracle["score"] - ORACLE_MIN, 3),
                          "ok": oracle["score"] >= ORACLE_MIN and not oracle["errors"]})
        if oracle["score"] < ORACLE_MIN or oracle["errors"]:
            res.problems.append(f"oracle scored {oracle['score']:.2f} (< {ORACLE_MIN}) or had errors: "
                                + "; ".join(f"{c['name']}={c['score']:.3f} {c['message']}" for c in oracle["checks"]
                                            if c["status"] != "pass"))
        if progress:
            progress(f"{task_id}: do-nothing")
        nothing = score_solution(task_id, inst, None)
        res.nothing = nothing["score"]
        res.cases.append({"kind": "do-nothing", "name": "do-nothing", "score": nothing["score"],
                          "bound": f"<= {NOTHING_MAX}", "margin": round(NOTHING_MAX - nothing["score"], 3),
                          "ok": nothing["score"] <= NOTHING_MAX})
        if nothing["score"] > NOTHING_MAX:
            res.problems.append(f"do-nothing scored {nothing['score']:.2f} (> {NOTHING_MAX})")
        base = _by_name(oracle)
        mutant_dirs = sorted(p for p in (inst / "mutants").iterdir() if p.is_dir())
        if not mutant_dirs:
            res.problems.append("no mutants")
        for mdir in mutant_dirs:
            if progress:
                progress(f"{task_id}: mutant {mdir.name}")
            expect = set(json.loads((mdir / "expect.json").read_text())["lowers"])
            rep = score_solution(task_id, inst, mdir)
            got = _by_name(rep)
            lowered = {n for n in base if got[n]["score"] < base[n]["score"] - UNCHANGED_TOL
                       or (got[n]["status"] == "error") != (base[n]["status"] == "error")}
            raised = {n for n in base if got[n]["score"] > base[n]["score"] + UNCHANGED_TOL}
            ok = lowered == expect and not raised
            res.mutants[mdir.name] = {"score": rep["score"], "expected": sorted(expect),
                                      "lowered": sorted(lowered), "ok": ok}
            res.cases.append({"kind": "mutant", "name": mdir.name, "score": rep["score"],
                              "bound": f"lowers exactly {sorted(expect)}",
                              "margin": round(min((base[n]["score"] - got[n]["score"] for n in expect), default=0.0), 6),
                              "ok": ok})
            if not ok:
                res.problems.append(f"mutant {mdir.name}: expected to lower {sorted(expect)}, "
                                    f"lowered {sorted(lowered)}" + (f", raised {sorted(raised)}" if raised else ""))
        _run_cases(task_id, inst, seed, res, progress)
    res.ok = not res.problems
    res.seconds = round(time.perf_counter() - t0, 2)
    return res


def _run_cases(task_id: str, inst: Path, seed: int, res: SelftestResult,
               progress: Callable[[str], None] | None) -> None:
    """Exports (≥ their min) and gaming baselines (≤ their max) the synth registered."""
    from verifiers.synthcases import build_case, load_cases

    for case in load_cases(inst):
        if progress:
            progress(f"{task_id}: {case['kind']} {case['name']}")
        try:
            folder = build_case(inst, case, seed)
        except (RuntimeError, OSError, ValueError) as exc:
            res.cases.append({"kind": case["kind"], "name": case["name"], "score": None, "ok": False,
                              "error": str(exc)})
            res.problems.append(f"{case['kind']} {case['name']}: could not be built: {exc}")
            continue
        rep = score_solution(task_id, inst, folder)
        if case["kind"] == "export":
            margin, bound, ok = rep["score"] - case["min"], f">= {case['min']}", rep["score"] >= case["min"]
        else:
            margin, bound, ok = case["max"] - rep["score"], f"<= {case['max']}", rep["score"] <= case["max"]
        below = {c["name"]: round(c["score"], 3) for c in rep["checks"] if c["status"] != "pass"}
        floors = {f"{c['name']}.{k}": v for c in rep["checks"] for k, v in (c.get("evidence") or {}).items()
                  if k.startswith("export_floor")}
        res.cases.append({"kind": case["kind"], "name": case["name"], "score": rep["score"], "bound": bound,
                          "margin": round(margin, 3), "ok": ok, "checks_not_passing": below,
                          **({"export_floor": floors} if floors else {})})
        if not ok:
            res.problems.append(f"{case['kind']} {case['name']} scored {rep['score']:.2f} (bound {bound}): "
                                + "; ".join(f"{c['name']}={c['score']:.3f} {c['message']}" for c in rep["checks"]
                                            if c["status"] != "pass"))
