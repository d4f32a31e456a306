"""`tally sweep report --html` over the 200-item reference sweep: the JSON holds every aggregate,
the HTML draws them and opens in headless Chromium without console errors."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from monitor.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def reported(items_and_reference):
    _jsonl, ref = items_and_reference
    assert main(["sweep", "report", str(ref), "--html", "--pass-line", "99"]) == 0
    return ref


def test_report_json_has_every_aggregate(reported):
    rep = json.loads((reported / "report.json").read_text())
    assert rep["rows"] == 200 and rep["overall"]["n"] == 200
    assert set(rep["by_family"]) == {"streaming", "sound", "grading"} | ({"shortform"} & set(rep["by_family"]))
    # grading is in the first round only (agent A): the paired comparison has the other three tasks
    assert set(rep["by_label"]["agent"]) == {"A", "B"} and rep["paired"]["tasks"] == 3
    for stats in rep["by_task"].values():
        assert stats["pass_at_k"]["1"] == pytest.approx(stats["pass_rate"])
        assert stats["ci95"][0] <= stats["mean"] <= stats["ci95"][1]
    # every mutant lowers a check, so each task's heat map row has a check that sometimes fails
    assert all(max(checks.values()) > 0 for checks in rep["check_failures"].values())
    again = reported / "again"
    again.mkdir(exist_ok=True)
    shutil.copy(reported / "results.jsonl", again / "results.jsonl")
    assert main(["sweep", "report", str(again)]) == 0
    assert json.loads((again / "report.json").read_text()) == rep  # seeded: the same numbers every time


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (the Makefile installs it)")
def test_report_html_opens_in_headless_chromium(reported, tmp_path):
    page = (reported / "report.html").read_text()
    assert page.count("<svg") >= 4
    for external in ('src="http', "src='http", 'href="http', "<link", "<script"):
        assert external not in page
    shot = tmp_path / "sweep.png"
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
         f"--screenshot={shot}", "--window-size=1200,2400", (reported / "report.html").as_uri()],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [ln for ln in proc.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
    assert not console, console
    assert shot.stat().st_size > 50_000
