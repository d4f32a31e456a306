"""Each short-form verifier proves itself on a seed-fixed synthetic (miniature) instance.

selftest_task scores the oracle (>= 99), the untouched work dir (<= 5) and every mutant, which must
lower exactly the checks its expect.json names.
"""

from __future__ import annotations

import pytest

from verifiers.synth import selftest_task

FULL = [
    "R06.04.01.04-T02",
    "R06.04.01.04-T10",
    "R06.04.01.04-T19",
    "R06.04.01.04-T09",
    "R06.04.01.04-T17",
    "R06.04.01.04-T04",
]


@pytest.mark.parametrize("task_id", FULL)
def test_selftest_passes(task_id):
    res = selftest_task(task_id)
    assert res.ok, res.problems
    assert res.oracle >= 99 and res.nothing <= 5
