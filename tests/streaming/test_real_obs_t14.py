"""Real-OBS evidence for R06.12.01.01-T14: clap test, Mic sync offset +120 ms, sync_after.mkv, in OBS 29.

The clapper feed is two ffmpeg_sources started together at OBS load: "Cam" plays the clapper picture
and "Mic" the claps, 120 ms early (t14_av_offset.clap_test(-120), four periods so nothing loops),
the stand-in for the harness's camera + microphone with the GT's hidden delay. OBS records a
"before" clip, the sync offset is set over obs-websocket (as the oracle does), OBS records
sync_after.mkv. OBS's own RecordStateChanged / InputAudioSyncOffsetChanged events, captured with
obsws-python's EventClient, are the live evidence for before_test.

Asserted: offset_set and before_test pass; the scorer finds every clap in OBS's sync_after.mkv; the
shift OBS applied between the recordings is measured. Not asserted: residual_offset (<= 10 ms). Two
independently started media sources carry their own A/V skew (20-60 ms measured here), which adds to
the GT's 120 ms, so a correct +120 ms fix leaves that skew. A single A+V ffmpeg_source has no
inter-source skew but its A/V alignment moved by 0-60 ms from one restart to the next (residual
4 ms once, 55-62 ms three times), so neither stand-in gives a deterministic <= 10 ms here.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from monitor.obs import ObsInstance
from verifiers.scoring import score_task
from verifiers.synth import InstanceWriter, load_solution_events, overlay, synth_instance
from verifiers.synthkit.streaming_media import write_media

obs = pytest.importorskip("obsws_python")
needs_obs = pytest.mark.skipif(shutil.which("obs") is None or shutil.which("Xvfb") is None,
                               reason="obs-studio and xvfb needed")

TASK = "R06.12.01.01-T14"
RECORD_S = 9.6  # the looping 8.5 s clip: every clap closes inside any 9.6 s window


def drop_cv2_qt_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """`import cv2` points QT_QPA_PLATFORM_PLUGIN_PATH at its own Qt plugins; OBS inherits the
    environment and then aborts at start ("Could not load the Qt platform plugin xcb")."""
    import os

    for key in ("QT_QPA_PLATFORM_PLUGIN_PATH", "QT_QPA_FONTDIR"):
        monkeypatch.delenv(key, raising=False)
    ld = [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p and "cv2" not in p]
    monkeypatch.setenv("LD_LIBRARY_PATH", ":".join(ld))


class EventLog:
    """OBS events as the bundle records them (source obs, kind, mono_ns, camelCase payload)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def on_record_state_changed(self, d: Any) -> None:
        self.events.append({"source": "obs", "kind": "RecordStateChanged", "mono_ns": time.monotonic_ns(),
                            "payload": {"outputActive": d.output_active, "outputState": d.output_state,
                                        "outputPath": d.output_path}})

    def on_input_audio_sync_offset_changed(self, d: Any) -> None:
        self.events.append({"source": "obs", "kind": "InputAudioSyncOffsetChanged", "mono_ns": time.monotonic_ns(),
                            "payload": {"inputName": d.input_name, "inputAudioSyncOffset": d.input_audio_sync_offset}})


def _record(c: Any, seconds: float) -> Path:
    c.start_record()
    time.sleep(seconds)
    path = Path(c.stop_record().output_path)
    for _ in range(40):
        if not c.get_record_status().output_active:
            break
        time.sleep(0.25)
    time.sleep(0.5)
    return path


def _media(name: str, path: Path) -> dict[str, Any]:
    return {"id": "ffmpeg_source", "versioned_id": "ffmpeg_source", "name": name,
            "settings": {"is_local_file": True, "local_file": str(path), "looping": True,
                         "restart_on_activate": False, "close_when_inactive": False}}


def run_in_obs(cam_clip: Path, mic_wav: Path, fps: int, real: Path) -> list[dict[str, Any]]:
    rec_dir = real / "recordings"
    rec_dir.mkdir(parents=True)
    basic = {"Output": {"Mode": "Advanced"},
             "AdvOut": {"RecType": "Standard", "RecFilePath": str(rec_dir), "RecFormat": "mkv",
                        "RecEncoder": "obs_x264", "RecTracks": "1"},
             "Video": {"BaseCX": "160", "BaseCY": "90", "OutputCX": "160", "OutputCY": "90",
                       "FPSType": "1", "FPSInt": str(fps)}}
    profile = {"basic.ini": basic, "recordEncoder.json": {"rate_control": "CRF", "crf": 18, "preset": "ultrafast"}}
    coll = {"name": "Stream", "current_scene": "Live", "current_program_scene": "Live",
            "scene_order": [{"name": "Live"}],
            "sources": [_media("Cam", cam_clip), _media("Mic", mic_wav),
                        {"id": "scene", "versioned_id": "scene", "name": "Live",
                         "settings": {"items": [{"name": "Cam", "id": 1, "visible": True},
                                                {"name": "Mic", "id": 2, "visible": True}],
                                      "id_counter": 2, "custom_size": False}}]}
    log = EventLog()
    with ObsInstance(collection=coll, profile=profile, profile_name="Stream", ws_password="t14-pw") as o:
        c = obs.ReqClient(host="127.0.0.1", port=o.ws_port, password="t14-pw", timeout=10)
        ev = obs.EventClient(host="127.0.0.1", port=o.ws_port, password="t14-pw")
        ev.callback.register([log.on_record_state_changed, log.on_input_audio_sync_offset_changed])
        try:
            time.sleep(0.5)
            _record(c, RECORD_S)                              # the clap test before the fix
            # audio 120 ms later meets the late video. OBS 29 ignores a single programmatic change of a
            # running source's sync offset (obsproject/obs-studio#7912); a second, different value a
            # moment later takes effect (what touching the spin box in the GUI amounts to)
            c.set_input_audio_sync_offset("Mic", 119)
            time.sleep(0.3)
            c.set_input_audio_sync_offset("Mic", 120)
            time.sleep(2.0)
            after = _record(c, RECORD_S)
            time.sleep(0.5)
        finally:
            ev.disconnect()
            c.disconnect()
        assert o.stop() == 0
        dest = real / "obs-studio"
        (dest / "basic" / "scenes").mkdir(parents=True)
        shutil.copy2(o.collection_path, dest / "basic" / "scenes" / "Stream.json")
        shutil.copytree(o.profile_dir, dest / "basic" / "profiles" / "Stream")
        shutil.copy2(o.config_dir / "global.ini", dest / "global.ini")
    after.rename(rec_dir / "sync_after.mkv")  # the task's file name; OBS names files by date
    return log.events


def _mean_offset_ms(path: Path, gt: dict[str, Any]) -> float:
    """Mean (audio clap - visual close) in ms, measured the scorer's way."""
    import numpy as np

    from verifiers.tasks.streaming.t14_av_offset import audio_claps, visual_closes

    vis, aud = visual_closes(path, gt), audio_claps(path)
    pairs = [(a - min(vis, key=lambda v, a=a: abs(v - a))) * 1000 for a in aud]
    return float(np.mean([d for d in pairs if abs(d) < 400]))


@pytest.mark.obs
@pytest.mark.slow
@needs_obs
def test_t14_real_obs_clap_test_and_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """offset_set and before_test pass on what OBS saved and emitted; the +120 ms OBS applied is
    measured in its recordings. residual_offset (<= 10 ms) is not asserted: see the report below."""
    import json

    import numpy as np
    import soundfile as sf

    from verifiers.tasks.streaming.t14_av_offset import FPS, clap_test

    inst = synth_instance(TASK, tmp_path / "inst", seed=1)
    drop_cv2_qt_env(monkeypatch)
    gt = json.loads((inst / "gt" / "t14.json").read_text())
    vid, aud = clap_test(-float(gt["injected_delay_ms"]))  # the GT's planted offset: video late
    # four periods (34 s): neither source loops during the run, so their start skew stays constant
    vid, aud = vid * 4, np.tile(aud, 4)
    cam = write_media(tmp_path / "cam.mkv", vid, FPS)
    mic = tmp_path / "mic.wav"
    sf.write(str(mic), aud, 48_000)
    real = tmp_path / "real"
    events = run_in_obs(cam, mic, FPS, real)
    kinds = [e["kind"] for e in events]
    assert "InputAudioSyncOffsetChanged" in kinds and kinds.count("RecordStateChanged") >= 4, kinds
    InstanceWriter.write_events(real, events)
    work = tmp_path / "work"
    overlay(inst / "workdir", real, work)
    rep = score_task(TASK, work, inst / "gt", load_solution_events(real)).to_dict()
    checks = {c["name"]: c for c in rep["checks"]}
    detail = {n: (c["score"], c["message"], c["evidence"]) for n, c in checks.items()}
    assert checks["offset_set"]["status"] == "pass", detail       # from the collection OBS saved
    assert checks["before_test"]["status"] == "pass", detail      # from OBS's own events
    recs = real / "recordings"
    (before,) = [p for p in recs.glob("*.mkv") if p.name != "sync_after.mkv"]
    shift_ms = _mean_offset_ms(recs / "sync_after.mkv", gt) - _mean_offset_ms(before, gt)
    # OBS really delayed the Mic by the sync offset set (a change OBS ignored would give 0). The shift
    # is not exact: the two sources' pictures land on render ticks and their skew moved by up to
    # ~25 ms between recordings (shifts measured: 120.0, 119.7, 121.0, 123.8, 103.3, 94.9 ms)
    assert 60 <= shift_ms <= gt["injected_delay_ms"] + 1000 / FPS, (shift_ms, detail)
    # residual_offset: the scorer finds every clap in OBS's sync_after.mkv, but the residual left is
    # the stand-in feed's own skew between two independently started media sources (20-55 ms
    # measured here), not something the agent's correction controls, so its score is not asserted
    assert len(checks["residual_offset"]["evidence"]["offsets_ms"]) >= 5, detail
    print(f"T14 real OBS: shift {shift_ms:.1f} ms, residual {detail['residual_offset'][2]['mean_abs_ms']:.1f} ms")
