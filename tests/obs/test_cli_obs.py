"""`tally obs` subcommands: parse/diff/snapshot errors are one line, launch closes OBS on Ctrl-C."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from monitor.obs import free_tcp_port
from tests.app_health import AppHealth, retry_if_app_lagged
from tests.proc_tree import alive, descendants, kill_tree, wait_gone

REF = Path("/work/shared/reference/obs29")
TALLY = [sys.executable, "-m", "monitor.cli"]


def run(*args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TALLY, *args], capture_output=True, text=True, timeout=60, **kw)  # type: ignore[call-overload]


@pytest.mark.skipif(not REF.exists(), reason="reference OBS files not present")
def test_parse_reference() -> None:
    r = run("obs", "parse", str(REF / "scenes" / "Test.json"), "--profile-dir", str(REF / "profiles" / "Test"),
            "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    main = next(s for s in out["scenes"] if s["name"] == "Main")
    cam = next(i for i in main["items_bottom_to_top"] if i["source"] == "Cam")
    assert cam["rect"] == [100.0, 786.0, 480.0, 270.0]
    assert main["hotkeys"] == ["Ctrl+Alt+1"]
    assert out["profile"]["recording"]["tracks"] == [1, 2]


def test_bad_inputs_are_one_line_errors(tmp_path: Path) -> None:
    bad = tmp_path / "Weekly.json"
    bad.write_text('{"sources": [')
    for args in (("obs", "parse", str(bad)), ("obs", "diff", str(bad), str(bad)),
                 ("obs", "snapshot", "--port", str(free_tcp_port()), "--env-file", str(tmp_path / "none"))):
        r = run(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert str(bad) in run("obs", "parse", str(bad)).stderr


@pytest.mark.obs
@pytest.mark.skipif(shutil.which("obs") is None or shutil.which("Xvfb") is None, reason="needs obs and Xvfb")
def test_launch_then_ctrl_c_saves(tmp_path: Path) -> None:
    coll = {"name": "Cli Test", "scene_order": [{"name": "Only"}],
            "sources": [{"id": "scene", "versioned_id": "scene", "name": "Only", "settings": {"items": []}}]}
    (tmp_path / "c.json").write_text(json.dumps(coll))

    def attempt() -> tuple[tuple[subprocess.Popen, str, list[str], Path], AppHealth]:
        proc, err, lines, config_dir = _launch_and_interrupt(tmp_path)
        # OBS 29 sometimes hangs in its own shutdown (the launcher's stop() notes it); the launcher then
        # kills it after its grace time and says so: OBS's failure, not the CLI's
        hung = "was killed" in err
        return (proc, err, lines, config_dir), AppHealth("OBS", (err.strip().splitlines()[-1],) if hung else ())

    proc, err, lines, config_dir = retry_if_app_lagged(attempt, lambda r: r[0].returncode == 0)
    assert proc.returncode == 0, err
    saved = json.loads((config_dir / "basic" / "scenes" / "Cli Test.json").read_text())
    assert saved["name"] == "Cli Test"
    assert "generated" in "".join(lines) and "password: generated, in" in "".join(lines)
    home = config_dir.parent.parent
    assert (home / "ws-password").stat().st_mode & 0o077 == 0
    shutil.rmtree(home)


#: the launcher's own bound on Ctrl-C: OBS's stop grace (20 s) + SIGKILL and reap (5 s) + window
#: manager and Xvfb (5 s each, SIGKILL after) + margin; waiting less blamed the CLI for OBS's hang
LAUNCHER_STOP_BOUND_S = 60


def _launch_and_interrupt(tmp_path: Path) -> tuple[subprocess.Popen, str, list[str], Path]:
    """`tally obs launch`, then Ctrl-C once it is ready: (process, stderr, stdout lines, config dir)."""
    # started with SIGINT ignored, as a non-interactive shell starts a background job (CI runners,
    # `tally obs launch &` in a script): Ctrl-C must still close OBS (it once hung forever there)
    proc = subprocess.Popen([*TALLY, "obs", "launch", "--collection", str(tmp_path / "c.json"), "--keep-home",
                             "--env-file", str(tmp_path / "none")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line:
                break
            lines.append(line)
            if line.startswith("Ctrl-C"):
                break
        assert any(line.startswith("websocket: ws://127.0.0.1:") for line in lines), lines
        config_dir = Path(next(line.split(": ", 1)[1].strip() for line in lines if line.startswith("config dir")))
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=LAUNCHER_STOP_BOUND_S)
    finally:
        if proc.poll() is None:
            kill_tree(proc)  # OBS and Xvfb too: they run in their own sessions
    return proc, err, lines, config_dir


#: the launcher's watchdog sends SIGTERM at once, SIGKILL 2 s later (monitor/obs/watchdog.py)
ORPHANS_GONE_WITHIN_S = 5.0


@pytest.mark.obs
@pytest.mark.skipif(shutil.which("obs") is None or shutil.which("Xvfb") is None, reason="needs obs and Xvfb")
def test_sigkilled_launch_leaves_no_obs_or_xvfb(tmp_path: Path) -> None:
    """kill -9 of `tally obs launch` (no handler can run) still ends its OBS and Xvfb."""
    (tmp_path / "c.json").write_text(json.dumps({"name": "Orphan", "scene_order": [], "sources": []}))
    proc = subprocess.Popen([*TALLY, "obs", "launch", "--collection", str(tmp_path / "c.json"),
                             "--env-file", str(tmp_path / "none")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    kids: list[int] = []
    try:
        lines = [proc.stdout.readline() for _ in range(4)]  # type: ignore[union-attr]
        assert lines[-1].startswith("Ctrl-C"), (lines, proc.poll())
        kids = [p for p in descendants(proc.pid) if alive(p)]
        names = {Path(f"/proc/{p}/exe").resolve().name for p in kids}
        assert {"obs", "Xvfb"} <= names, names
        proc.kill()
        proc.wait(5)
        assert wait_gone(kids, ORPHANS_GONE_WITHIN_S) == [], "OBS/Xvfb outlived the SIGKILLed launcher"
    finally:
        kill_tree(proc, also=kids)
