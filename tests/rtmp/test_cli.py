"""`tally ingest` as a user runs it: events on stdout, API up, SIGINT closes recordings."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.rtmp.helpers import FFMPEG, EncodeSpec, decode_errors, encode, free_port

pytestmark = pytest.mark.timeout(120)


def _tally(*args: str) -> list[str]:
    return [sys.executable, "-m", "monitor.cli", "ingest", *args]


def test_ingest_cli_end_to_end(tmp_path: Path, encode_cache: Path) -> None:
    src = encode(EncodeSpec(seconds=3), encode_cache)
    rtmp_port, api_port = free_port(), free_port()
    proc = subprocess.Popen(_tally("--listen", f"127.0.0.1:{rtmp_port}", "--record", str(tmp_path / "rec"),
                                   "--api", f"127.0.0.1:{api_port}", "--key", "cli", "--quiet-stats"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{api_port}/api/streams", timeout=1).read()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise AssertionError("ingest did not come up") from None
                time.sleep(0.2)
        # A refused key, then the allowed one; ffmpeg stops itself after 3 s.
        bad = subprocess.run([FFMPEG, "-v", "error", "-re", "-i", str(src), "-c", "copy", "-f", "flv",
                              f"rtmp://127.0.0.1:{rtmp_port}/live/nope"], capture_output=True, timeout=30)
        assert bad.returncode != 0
        ok = subprocess.run([FFMPEG, "-v", "error", "-re", "-i", str(src), "-c", "copy", "-f", "flv",
                             f"rtmp://127.0.0.1:{rtmp_port}/live/cli"], capture_output=True, timeout=60)
        assert ok.returncode == 0, ok.stderr
        streams = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{api_port}/api/streams", timeout=5).read())
        metrics = urllib.request.urlopen(f"http://127.0.0.1:{api_port}/metrics", timeout=5).read().decode()
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    events = [json.loads(line) for line in out.splitlines() if line.strip()]
    kinds = [e["kind"] for e in events]
    assert all(e["source"] == "rtmp" for e in events)
    assert "stats" not in kinds
    for kind in ("listening", "api_listening", "connect", "publish_rejected", "publish", "metadata",
                 "sequence_header", "unpublish"):
        assert kind in kinds, kind
    [unp] = [e["payload"] for e in events if e["kind"] == "unpublish"]
    assert decode_errors(Path(unp["recording"]["path"])) == ""
    [s] = streams["streams"]
    assert set(s) == {"app", "key", "state", "client", "started_at", "duration_s", "bytes", "recording", "health",
                      "video", "audio"}
    assert set(s["video"]) == {"codec", "profile", "width", "height", "fps", "bitrate_bps", "keyframe_interval_s"}
    assert set(s["audio"]) == {"codec", "sample_rate_hz", "channels", "bitrate_bps"}
    assert (s["state"], s["video"]["width"], s["audio"]["sample_rate_hz"]) == ("ended", 640, 48000)
    assert "tally_rtmp_publish_rejected_total 1" in metrics
    sample = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? [-+0-9.eE]+(Inf)?$')
    for line in metrics.splitlines():
        assert line.startswith(("# HELP ", "# TYPE ")) or sample.match(line), line


@pytest.mark.parametrize("args, message", [
    (["--listen", "127.0.0.1:notaport", "--record", "R", "--allow-any"], "port must be a number"),
    (["--listen", "127.0.0.1:0", "--record", "R", "--key", "../x"], "unusable"),
])
def test_ingest_cli_bad_args(tmp_path: Path, args: list[str], message: str) -> None:
    args = [a.replace("R", str(tmp_path / "r")) if a == "R" else a for a in args]
    res = subprocess.run(_tally(*args), capture_output=True, text=True, timeout=30)
    assert res.returncode == 2
    assert message in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_ingest_cli_port_in_use(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        res = subprocess.run(_tally("--listen", f"127.0.0.1:{port}", "--record", str(tmp_path), "--allow-any"),
                             capture_output=True, text=True, timeout=30)
    assert res.returncode == 2 and "cannot listen" in res.stderr and "Traceback" not in res.stderr
