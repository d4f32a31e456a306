"""Write OBS config files the way OBS 29 saves them, for synthetic streaming-task instances.

The shapes (every key OBS 29.0 writes for a source, scene item, filter and the collection's top
level; compact sorted JSON; basic.ini sections) follow ../shared/reference/obs29/, so oracles built
here are read by the same parser (verifiers.apps.obs) as collections a real OBS saved. Builders
return plain dicts; tests and mutants edit them before writing.
"""

from __future__ import annotations

import configparser
import io
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

OBS29_VERSION = 486539266  # prev_ver OBS 29.0.2 writes


def _base(name: str, kind: str, versioned_id: str | None, settings: Mapping[str, Any] | None,
          mixers: int, hotkeys: Mapping[str, Any] | None) -> dict[str, Any]:
    return {
        "balance": 0.5, "deinterlace_field_order": 0, "deinterlace_mode": 0, "enabled": True, "flags": 0,
        "hotkeys": dict(hotkeys or {}), "id": kind, "mixers": mixers, "monitoring_type": 0, "muted": False,
        "name": name, "prev_ver": OBS29_VERSION, "private_settings": {}, "push-to-mute": False,
        "push-to-mute-delay": 0, "push-to-talk": False, "push-to-talk-delay": 0,
        "settings": dict(settings or {}), "sync": 0, "versioned_id": versioned_id or kind, "volume": 1.0,
    }


def filter_(name: str, kind: str, settings: Mapping[str, Any] | None = None,
            versioned_id: str | None = None, enabled: bool = True) -> dict[str, Any]:
    """A filter entry as OBS 29 nests it in a source's `filters` (id unversioned, versioned_id exact)."""
    vid = versioned_id or kind
    base_id = vid[:-3] if vid.endswith(("_v2", "_v3")) else vid
    f = _base(name, base_id, vid, settings, 63, {})
    f["enabled"] = enabled
    return f


def source(name: str, kind: str, settings: Mapping[str, Any] | None = None, *,
           versioned_id: str | None = None, filters: Iterable[dict[str, Any]] = (),
           hotkeys: Mapping[str, Any] | None = None, muted: bool = False, volume: float = 1.0,
           mixers: int | None = None, sync_ns: int = 0, monitoring_type: int = 0,
           private_settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """An input source. Audio-capable kinds default to all six tracks (mixers 63), video-only to 0."""
    audio = kind in ("pulse_input_capture", "pulse_output_capture", "ffmpeg_source", "wasapi_input_capture",
                     "wasapi_output_capture", "coreaudio_input_capture", "browser_source")
    s = _base(name, kind, versioned_id, settings, 63 if mixers is None and audio else (mixers or 0), hotkeys)
    if audio and hotkeys is None:
        s["hotkeys"] = {"libobs.mute": [], "libobs.push-to-mute": [], "libobs.push-to-talk": [],
                        "libobs.unmute": []}
    fl = list(filters)
    if fl:
        s["filters"] = fl
    s.update(muted=muted, volume=volume, sync=int(sync_ns), monitoring_type=monitoring_type)
    if private_settings:
        s["private_settings"] = dict(private_settings)
    return s


def item(name: str, item_id: int, *, pos: tuple[float, float] = (0.0, 0.0), scale: tuple[float, float] = (1.0, 1.0),
         bounds: tuple[float, float] | None = None, bounds_type: int = 0, bounds_align: int = 0, align: int = 5,
         rot: float = 0.0, visible: bool = True, crop: tuple[int, int, int, int] = (0, 0, 0, 0)) -> dict[str, Any]:
    """A scene item (layer). crop is (left, top, right, bottom)."""
    bx, by = bounds or (0.0, 0.0)
    return {
        "align": align, "blend_method": "default", "blend_type": "normal",
        "bounds": {"x": float(bx), "y": float(by)}, "bounds_align": bounds_align, "bounds_type": bounds_type,
        "crop_bottom": crop[3], "crop_left": crop[0], "crop_right": crop[2], "crop_top": crop[1],
        "group_item_backup": False, "hide_transition": {"duration": 0}, "id": item_id, "locked": False,
        "name": name, "pos": {"x": float(pos[0]), "y": float(pos[1])}, "private_settings": {},
        "rot": float(rot), "scale": {"x": float(scale[0]), "y": float(scale[1])}, "scale_filter": "disable",
        "show_transition": {"duration": 0}, "visible": visible,
    }


def scene(name: str, items: list[dict[str, Any]], *, select_hotkey: list[dict[str, Any]] | None = None,
          transition: str | None = None, transition_duration_ms: int | None = None) -> dict[str, Any]:
    """A scene source; items bottom-first. Item ids are renumbered 1.. when they collide."""
    hk: dict[str, Any] = {"OBSBasic.SelectScene": list(select_hotkey or [])}
    for it in items:
        hk[f"libobs.hide_scene_item.{it['name']}"] = []
        hk[f"libobs.show_scene_item.{it['name']}"] = []
    s = _base(name, "scene", "scene", {"custom_size": False, "id_counter": len(items), "items": items}, 0, hk)
    if transition:
        s["private_settings"] = {"transition": transition, "transition_duration": int(transition_duration_ms or 300)}
    return s


def binding(key: str, *, ctrl: bool = False, alt: bool = False, shift: bool = False) -> dict[str, Any]:
    """{"key": "OBS_KEY_1", "control": true, "alt": true} as OBS writes it (absent modifiers left out)."""
    b: dict[str, Any] = {"key": key if key.startswith("OBS_KEY_") else f"OBS_KEY_{key.upper()}"}
    if alt:
        b["alt"] = True
    if ctrl:
        b["control"] = True
    if shift:
        b["shift"] = True
    return b


def transition(name: str, kind: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    return {"id": kind, "name": name, "settings": dict(settings)}


def collection(name: str, scenes: list[dict[str, Any]], inputs: list[dict[str, Any]], *,
               transitions: list[dict[str, Any]] | None = None, current_transition: str = "Fade",
               transition_duration_ms: int = 300, current_scene: str | None = None,
               modules: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A whole collection: sources = inputs then scenes (OBS keeps creation order; either is read)."""
    first = current_scene or (scenes[0]["name"] if scenes else "")
    mods: dict[str, Any] = {
        "auto-scene-switcher": {"active": False, "interval": 300, "non_matching_scene": "",
                                "switch_if_not_matching": False, "switches": []},
        "output-timer": {"autoStartRecordTimer": False, "autoStartStreamTimer": False, "pauseRecordTimer": False,
                         "recordTimerHours": 0, "recordTimerMinutes": 0, "recordTimerSeconds": 0,
                         "streamTimerHours": 0, "streamTimerMinutes": 0, "streamTimerSeconds": 0},
        "scripts-tool": [],
    }
    mods.update(modules or {})
    return {
        "current_program_scene": first, "current_scene": first, "current_transition": current_transition,
        "groups": [], "modules": mods, "name": name, "preview_locked": False, "quick_transitions": [],
        "saved_projectors": [], "scaling_enabled": False, "scaling_level": 0, "scaling_off_x": 0.0,
        "scaling_off_y": 0.0, "scene_order": [{"name": s["name"]} for s in scenes],
        "sources": [*inputs, *scenes], "transition_duration": transition_duration_ms,
        "transitions": list(transitions or []),
    }


def find_source(coll: dict[str, Any], name: str) -> dict[str, Any]:
    """The source dict named `name` (for mutants to edit in place)."""
    for s in coll["sources"]:
        if s["name"] == name:
            return s
    raise KeyError(name)


def find_item(coll: dict[str, Any], scene_name: str, source_name: str) -> dict[str, Any]:
    for it in find_source(coll, scene_name)["settings"]["items"]:
        if it["name"] == source_name:
            return it
    raise KeyError(f"{scene_name}/{source_name}")


def collection_file_name(name: str) -> str:
    """OBS names the file after the collection with spaces as underscores."""
    return name.replace(" ", "_") + ".json"


def write_collection(config_dir: Path, coll: dict[str, Any]) -> Path:
    """obs-studio/basic/scenes/<name>.json, compact sorted JSON as OBS 29 writes it."""
    path = Path(config_dir) / "basic" / "scenes" / collection_file_name(coll["name"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(coll, sort_keys=True, separators=(",", ":")), encoding="utf-8")
    return path


def ini_text(sections: Mapping[str, Mapping[str, Any]]) -> str:
    """INI text with case kept (OBS's keys are CamelCase) and booleans as OBS writes them."""
    cp = configparser.RawConfigParser()
    cp.optionxform = str  # type: ignore[assignment,method-assign]
    for sec, kv in sections.items():
        cp.add_section(sec)
        for k, v in kv.items():
            cp.set(sec, k, ("true" if v else "false") if isinstance(v, bool) else str(v))
    buf = io.StringIO()
    cp.write(buf, space_around_delimiters=False)
    return buf.getvalue()


def write_profile(config_dir: Path, name: str, basic: Mapping[str, Mapping[str, Any]], *,
                  stream_encoder: Mapping[str, Any] | None = None, record_encoder: Mapping[str, Any] | None = None,
                  service: Mapping[str, Any] | None = None) -> Path:
    """obs-studio/basic/profiles/<name>/ with basic.ini and the encoder/service JSON given."""
    d = Path(config_dir) / "basic" / "profiles" / name
    d.mkdir(parents=True, exist_ok=True)
    sections = {"General": {"Name": name}, **basic}
    (d / "basic.ini").write_text(ini_text(sections), encoding="utf-8")
    for fname, obj in (("streamEncoder.json", stream_encoder), ("recordEncoder.json", record_encoder),
                       ("service.json", service)):
        if obj is not None:
            (d / fname).write_text(json.dumps(obj, separators=(",", ":")), encoding="utf-8")
    return d


def write_global(config_dir: Path, collection_name: str, profile: str = "Untitled", **extra_sections: Any) -> Path:
    """global.ini naming the active profile and collection (what OBS reads at start)."""
    sections: dict[str, dict[str, Any]] = {
        "General": {"FirstRun": True, "LastVersion": OBS29_VERSION},
        "Basic": {"Profile": profile, "ProfileDir": profile, "SceneCollection": collection_name,
                  "SceneCollectionFile": collection_file_name(collection_name)[:-5]},
    }
    sections.update(extra_sections)
    path = Path(config_dir) / "global.ini"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(ini_text(sections), encoding="utf-8")
    return path


def png(path: Path, width_px: int, height_px: int, rgba: tuple[int, int, int, int]) -> Path:
    """A solid PNG (bg/starting.png, overlay/frame.png …) of a known size, via OpenCV."""
    import cv2
    import numpy as np

    img = np.zeros((height_px, width_px, 4), np.uint8)
    img[:] = (rgba[2], rgba[1], rgba[0], rgba[3])
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), img)
    return path
