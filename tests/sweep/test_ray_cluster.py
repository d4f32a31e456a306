"""The Ray path on a real 2-node cluster on this machine: a head and a second node with its own
temp dir (`ray start --address`), one CPU each. The 200-item sweep is scheduled across both
(node ids in results.jsonl) and its rows equal the process pool's.

The nodes run `ray start --block` in a process group of their own; stopping that group is
`ray stop` for exactly these two nodes (a bare `ray stop` would also stop anyone else's Ray)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import monitor
from monitor.broker import free_port
from monitor.cli import main
from monitor.sweep.results import latest_rows, read_rows, stable
from tests.sweep.conftest import N_ITEMS

ray = pytest.importorskip("ray")
RAY = str(Path(sys.executable).with_name("ray"))


def _start(args: list[str], log: Path) -> subprocess.Popen:
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled",
           "PYTHONPATH": str(Path(monitor.__file__).parent.parent)}  # workers import this tally
    with open(log, "w") as fh:
        return subprocess.Popen([RAY, "start", *args, "--num-cpus=1", "--node-ip-address=127.0.0.1",
                                 "--disable-usage-stats", "--block"], stdout=fh, stderr=subprocess.STDOUT,
                                env=env, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the node's process group (raylet, GCS, workers), then SIGKILL what is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _wait_nodes(address: str, n: int, procs: list[subprocess.Popen], logs: list[Path]) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        for p, log in zip(procs, logs, strict=True):
            assert p.poll() is None, log.read_text()[-3000:]
        out = subprocess.run([RAY, "status", f"--address={address}"], capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.count("node_") >= n:
            return
        time.sleep(1)
    raise TimeoutError(f"{n} Ray nodes did not come up: {out.stdout[-2000:]} {out.stderr[-2000:]}")


@pytest.mark.slow
def test_ray_sweep_across_two_nodes_equals_the_pool(items_and_reference, tmp_path, monkeypatch):
    # one auth mode for the nodes and the driver: a token file left by an earlier local ray.init
    # (~/.ray/auth_token) must not turn auth on for one side only; the cluster is loopback-only
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    jsonl, ref = items_and_reference
    port = free_port()
    address = f"127.0.0.1:{port}"
    logs = [tmp_path / "head.log", tmp_path / "worker.log"]
    # short temp dirs: Ray's socket paths under them must fit AF_UNIX's 107 bytes
    temp = Path(tempfile.mkdtemp(prefix="tray-", dir="/tmp"))
    procs = [_start(["--head", f"--port={port}", f"--temp-dir={temp / 'h'}", "--include-dashboard=false"], logs[0])]
    try:
        time.sleep(3)
        procs.append(_start([f"--address={address}", f"--temp-dir={temp / 'w'}"], logs[1]))
        _wait_nodes(address, 2, procs, logs)
        out = tmp_path / "ray-sweep"
        assert main(["sweep", "score", str(jsonl), "--out", str(out), "--ray", address]) == 0
    finally:
        for p in reversed(procs):
            _stop(p)
        shutil.rmtree(temp, ignore_errors=True)
    rows = latest_rows(read_rows(out / "results.jsonl"))
    assert len(rows) == N_ITEMS and all(r["status"] == "scored" for r in rows)
    nodes = {r["exec"]["node_id"] for r in rows}
    assert len(nodes) == 2 and all(r["exec"]["backend"] == "ray" for r in rows)
    want = {r["key_id"]: stable(r) for r in latest_rows(read_rows(ref / "results.jsonl"))}
    assert {r["key_id"]: stable(r) for r in rows} == want
