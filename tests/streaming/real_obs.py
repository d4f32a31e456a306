"""Shared plumbing for the streaming family's real-OBS oracle tests (T02, T14, T05 + RTMP).

Each test starts and stops its own headless OBS 29 through monitor.obs.ObsInstance (which also keeps
the Qt/library paths `import cv2` sets out of OBS's environment). What is shared here: recording a
clip and waiting until OBS has really closed the file, laying OBS's saved config out the way the
task layout expects, and logging OBS events in the bundle's shape.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from monitor.obs import ObsInstance
from verifiers.evidence import ObsEvent, OutputStateData
from verifiers.evidence.base import Payload
from verifiers.evidence.obs import InputSyncOffsetData


class NoPreviewObs(ObsInstance):
    """ObsInstance with the main window's preview off.

    Drawing the preview costs OBS's graphics thread more than rendering a small canvas does (OBS's
    profiler on a 160x90 canvas: render_displays 6.1 ms median vs render_video 1.3 ms); on a busy
    2-core machine that is what turns into render stalls, and a stall moves an async source's audio
    against its video (see test_real_obs_t14). Recording is unaffected by the preview.
    """

    def write_config(self) -> None:
        super().write_config()
        ini = self.config_dir / "global.ini"
        text = ini.read_text()
        if "PreviewEnabled=true" not in text:  # the launcher's global.ini changed: say so, do not guess
            raise AssertionError("launcher's global.ini has no PreviewEnabled=true to turn off")
        ini.write_text(text.replace("PreviewEnabled=true", "PreviewEnabled=false"))


class EventLog:
    """OBS events as the observer records them (source obs, kind event, payload {type, data}: the
    typed constructors of verifiers.evidence.obs), fed by obsws_python's EventClient callbacks."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def _add(self, etype: str, data: Payload) -> None:
        self.events.append(ObsEvent.of(etype, data).event(time.monotonic_ns() / 1e6))

    def on_record_state_changed(self, d: Any) -> None:
        self._add("RecordStateChanged", OutputStateData(d.output_active, d.output_state, d.output_path))

    def on_input_audio_sync_offset_changed(self, d: Any) -> None:
        self._add("InputAudioSyncOffsetChanged", InputSyncOffsetData(d.input_name, d.input_audio_sync_offset))

    def types(self) -> list[str]:
        """The OBS event types recorded, in order."""
        return [e["payload"]["type"] for e in self.events]


#: the Weekly Stream collection before the script runs: one "Scratch" scene it removes at the end
SCRATCH_COLLECTION: dict[str, Any] = {
    "name": "Weekly Stream", "current_scene": "Scratch", "current_program_scene": "Scratch",
    "scene_order": [{"name": "Scratch"}],
    "sources": [{"id": "scene", "versioned_id": "scene", "name": "Scratch",
                 "settings": {"items": [], "id_counter": 0, "custom_size": False}}]}


def weekly_basic(out_w_px: int = 640, out_h_px: int = 360, fps: int = 10) -> dict[str, dict[str, str]]:
    """basic.ini for the Weekly Stream profile: 1920x1080 canvas (what T01/T17 check), a small
    output by default (llvmpipe renders less; nothing checks the output size)."""
    return {"Video": {"BaseCX": "1920", "BaseCY": "1080", "OutputCX": str(out_w_px), "OutputCY": str(out_h_px),
                      "FPSType": "1", "FPSInt": str(fps)}}


def weekly_obs(password: str) -> ObsInstance:
    """A headless OBS holding the Scratch collection and the Weekly profile, debug log on, with
    `password` on its websocket: where T17's script (and the tests and bench that play it) runs."""
    return ObsInstance(collection=SCRATCH_COLLECTION, profile={"basic.ini": weekly_basic()}, profile_name="Weekly",
                       ws_password=password)


def record(client: Any, seconds: float) -> Path:
    """Record `seconds` with OBS; return the file once OBS reports the output inactive (closing OBS
    while its output still stops can hang OBS's shutdown)."""
    client.start_record()
    time.sleep(seconds)
    path = Path(client.stop_record().output_path)
    for _ in range(40):
        if not client.get_record_status().output_active:
            break
        time.sleep(0.25)
    time.sleep(0.5)
    return path


def wait_record_stopped(log: EventLog, stops: int, timeout_s: float = 15.0) -> None:
    """Wait until OBS has sent RecordStateChanged OUTPUT_STOPPED `stops` times in this session.

    GetRecordStatus turns inactive before OBS has finished the file; a StartRecord sent before the
    OUTPUT_STOPPED event is refused by OBS or leaves the previous file incomplete."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done = [e for e in log.events if e["payload"]["type"] == "RecordStateChanged"
                and e["payload"]["data"].get("outputState") == "OBS_WEBSOCKET_OUTPUT_STOPPED"]
        if len(done) >= stops:
            return
        time.sleep(0.1)
    raise AssertionError(f"OBS sent no RecordStateChanged OUTPUT_STOPPED #{stops} in {timeout_s} s: {log.types()}")


def save_obs_config(o: ObsInstance, real: Path, collection_file: str | None = None) -> Path:
    """Copy what OBS saved (collection, profile, global.ini) to real/obs-studio after o.stop();
    returns that directory. collection_file names the JSON under basic/scenes (default: OBS's own)."""
    dest = real / "obs-studio"
    scenes = dest / "basic" / "scenes"
    scenes.mkdir(parents=True, exist_ok=True)
    if o.collection_path.exists():
        shutil.copy2(o.collection_path, scenes / (collection_file or o.collection_path.name))
    shutil.copytree(o.profile_dir, dest / "basic" / "profiles" / o.profile_dir.name)
    shutil.copy2(o.config_dir / "global.ini", dest / "global.ini")
    return dest


def build_weekly_stream(c: Any, workdir: Path) -> None:
    """T17's oracle script: the Weekly Stream scenes built over obs-websocket with an
    obsws-python ReqClient `c` (also T01's collection, built the way an agent's script would)."""
    for s in ("Starting Soon", "Live", "BRB"):
        c.create_scene(s)
    c.create_input("Starting Soon", "Background", "image_source", {"file": str(workdir / "bg" / "starting.png")}, True)
    c.create_input("Starting Soon", "Countdown", "text_ft2_source_v2", {"text": "Starting in 05:00"}, True)
    c.create_input("Live", "Display Capture", "xshm_input", {"screen": 0}, True)
    c.create_input("Live", "Cam", "v4l2_input", {"device_id": "/dev/video0"}, True)
    c.create_input("Live", "Frame", "image_source", {"file": str(workdir / "overlay" / "frame.png")}, True)
    c.create_input("BRB", "BRB Background", "image_source", {"file": str(workdir / "bg" / "brb.png")}, True)
    c.create_input("BRB", "Mic", "pulse_input_capture", {"device_id": "default"}, True)
    c.set_input_mute("Mic", True)
    cam = c.get_scene_item_id("Live", "Cam").scene_item_id
    c.set_scene_item_transform("Live", cam, {
        "positionX": 1416.0, "positionY": 786.0, "alignment": 5, "boundsType": "OBS_BOUNDS_SCALE_INNER",
        "boundsWidth": 480.0, "boundsHeight": 270.0, "boundsAlignment": 0})
    c.set_current_program_scene("Starting Soon")
    c.remove_scene("Scratch")
    c.set_current_scene_transition("Fade")
    c.set_current_scene_transition_duration(300)
