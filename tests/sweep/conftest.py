"""Synthetic instances of cheap tasks (one per family where scoring takes < 0.2 s), made once per
session, and JSONL sweep inputs built from their oracles and mutants."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from verifiers.synth import overlay, synth_instance

#: one cheap task per family (scoring each solution takes well under a second)
CHEAP_TASKS = ("R06.12.01.01-T01", "R06.12.01.01-T12", "R06.07.01.03-T05", "R06.04.02.02-T01")
SLOW_TASKS = ("R06.04.02.02-T01",)
N_ITEMS = 200


def solutions(inst: Path) -> list[tuple[str, Path | None]]:
    out: list[tuple[str, Path | None]] = [("oracle", inst / "oracle"), ("nothing", None)]
    out += [(f"mutant:{m.name}", m) for m in sorted((inst / "mutants").iterdir()) if m.is_dir()]
    return out


def materialize(inst: Path, solution: Path | None, dest: Path) -> tuple[Path, Path | None]:
    """A work dir as the agent would have left it, and the solution's events file (if any)."""
    if solution is None:
        shutil.copytree(inst / "workdir", dest)
    else:
        overlay(inst / "workdir", solution, dest)
    events = solution / "events.jsonl" if solution is not None and (solution / "events.jsonl").is_file() else None
    return dest, events


@pytest.fixture(scope="session")
def instances(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("instances")
    return {tid: synth_instance(tid, root / tid, seed=0) for tid in CHEAP_TASKS}


@pytest.fixture(scope="session")
def workdirs(instances, tmp_path_factory) -> list[dict]:
    """One spec per (task, solution): task, workdir, gt, events, and the solution's name."""
    root = tmp_path_factory.mktemp("workdirs")
    out = []
    for tid, inst in instances.items():
        for name, sol in solutions(inst):
            wd, ev = materialize(inst, sol, root / tid / name.replace(":", "_"))
            spec = {"task": tid, "workdir": str(wd), "gt": str(inst / "gt"), "solution": name}
            if ev is not None:
                spec["events"] = str(ev)
            out.append(spec)
    return out


def write_jsonl(path: Path, workdirs: list[dict], n: int, agents: tuple[str, ...] = ("A", "B")) -> Path:
    """n items cycling over the work dirs; agent and repeat labels keep repeats apart. The one
    slower task (grading, ~0.2 s an item) is in the first round only, so 200 items stay cheap."""
    lines: list[str] = []
    rep = 0
    while len(lines) < n:
        for spec in workdirs:
            if len(lines) == n:
                break
            if rep > 0 and spec["task"] in SLOW_TASKS:
                continue
            item = {k: spec[k] for k in ("task", "workdir", "gt", "events") if k in spec}
            item["labels"] = {"agent": agents[rep % len(agents)], "repeat": str(rep // len(agents)),
                              "solution": spec["solution"]}
            lines.append(json.dumps(item))
        rep += 1
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def items_and_reference(workdirs, tmp_path_factory):
    """200 JSONL items and an uninterrupted pool sweep of them (the reference every backend must match)."""
    from monitor.cli import main

    root = tmp_path_factory.mktemp("sweep")
    jsonl = write_jsonl(root / "items.jsonl", workdirs, N_ITEMS)
    ref = root / "reference"
    assert main(["sweep", "score", str(jsonl), "--out", str(ref), "--workers", "2"]) == 0
    return jsonl, ref
