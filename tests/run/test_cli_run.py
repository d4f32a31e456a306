"""`tally run` as a process: SIGUSR1 ends it cleanly; SIGKILL leaves a bundle replay can still score."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

TASK = "R06.04.01.04-T01"


def _start(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen, Path]:
    work, gt, bundle = tmp_path / "work", tmp_path / "gt", tmp_path / "bundle"
    work.mkdir()
    gt.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "monitor.cli", "run", TASK, "--workdir", str(work), "--gt",
                             str(gt), "--bundle", str(bundle), "--no-mqtt", "--timeout", "60", "--json", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    events = bundle / "events.jsonl"
    while time.monotonic() < deadline:
        if events.exists() and b'"kind":"waiting"' in events.read_bytes():
            return proc, bundle
        if proc.poll() is not None:
            raise AssertionError(proc.stderr.read().decode())
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("run never reached waiting")


def _replay(bundle: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "monitor.cli", "replay", str(bundle), "--json"],
                          capture_output=True, timeout=60)


def test_sigusr1_ends_the_run_and_report_matches_replay(tmp_path):
    proc, bundle = _start(tmp_path)
    (tmp_path / "work" / "out.txt").write_text("written during the run")
    time.sleep(0.2)
    proc.send_signal(signal.SIGUSR1)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    report = json.loads(out)
    assert report["run"]["ended"] == "signal:SIGUSR1"
    assert report["run"]["artifacts"][0]["path"] == "out.txt"
    replay = _replay(bundle)
    assert replay.returncode == 0
    assert replay.stdout == (bundle / "report.json").read_bytes()


def test_done_file_ends_the_run_and_inotify_is_reported_weaker(tmp_path):
    proc, bundle = _start(tmp_path, "--audit", "inotify")
    (tmp_path / "work" / "x.txt").write_text("by the test")
    time.sleep(0.3)
    (bundle / "done").touch()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    report = json.loads(out)
    assert report["run"]["ended"] == "done-file"
    assert report["run"]["audit"]["mode"] == "inotify" and report["run"]["audit"]["attribution"] is False
    assert any("weaker evidence" in n for n in report["notes"])
    art = report["run"]["artifacts"][0]
    assert art["path"] == "x.txt" and art["writer_pid"] is None


@pytest.mark.slow
def test_sigkilled_run_still_replays_and_says_what_is_missing(tmp_path):
    proc, bundle = _start(tmp_path)
    (tmp_path / "work" / "partial.txt").write_text("half done")
    time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    events = bundle / "events.jsonl"
    recorded = events.read_bytes()
    with open(events, "ab") as fh:  # what a kill mid-write leaves behind
        fh.write(b'{"kind":"write","mono_ns":1,"pay')
    assert not (bundle / "report.json").exists()
    replay = _replay(bundle)
    assert replay.returncode == 0, replay.stderr.decode()
    report = json.loads(replay.stdout)
    run = report["run"]
    assert run["torn_last_line"] is True
    assert run["ended"] is None and run["clean"] is False
    assert any(m.startswith("end record") for m in run["missing"])
    assert "stop record of component audit" in run["missing"]
    assert any(m.startswith("artifact hashes") for m in run["missing"])
    assert run["event_count"] == recorded.count(b"\n")
    assert any("torn" in n for n in report["notes"])
    # Replaying the same killed bundle twice gives the same bytes.
    assert _replay(bundle).stdout == replay.stdout


def test_replay_of_garbage_is_one_line_error(tmp_path):
    (tmp_path / "events.jsonl").write_bytes(b"\x00garbage\n")
    res = _replay(tmp_path)
    assert res.returncode == 2
    assert res.stderr.decode().count("\n") == 1 and "Traceback" not in res.stderr.decode()


def test_obs_proxy_port_without_obs_or_out_of_range_is_one_line_error(tmp_path):
    for extra in (["--obs-proxy-port", "4456"], ["--obs", "ws://127.0.0.1:4455", "--obs-proxy-port", "70000"]):
        res = subprocess.run([sys.executable, "-m", "monitor.cli", "run", "R06.12.01.01-T17", "--workdir",
                              str(tmp_path), "--gt", str(tmp_path), *extra], capture_output=True, text=True,
                             timeout=60)
        assert res.returncode == 2 and "Traceback" not in res.stderr
        assert res.stderr.strip() == ("tally run: --obs-proxy-port needs --obs (the OBS it relays to) and a port "
                                      "in 1..65535")
