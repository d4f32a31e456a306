"""Aitum Vertical's files as the plugin and OBS 31+ save them, for T11's synthetic instances.

Shapes from the real files in tests/fixtures/real/ (aitum-vertical/*, obs/32.0/*; read by
verifiers.apps.vertical): the plugin's config.json holds one object per vertical canvas with no
scenes; the scenes are in the OBS collection, on the OBS canvas "Aitum Vertical" (`canvases[]`
`{"info": {name, uuid, private, flags}}`, flags 14 as saved), each carrying that canvas's
`canvas_uuid`, and left out of `scene_order`. OBS 31+ also writes top-level `version: 2` and
`resolution`, a `uuid` per source, `source_uuid` per item and relative coordinates per item
(`pos_rel = (pos - canvas centre) / (canvas height / 2)`, `bounds_rel = bounds / (height / 2)`,
checked on every item of the real 31/32 files). Not written: `scale_rel`/`scale_ref` (they
depend on each source's own size, which a synthetic source has not) — without them libobs loads
`pos`, which agrees with `pos_rel` here.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from verifiers.apps.obs.collection import MAIN_CANVAS_UUID
from verifiers.apps.vertical import CANVAS_NAME
from verifiers.synthkit import obs_synth as O

VERTICAL_CANVAS_UUID = "c37dd37f-0000-4c1d-9c77-000000000011"
OBS32_VERSION = (32 << 24) | 2          # prev_ver of OBS 32.0.2 (the real files' sandro_Untitled.json)
MAIN_PX = (1920, 1080)
VERTICAL_PX = (1080, 1920)


def vertical_config(current_scene: str, record_path: str, size_px: tuple[int, int] = VERTICAL_PX) -> dict[str, Any]:
    """plugin_config/vertical-canvas/config.json: every key the plugin (OBS 32 era) saves, with
    its defaults as in the real configs, and no scenes."""
    hotkeys: dict[str, Any] = {k: [] for k in (
        "start_backtrack_hotkey", "stop_backtrack_hotkey", "start_virtual_cam_hotkey", "stop_virtual_cam_hotkey",
        "start_record_hotkey", "stop_record_hotkey", "start_stream_hotkey", "stop_stream_hotkey", "pause_hotkey",
        "unpause_hotkey", "chapter_hotkey", "split_hotkey")}
    canvas = {"current_scene": current_scene, "grid_mode": False, "width": size_px[0], "height": size_px[1],
              "partner_block": 0, "preview_disabled": False, "virtual_cam_warned": False,
              "streaming_video_bitrate": 6000, "streaming_match_main": False, "record_video_bitrate": 0,
              "max_size_mb": 0, "max_time_sec": 0, "recording_match_main": False, "audio_bitrate": 0,
              "backtrack": False, "backtrack_seconds": 30, "backtrack_path": "", "backtrack_hotkeys":
              {"ReplayBuffer.Save": []}, "virtual_camera_mode": 0, "stream_outputs": [],
              "stream_delay_enabled": False, "stream_delay_duration": 0, "stream_delay_preserve": False,
              "stream_advanced_settings": False, "stream_audio_track": 0, "stream_encoder": "",
              "stream_encoder_settings": {}, "record_path": record_path, "record_advanced_settings": False,
              "filename_formatting": "", "file_format": "mkv", "record_audio_tracks": 1, "record_encoder": "",
              "record_encoder_settings": {}, **hotkeys, "transitions": [], "transition": "Fade"}
    return {"canvas": [canvas]}


def _uuid(name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"tally-synth/{name}"))


def _relative(it: dict[str, Any], canvas_px: tuple[int, int]) -> None:
    half_h = canvas_px[1] / 2.0
    it["pos_rel"] = {"x": (it["pos"]["x"] - canvas_px[0] / 2.0) / half_h, "y": (it["pos"]["y"] - half_h) / half_h}
    it["bounds_rel"] = {"x": it["bounds"]["x"] / half_h, "y": it["bounds"]["y"] / half_h}
    it["source_uuid"] = _uuid(it["name"])


def vertical_collection(name: str = "Untitled", scene: str = "V-Live", *, on_main_canvas: bool = False) -> dict[str, Any]:
    """An OBS 32 collection: scene Main (1920x1080) and `scene` on the Aitum Vertical canvas (Cam
    crop on top, gameplay band, Captions at the bottom). on_main_canvas: the same scene made as an
    ordinary main-canvas scene instead (what a user gets without the plugin's dock)."""
    inputs = [O.source("Cam", "v4l2_input", {"device_id": "/dev/video0"}),
              O.source("Game Capture", "xcomposite_input", {}),
              O.source("Captions", "text_ft2_source", {"text": "captions go here"}, versioned_id="text_ft2_source_v2")]
    main = O.scene("Main", [O.item("Game Capture", 1, bounds=MAIN_PX, bounds_type=2),
                            O.item("Cam", 2, pos=(1416, 786), bounds=(480, 270), bounds_type=2)])
    vert = O.scene(scene, [O.item("Cam", 1, bounds=(1080, 810), bounds_type=1, crop=(420, 135, 420, 135)),
                           O.item("Game Capture", 2, pos=(0, 810), bounds=(1080, 800), bounds_type=3),
                           O.item("Captions", 3, pos=(60, 1700))])
    coll = O.collection(name, [main, vert] if on_main_canvas else [main], inputs)
    if not on_main_canvas:
        coll["sources"].append(vert)
    for s in coll["sources"]:
        s["prev_ver"] = OBS32_VERSION
        s["uuid"] = _uuid(s["name"])
        if s["id"] == "scene":
            on_vertical = s is vert and not on_main_canvas
            s["canvas_uuid"] = VERTICAL_CANVAS_UUID if on_vertical else MAIN_CANVAS_UUID
            for it in s["settings"]["items"]:
                _relative(it, VERTICAL_PX if on_vertical else MAIN_PX)
    coll.update(version=2, resolution={"x": MAIN_PX[0], "y": MAIN_PX[1]},
                canvases=[{"info": {"name": CANVAS_NAME, "uuid": VERTICAL_CANVAS_UUID, "private": False,
                                    "flags": 14}}])
    return coll


def write_obs31_collection(config_dir: Path, coll: dict[str, Any]) -> Path:
    """obs-studio/basic/scenes/<name>.json pretty-printed in insertion order, as OBS 31+ writes it."""
    path = Path(config_dir) / "basic" / "scenes" / O.collection_file_name(coll["name"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(coll, indent=4), encoding="utf-8")
    return path
