"""R06.12.01.01-T05 with a real oracle: headless OBS 29 configured as the task asks (Advanced
output, x264 CBR 6000 kbit/s, keyframe 2 s, 1080p30, AAC 160 kbit/s) streams 60 s into tally's
ingest during a real run; the verifier scores OBS's saved profile and the ingest's measurements."""

from __future__ import annotations

import asyncio
import shutil

import pytest
from rich.console import Console

from monitor.demo import run_demo

pytestmark = [pytest.mark.obs, pytest.mark.slow]


@pytest.mark.skipif(shutil.which("obs") is None, reason="obs-studio not installed (the Makefile installs it)")
def test_real_obs_stream_is_a_t05_oracle(tmp_path):
    res = asyncio.run(run_demo(tmp_path, 61.0, tui=False, hold_s=0, console=Console(quiet=True), use_obs=True))
    report = res["report"]
    checks = {c["name"]: c for c in report["checks"]}
    assert report["score"] >= 99, {n: (c["status"], c["message"], c["evidence"]) for n, c in checks.items()}
    ev = checks["encoder_at_ingest"]["evidence"]
    assert ev["width"] == 1920 and ev["height"] == 1080
