"""`tally scenario`: exit codes, one-line errors naming the file, timeline and JSON output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from monitor.cli import main

MARKS = """
name: marks only
steps:
  - {id: a, at_ms: 20, mark: first}
  - {id: b, after: a, delay_ms: 30, mark: second}
expect:
  - {id: impossible, program_scene: Nowhere, after: a, within_ms: 50}
"""


def test_bad_file_exit_2_names_file_and_step(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("steps:\n  - {id: k, at_ms: 0, key: ctrl+hyper+1}\n")
    assert main(["scenario", "run", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert "bad.yaml: step 1 (k): unknown modifier 'hyper'" in err
    assert main(["scenario", "check", str(tmp_path / "missing.yaml")]) == 2
    assert "missing.yaml: no such file" in capsys.readouterr().err


def test_check_lists_shipped_files(capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted(str(p) for p in (Path(__file__).resolve().parents[2] / "scenarios" / "files").glob("*.yaml"))
    assert main(["scenario", "check", *files]) == 0
    out = capsys.readouterr().out
    assert out.count(": ok (") == len(files)


def test_run_prints_timeline_and_fails_unmet_expectation(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    f = tmp_path / "marks.yaml"
    f.write_text(MARKS)
    assert main(["scenario", "run", str(f), "--json"]) == 1      # no OBS: the expectation cannot pass
    data = json.loads(capsys.readouterr().out)
    acts = {a["step"]: a for a in data["actions"]}
    assert acts["a"]["scheduled_ms"] == pytest.approx(20.0, abs=0.01)
    assert acts["b"]["status"] == "ok" and acts["b"]["actual_ms"] >= acts["a"]["actual_ms"] + 30
    (res,) = data["expectations"]
    assert res["id"] == "impossible" and not res["passed"] and "not seen" in res["detail"]
    assert main(["scenario", "run", str(f)]) == 1
    out = capsys.readouterr().out
    assert "timeline" in out and "FAIL" in out and "first" in out


def test_unreachable_obs_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    f = tmp_path / "marks.yaml"
    f.write_text(MARKS)
    assert main(["scenario", "run", str(f), "--obs", "http://x"]) == 2
    assert "ws://127.0.0.1:4455" in capsys.readouterr().err
    assert main(["scenario", "run", str(f), "--obs", "ws://127.0.0.1:9", "--obs-wait-s", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no answer from OBS at ws://127.0.0.1:9 within 1 s (cannot connect" in err and "\n" not in err
