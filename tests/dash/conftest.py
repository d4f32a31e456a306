"""A recorded bundle for dashboard tests, built with the real bundle writer and event shapes
the producers emit (rtmp stats snapshots, obs-websocket events, scenario records, meters)."""

from __future__ import annotations

from pathlib import Path

import pytest

from monitor.bundle import BundleWriter
from monitor.events import EventFactory


def write_demo_bundle(root: Path) -> Path:
    w = BundleWriter(root, {"task": "R06.12.01.01-T05", "run_id": "run-1"})
    f = EventFactory()
    t = 1_000_000_000

    def ev(source: str, kind: str, payload: dict, dt_s: float = 0.1) -> None:
        nonlocal t
        t += int(dt_s * 1e9)
        w.write_event(f.make(source, kind, payload, mono_ns=t))

    ev("run", "phase", {"task": "R06.12.01.01-T05", "run": "run-1", "phase": "running"})
    ev("rtmp", "publish", {"app": "live", "key": "tally", "client": "127.0.0.1:50000"})
    ev("obs", "connected", {"obs_websocket_version": "5.1.0"})
    ev("obs", "event", {"type": "CurrentProgramSceneChanged", "data": {"sceneName": "Live"}})
    ev("obs", "event", {"type": "InputMuteStateChanged", "data": {"inputName": "Mic", "inputMuted": True}})
    ev("obs", "event", {"type": "StreamStateChanged", "data": {"outputActive": True}})
    for i in range(30):
        ev("rtmp", "stats", {"app": "live", "key": "tally", "duration_s": i + 1.0,
                             "video": {"codec": "h264", "width": 1920, "height": 1080, "fps": 30.0,
                                       "bitrate_bps": 6_000_000 + 50_000 * (i % 5),
                                       "keyframe_interval_s": {"last": 2.0, "mean": 2.0, "min": 2.0, "max": 2.0}},
                             "audio": {"codec": "aac", "sample_rate_hz": 48000, "channels": 2}}, 1.0)
        ev("probe.audio", "meter", {"track": "program", "momentary_lufs": -16.5 - (i % 3), "short_term_lufs": -16.0,
                                    "integrated_lufs": -16.2, "true_peak_dbtp": [-1.5, -1.7], "target_lufs": -16.0})
    ev("scenario", "action", {"step": "s1", "action": "key", "arg": "ctrl+alt+1", "lateness_ms": 0.8, "status": "ok"})
    ev("scenario", "expectation", {"id": "e1", "kind": "program_scene", "passed": True, "latency_ms": 42.0,
                                   "detail": "Live after 42 ms"})
    ev("rtmp", "unpublish", {"app": "live", "key": "tally", "reason": "deleteStream"})
    w.write_report({"schema": "tally.report/1", "task": "R06.12.01.01-T05", "score": 85.0, "status": "complete",
                    "complete": True, "unjudged_weight": 0,
                    "checks": [{"name": "server_config", "weight": 20, "score": 1.0, "status": "pass"},
                               {"name": "encoder_at_ingest", "weight": 40, "score": 0.625, "status": "partial"},
                               {"name": "audio", "weight": 25, "score": 1.0, "status": "pass"},
                               {"name": "duration", "weight": 15, "score": 1.0, "status": "pass"}]})
    w.close()
    return root


@pytest.fixture
def demo_bundle(tmp_path) -> Path:
    return write_demo_bundle(tmp_path / "bundle")
