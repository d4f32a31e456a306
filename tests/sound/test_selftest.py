"""Each sound-family verifier proves itself on a seed-fixed synthetic instance.

selftest_task scores the oracle (>= 99), the untouched work dir (<= 5) and every mutant, which must
lower exactly the checks its expect.json names (near misses at a seed line included: just inside lowers
nothing, just outside lowers its check), then the cases of verifiers.synthcases.audio_cases: the oracle
re-exported by ffmpeg (44.1 kHz 16-bit TPDF 2 ms late, or 48 kHz 24-bit 2 ms late where the seed fixes
the rate) >= 95 and gaming baselines (silence, white noise, envelope-shaped noise with the header, the
MP3 named .wav, the unedited input, another task's oracle) <= their bound; T06 its CSV as a marker
export writes it and gaming lists, T16/T19 every file of the delivery by the same recipes. Instances
are a few seconds of audio.
"""

from __future__ import annotations

import pytest

from verifiers.synth import selftest_task

TASKS = [
    "R06.07.01.03-T01",
    "R06.07.01.03-T02",
    "R06.07.01.03-T03",
    "R06.07.01.03-T04",
    "R06.07.01.03-T05",
    "R06.07.01.03-T06",
    "R06.07.01.03-T07",
    "R06.07.01.03-T08",
    "R06.07.01.03-T09",
    "R06.07.01.03-T10",
    "R06.07.01.03-T11",
    "R06.07.01.03-T12",
    "R06.07.01.03-T13",
    "R06.07.01.03-T14",
    "R06.07.01.03-T15",
    "R06.07.01.03-T16",
    "R06.07.01.03-T17",
    "R06.07.01.03-T18",
    "R06.07.01.03-T19",
    "R06.07.01.03-T20",
]



#: over ~20 s each on this machine (NCC identification over many onsets; T16's pitch-compensated bank)
SLOW = {"R06.07.01.03-T04", "R06.07.01.03-T16"}


@pytest.mark.parametrize("task_id", [pytest.param(t, marks=pytest.mark.slow) if t in SLOW else t for t in TASKS])
def test_selftest(task_id: str) -> None:
    res = selftest_task(task_id, seed=7)
    assert res.ok, res.problems
    assert res.oracle is not None and res.oracle >= 99
    assert res.nothing is not None and res.nothing <= 5
    assert len(res.mutants) >= 3
    kinds = {c["kind"] for c in res.cases}
    # every sound task, T06's CSV and T16/T19's mix with folders of files included
    assert {"export", "baseline"} <= kinds, kinds
