"""T07 with nothing to measure: a recording of digital silence fails the measured checks, saying why.

The gain curve used to take the 95th percentile of an all-NaN array (no active window), which numpy
answers with a RuntimeWarning and NaN; the checks then failed through NaN comparisons with messages
about depth and duration. Now the missing sound is the agent's fail, named, and nothing warns.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifiers.synth import score_solution, synth_instance

T07 = "R06.12.01.01-T07"


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_silent_recording_fails_naming_the_silence(tmp_path: Path) -> None:
    inst = synth_instance(T07, tmp_path / "inst", seed=7)  # the self-test's instance (session cache)
    report = score_solution(T07, inst, inst / "mutants" / "silent_recording")
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["sidechain_configured"]["score"] == 1.0
    for name in ("ducking_depth", "recovery", "recording"):
        assert checks[name]["status"] == "fail", checks[name]
        assert checks[name]["score"] == 0.0
        assert "holds no sound" in checks[name]["message"], checks[name]["message"]
