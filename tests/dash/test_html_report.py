"""The HTML report of a T14 self-test instance renders in headless Chromium without console errors."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from monitor.html_report import render_html, write_html_report
from verifiers.scoring import score_task
from verifiers.synth import overlay, synth_instance

T14 = "R06.07.01.03-T14"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def mutant_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("html")
    inst = synth_instance(T14, root / "inst", seed=1)
    work = root / "work"
    overlay(inst / "workdir", inst / "mutants" / "late_3_frames", work)
    return score_task(T14, work, inst / "gt").to_dict()


def test_report_html_is_self_contained_and_plots_event_timing(mutant_report):
    page = render_html(mutant_report)
    assert page.count("<svg") >= 1  # the per-event onset plot
    for external in ('src="http', "src='http", 'href="http', "url(http", "<link", "<script"):
        assert external not in page, external
    assert "footstep 2" in page and "partial" in page


def test_incomplete_report_says_so(mutant_report):
    rep = dict(mutant_report, complete=False, unjudged_weight=25.0, status="incomplete",
               errors=[{"check": "correct_sound", "weight": 25, "message": "ground truth missing: events.json"}])
    page = render_html(rep)
    assert "Incomplete: 25 points could not be judged" in page and "ground truth missing" in page


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (the Makefile installs it)")
def test_report_opens_in_headless_chromium_without_console_errors(mutant_report, tmp_path):
    html = write_html_report(mutant_report, tmp_path / "report.html")
    shot = tmp_path / "report.png"
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
         f"--screenshot={shot}", "--window-size=1100,1400", html.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [ln for ln in proc.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
    assert not console, console
    assert shot.exists() and shot.stat().st_size > 20_000  # a blank page is ~5 kB
