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


def with_stinger_scenes(collection: dict[str, Any], stinger_path: str) -> dict[str, Any]:
    """Add T16's shape: Live (Ctrl+Alt+L) and BRB (Ctrl+Alt+B, transition override Stinger),
    a Stinger transition on `stinger_path` (point 600 ms), Fade 300 ms as the default."""
    def scene(name: str, key: str, override: str | None = None) -> dict[str, Any]:
        s = {"id": "scene", "versioned_id": "scene", "name": name,
             "hotkeys": {"OBSBasic.SelectScene": [{"control": True, "alt": True, "key": key}]},
             "settings": {"items": [], "id_counter": 0, "custom_size": False}}
        if override:
            s["private_settings"] = {"transition": override, "transition_duration": 300}
        return s
    out = dict(collection)
    out["sources"] = [*collection["sources"], scene("Live", "OBS_KEY_L"), scene("BRB", "OBS_KEY_B", "Stinger")]
    out["scene_order"] = [*collection["scene_order"], {"name": "Live"}, {"name": "BRB"}]
    out["transitions"] = [{"name": "Stinger", "id": "obs_stinger_transition",
                           "settings": {"path": stinger_path, "transition_point": 600}}]
    out["current_transition"] = "Fade"
    out["transition_duration"] = 300
    return out
