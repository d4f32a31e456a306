"""Hostile agent files: a synthetic instance's oracle work dir, with one attack laid over it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from verifiers.synth import overlay, synth_instance

ROOT = Path(__file__).resolve().parents[2]
#: hang guard only (a FIFO used to block the scorer forever); costs are printed and in the note
CHILD_TIMEOUT_S = 240


@pytest.fixture(scope="session")
def instances(tmp_path_factory):
    made: dict[str, Path] = {}

    def get(task: str) -> Path:
        if task not in made:
            made[task] = synth_instance(task, tmp_path_factory.mktemp("inst") / task)
        return made[task]

    return get


@pytest.fixture
def oracle_workdir(instances, tmp_path):
    def make(task: str) -> tuple[Path, Path]:
        inst = instances(task)
        work = tmp_path / "work"
        if work.exists():
            shutil.rmtree(work)
        overlay(inst / "workdir", inst / "oracle", work)
        return work, inst / "gt"

    return make


def score_in_child(task: str, work: Path, gt: Path) -> dict:
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "hostile" / "score_child.py"), task, str(work), str(gt)],
                          capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# the real-mosquitto fixtures of the run tests (tests/run/conftest.py shows how they start it)
from tests.run.conftest import mosquitto, tapping  # noqa: E402,F401
