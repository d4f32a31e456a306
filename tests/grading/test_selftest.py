"""Each grading-family verifier proves itself on a seed-fixed synthetic instance.

selftest_task scores the oracle (>= 99), the untouched work dir (<= 5) and every mutant, which must
lower exactly the checks its expect.json names (near misses at a seed line included: just inside lowers
nothing, just outside lowers its check), then the cases of verifiers.synthcases: the oracle re-exported
by ffmpeg (H.264 CRF 18/23, ProRes 422 for .mov) >= 95 and gaming baselines (unedited copy, unedited
H.264, black, first frame repeated, another task's oracle) <= 5. Shots are 2 s of 256x144 at 12 fps.
"""

from __future__ import annotations

import pytest

from verifiers.synth import selftest_task

#: each takes 20-40 s on an idle core (export and baseline cases encode and score 8 more renders)
pytestmark = pytest.mark.slow

TASKS = [
    "R06.04.02.02-T01",
    "R06.04.02.02-T05",
    "R06.04.02.02-T03",
    "R06.04.02.02-T11",
    "R06.04.02.02-T13",
    "R06.04.02.02-T19",
    "R06.04.02.02-T07",
    "R06.04.02.02-T08",
    "R06.04.02.02-T12",
    "R06.04.02.02-T16",
    "R06.04.02.02-T17",
    "R06.04.02.02-T02",
    "R06.04.02.02-T06",
    "R06.04.02.02-T09",
    "R06.04.02.02-T18",
    "R06.04.02.02-T04",
    "R06.04.02.02-T10",
    "R06.04.02.02-T20",
    "R06.04.02.02-T14",
    "R06.04.02.02-T15",
]


@pytest.mark.parametrize("task_id", TASKS)
def test_selftest(task_id: str) -> None:
    res = selftest_task(task_id, seed=7)
    assert res.ok, res.problems
    assert res.oracle is not None and res.oracle >= 99
    assert res.nothing is not None and res.nothing <= 5
    kinds = {c["kind"] for c in res.cases}
    assert "baseline" in kinds and (task_id == "R06.04.02.02-T14" or "export" in kinds)
