"""A bundle survives SIGKILL: the reader opens it and reports the torn last line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from monitor.bundle import Bundle, BundleError, BundleWriter, read_events
from monitor.events import EventFactory

WRITER = r"""
import sys, time
from pathlib import Path
from monitor.bundle import BundleWriter
from monitor.events import EventFactory
w = BundleWriter(Path(sys.argv[1]), {"task": "R06.07.01.03-T14"})
f = EventFactory()
print("ready", flush=True)
i = 0
while True:
    w.write_event(f.make("test", "tick", {"i": i, "pad": "x" * 200}))
    i += 1
"""


def test_sigkilled_writer_leaves_a_readable_bundle(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path / "b")], stdout=subprocess.PIPE)
    assert proc.stdout.readline().strip() == b"ready"
    time.sleep(0.5)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    bundle = Bundle.open(tmp_path / "b")
    assert bundle.manifest["task"] == "R06.07.01.03-T14"
    events = bundle.events
    assert len(events) > 100
    assert [e.payload["i"] for e in events] == list(range(len(events)))  # nothing lost before the tear
    assert not bundle.log.bad_lines


def test_torn_last_line_is_skipped_and_reported(tmp_path):
    w = BundleWriter(tmp_path)
    f = EventFactory()
    for i in range(3):
        w.write_event(f.make("t", "k", {"i": i}))
    w.close()
    with open(tmp_path / "events.jsonl", "ab") as fh:
        fh.write(b'{"seq":3,"mono_ns":1,"wal')
    log = read_events(tmp_path / "events.jsonl")
    assert len(log.events) == 3 and log.torn_last_line
    assert any("torn" in p for p in log.problems)


def test_corrupt_middle_line_is_reported_not_fatal(tmp_path):
    f = EventFactory()
    lines = [f.make("t", "k").to_json(), "garbage", f.make("t", "k").to_json()]
    (tmp_path / "events.jsonl").write_text("\n".join(lines) + "\n")
    log = read_events(tmp_path / "events.jsonl")
    assert len(log.events) == 2 and log.bad_lines == [2] and not log.torn_last_line


def test_manifest_and_report_are_atomic_json(tmp_path):
    w = BundleWriter(tmp_path, {"task": "x"})
    art = tmp_path / "captures" / "a.bin"
    art.write_bytes(b"abc")
    entry = w.add_artifact("captures/a.bin", art, {"pid": 1, "exe": "/bin/cp"})
    w.write_report({"score": 1})
    w.close()
    assert entry["sha256"] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    m = json.loads((tmp_path / "manifest.json").read_text())
    assert m["artifacts"]["captures/a.bin"]["size_bytes"] == 3
    assert Bundle.open(tmp_path).report == {"score": 1}


def test_open_rejects_non_bundles(tmp_path):
    with pytest.raises(BundleError):
        Bundle.open(tmp_path / "nope")
    with pytest.raises(BundleError):
        Bundle.open(tmp_path)
