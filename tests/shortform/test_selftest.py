"""Each short-form verifier proves itself on a seed-fixed synthetic (miniature) instance.

selftest_task scores the oracle (>= 99), the untouched work dir (<= 5) and every mutant, which must
lower exactly the checks its expect.json names. Tasks whose scoring runs OCR on many frames or
decodes several files per solution take 25-70 s here and are marked slow (they still run in CI).
"""

from __future__ import annotations

import pytest

from verifiers.synth import selftest_task

FAST = [
    "R06.04.01.04-T02",
    "R06.04.01.04-T17",
    "R06.04.01.04-T16",
    "R06.04.01.04-T05",
    "R06.04.01.04-T15",
]
SLOW = [
    "R06.04.01.04-T12",
    "R06.04.01.04-T09",
    "R06.04.01.04-T04",
    "R06.04.01.04-T07",
    "R06.04.01.04-T10",
    "R06.04.01.04-T19",
    "R06.04.01.04-T01",
    "R06.04.01.04-T14",  # ~29 s CPU with its 8 export/baseline cases and near misses (OCR per case)
]


def _check(task_id: str) -> None:
    res = selftest_task(task_id)
    assert res.ok, res.problems
    assert res.oracle >= 99 and res.nothing <= 5
    assert res.mutants and all(m["ok"] for m in res.mutants.values())


@pytest.mark.parametrize("task_id", FAST)
def test_selftest_passes(task_id):
    _check(task_id)


@pytest.mark.slow
@pytest.mark.parametrize("task_id", SLOW)
def test_selftest_passes_slow(task_id):
    _check(task_id)
