"""`tally demo` end to end (short): ingest + embedded broker + PyAV publisher → scored T05 checks."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


@pytest.mark.slow
def test_demo_streams_measures_and_scores(tmp_path):
    r = subprocess.run([sys.executable, "-m", "monitor", "demo", "--plain", "--seconds", "6", "--no-selftest",
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "1920x1080 h264 30.00fps" in r.stdout and "aac 48000Hz 2ch" in r.stdout
    report = json.loads((tmp_path / "bundle" / "report.json").read_text())
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["encoder_at_ingest"]["status"] == "pass", checks["encoder_at_ingest"]
    assert checks["audio"]["status"] == "pass", checks["audio"]
    assert checks["duration"]["status"] == "fail"  # 6 s is not T05's 60 s: the check can fail
    assert (tmp_path / "bundle" / "report.html").stat().st_size > 10_000
    events = (tmp_path / "bundle" / "events.jsonl").read_text().splitlines()
    assert any('"kind":"unpublish"' in line for line in events)
