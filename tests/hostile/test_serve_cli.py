"""`tally serve` as a process: after a 1.2 MB command it still answers, SIGTERM ends it promptly,
and a restart on the same --state answers too (the poisoned outbox used to make it deaf again)."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time

import pytest

from monitor.mqtt import topics
from tests.hostile.conftest import tapping
from tests.hostile.test_daemon import NODE, _probe, _send, _until


def _serve(mosquitto, tmp_path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "monitor.cli", "serve", "--mqtt",
                             f"mqtt://127.0.0.1:{mosquitto.port}", "--node", NODE, "--runs", str(tmp_path / "runs"),
                             "--state", str(tmp_path / "state"), "--ingest", "127.0.0.1:0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


@pytest.mark.slow
@pytest.mark.broker
async def test_serve_survives_a_huge_command_and_restarts_on_the_same_state(mosquitto, tmp_path):
    timings = {}
    for life in ("first", "restarted"):
        proc = _serve(mosquitto, tmp_path)
        try:
            async with tapping(mosquitto.address, [f"tally/{NODE}/#"]) as tap:
                await _until(lambda: any(s.get("state") == "idle" for s in tap.json_on(topics.status(NODE))), 180)
                await asyncio.sleep(0.5)
                if life == "first":
                    await _send(mosquitto.address, json.dumps({"cmd": "done", "k" * 1_200_000: 1}).encode())
                timings[f"{life}: next command answered (s)"] = await _probe(mosquitto.address, tap, f"{life}-probe")
            t0 = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            await asyncio.to_thread(proc.wait, 60)
            timings[f"{life}: SIGTERM to exit (s)"] = time.monotonic() - t0
            assert proc.returncode == 0, proc.stderr.read().decode()[-2000:]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    print("\n" + "\n".join(f"{k}: {v:.2f}" for k, v in timings.items()))
