"""`tally demo` end to end (short): ingest + embedded broker + a publisher (PyAV or a real OBS) → scored T05."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


@pytest.mark.slow
def test_demo_streams_measures_and_scores(tmp_path):
    r = subprocess.run([sys.executable, "-m", "monitor", "demo", "--plain", "--seconds", "6", "--no-selftest",
                        "--no-obs", "--out", str(tmp_path)], capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "1920x1080 h264 30.00fps" in r.stdout and "aac 48000Hz 2ch" in r.stdout
    report = json.loads((tmp_path / "bundle" / "report.json").read_text())
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["encoder_at_ingest"]["status"] == "pass", checks["encoder_at_ingest"]
    assert checks["audio"]["status"] == "pass", checks["audio"]
    assert checks["duration"]["status"] == "fail"  # 6 s is not T05's 60 s: the check can fail
    # no OBS, so no OBS profile: unjudged (error, not applicable), never the agent's fail
    assert checks["server_config"]["status"] == "error", checks["server_config"]
    assert "not applicable" in checks["server_config"]["message"]
    assert report["status"] == "incomplete" and report["unjudged_weight"] == checks["server_config"]["weight"]
    assert "HTML report:" in r.stdout
    assert (tmp_path / "bundle" / "report.html").stat().st_size > 10_000
    events = (tmp_path / "bundle" / "events.jsonl").read_text().splitlines()
    assert any('"kind":"unpublish"' in line for line in events)


def test_demo_falls_back_to_pyav_when_obs_cannot_start(tmp_path, monkeypatch):
    """Default demo: a real OBS when installed; if it cannot start, the PyAV stand-in with a message.

    (The OBS path itself, run_demo(use_obs=True) scored >= 99, is the real-OBS T05 test in
    tests/streaming/test_t05_real_obs.py.)"""
    from rich.console import Console

    from monitor import demo
    from monitor.obs.launcher import ObsLaunchError

    calls = []

    async def fake_run_demo(root, seconds, tui, hold_s, console, use_obs):
        calls.append((root, use_obs))
        if use_obs:
            raise ObsLaunchError("no display")
        return {"report": {"checks": [], "score": 0.0, "status": "incomplete", "errors": []},
                "bundle": str(root / "bundle"), "run_id": "r"}

    monkeypatch.setattr(demo, "run_demo", fake_run_demo)
    monkeypatch.setattr(demo, "obs_installed", lambda: True)
    monkeypatch.setattr(demo, "print_report", lambda report, console: None)
    monkeypatch.setattr(demo, "Console", lambda: Console(quiet=True))
    assert demo.main(tmp_path, 1.0, False, 0.0, selftest=False, use_obs=None) == 0
    assert [u for _r, u in calls] == [True, False] and calls[1][0] == tmp_path / "pyav"
    monkeypatch.setattr(demo, "obs_installed", lambda: False)
    calls.clear()
    assert demo.main(tmp_path, 1.0, False, 0.0, selftest=False, use_obs=None) == 0
    assert [u for _r, u in calls] == [False]  # no OBS installed: straight to the stand-in
