"""The writer named at close time when it exits between two /proc reads (a race seen in CI)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from monitor.audit import fanotify
from monitor.audit.fanotify import FanotifyWatcher

CP = {"pid": 42, "exe": "/usr/bin/cp", "cmdline": ["cp", "a", "output/b"], "comm": "cp", "ppid": 1, "cwd": "/w"}


def _watcher(snapshots: dict[int, dict[str, Any]]) -> FanotifyWatcher:
    """Only the state `_writer_info` reads (no fanotify group: this is about the /proc race)."""
    w = object.__new__(FanotifyWatcher)
    w._snapshots, w._snap_lock = dict(snapshots), threading.Lock()
    return w


@pytest.mark.parametrize("at_close", [
    {**CP, "cmdline": None},                                  # exe read, then the process was gone
    {**CP, "exe": None, "cmdline": None, "cwd": None},        # a zombie: only comm is left
])
def test_an_incomplete_close_read_takes_the_open_time_snapshot(monkeypatch, at_close):
    monkeypatch.setattr(fanotify, "process_info", lambda pid: dict(at_close))
    info, source = _watcher({42: CP})._writer_info(42)
    assert (info, source) == (CP, "open")


def test_a_whole_close_read_is_kept(monkeypatch):
    later = {**CP, "cwd": "/elsewhere"}
    monkeypatch.setattr(fanotify, "process_info", lambda pid: dict(later))
    assert _watcher({42: CP})._writer_info(42) == (later, "close")


def test_a_snapshot_of_another_image_is_not_taken(monkeypatch):
    """The pid's last open-time snapshot was of the image before exec (python): not this writer."""
    monkeypatch.setattr(fanotify, "process_info", lambda pid: {**CP, "cmdline": None})
    info, source = _watcher({42: {**CP, "exe": "/usr/bin/python3.11"}})._writer_info(42)
    assert source == "close" and info["exe"] == "/usr/bin/cp" and info["cmdline"] is None
