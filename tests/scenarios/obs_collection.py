"""The test collection: Gameplay / Just Chatting / Desktop with Ctrl+Alt+1/2/3, a Privacy scene,
and a Mic (media source, no file) whose mute and unmute are both bound to Ctrl+Alt+M (a toggle:
OBS fires whichever half of the hotkey pair applies)."""

from __future__ import annotations

from typing import Any


def _scene(name: str, key: str | None) -> dict[str, Any]:
    hotkeys = {"OBSBasic.SelectScene": [{"control": True, "alt": True, "key": key}] if key else []}
    # Mic is an item of every scene: OBS drops sources that no scene references when it loads.
    items = [{"name": "Mic", "source_uuid": "", "visible": True, "locked": False, "id": 1,
              "pos": {"x": 0.0, "y": 0.0}, "scale": {"x": 1.0, "y": 1.0}, "rot": 0.0, "align": 5,
              "bounds_type": 0, "bounds": {"x": 0.0, "y": 0.0}, "bounds_align": 0,
              "crop_left": 0, "crop_top": 0, "crop_right": 0, "crop_bottom": 0}]
    return {"id": "scene", "versioned_id": "scene", "name": name, "hotkeys": hotkeys,
            "settings": {"items": items, "id_counter": 1, "custom_size": False}}


def hotkey_collection(start_scene: str = "Gameplay") -> dict[str, Any]:
    chord = [{"control": True, "alt": True, "key": "OBS_KEY_M"}]
    mic = {"id": "ffmpeg_source", "versioned_id": "ffmpeg_source", "name": "Mic", "settings": {},
           "muted": False, "volume": 1.0, "mixers": 255,
           "hotkeys": {"libobs.mute": chord, "libobs.unmute": chord, "libobs.push-to-mute": [],
                       "libobs.push-to-talk": []}}
    scenes = [_scene("Gameplay", "OBS_KEY_1"), _scene("Just Chatting", "OBS_KEY_2"),
              _scene("Desktop", "OBS_KEY_3"), _scene("Privacy", None)]
    return {"name": "Scenario Hotkeys", "current_scene": start_scene, "current_program_scene": start_scene,
            "scene_order": [{"name": s["name"]} for s in scenes], "sources": [*scenes, mic]}
