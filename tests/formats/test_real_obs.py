"""verifiers.apps.obs on scene collections and profiles that OBS 23-32 saved (tests/formats/corpus.py).

Each file is parsed, its facts are re-read from the raw JSON by independent code (item order,
transforms, filters, kinds), a few facts are pinned by hand from the files, and OBS 31+'s relative
coordinates are checked against libobs's rule on every item OBS saved.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.formats.corpus import files, manifest, params
from verifiers.apps.obs import MAIN_CANVAS_UUID, load_collection, load_profile, parse_basic_ini, read_ini
from verifiers.synthkit import obs_synth as O


@pytest.mark.parametrize("real", params("obs"))
def test_collection_parses_and_keeps_everything(real: Any, tmp_path: Path) -> None:
    raw = real.json()
    c = load_collection(real.to_path(tmp_path))
    assert c.raw == raw                       # unknown top-level keys kept verbatim
    globals_ = [raw[k] for k in ("DesktopAudioDevice1", "DesktopAudioDevice2", "AuxAudioDevice1",
                                 "AuxAudioDevice2", "AuxAudioDevice3", "AuxAudioDevice4") if k in raw]
    names = {s["name"] for s in raw["sources"] + raw.get("groups", []) + globals_}
    assert set(c.sources) == names   # the global audio devices are sources too ...
    assert not set(c.audio_devices.values()) & set(c.inputs)   # ... but not in the Sources list
    for s in raw["sources"] + raw.get("groups", []) + globals_:
        src = c.sources[s["name"]]
        assert src.raw_settings == s.get("settings", {})  # settings kept verbatim (plugin keys too)
        assert src.kind == s["id"] and src.versioned_id == s.get("versioned_id", s["id"])
        assert [(f.name, f.kind, f.enabled) for f in src.filters] == [
            (f["name"], f.get("versioned_id", f["id"]), f.get("enabled", True)) for f in s.get("filters", [])]


@pytest.mark.parametrize("real", params("obs"))
def test_scene_items_match_the_raw_json(real: Any, tmp_path: Path) -> None:
    """Items bottom -> top as saved, group_item_backup copies left out (libobs skips them)."""
    raw = real.json()
    c = load_collection(real.to_path(tmp_path))
    for s in raw["sources"] + raw.get("groups", []):
        if s["id"] not in ("scene", "group"):
            continue
        saved = [it for it in s["settings"].get("items", []) if not it.get("group_item_backup")]
        scene = c.scene(s["name"])
        assert scene.backup_items == len(s["settings"].get("items", [])) - len(saved)
        assert [it.source_name for it in scene.items] == [it["name"] for it in saved]
        for it, want in zip(scene.items, saved, strict=True):
            t = it.transform
            assert (t.pos_x, t.pos_y) == (want["pos"]["x"], want["pos"]["y"])
            assert (t.scale_x, t.scale_y) == (want["scale"]["x"], want["scale"]["y"])
            assert t.bounds_type == want.get("bounds_type", 0) and it.visible == want.get("visible", True)
            assert (t.crop_left, t.crop_top, t.crop_right, t.crop_bottom) == tuple(
                want.get(k, 0) for k in ("crop_left", "crop_top", "crop_right", "crop_bottom"))
        for it in scene.items:  # every item names a source that exists
            assert it.source_name in c.sources


def _major(version: str) -> int:
    head = version.split(".")[0]
    return int(head) if head.isdigit() else 0


@pytest.mark.parametrize("real", [p for p in params("obs") if _major(p.values[0].version) >= 31])
def test_relative_coordinates_follow_libobs(real: Any, tmp_path: Path) -> None:
    """OBS 31+ writes pos_rel = (pos - centre) / (height / 2) and bounds_rel = bounds / (height / 2);
    on every item OBS saved, pos and pos_rel agree at the saved canvas size, so rel_disagrees is False
    (and a hand edit of pos alone is seen: libobs would load pos_rel and ignore it)."""
    c = load_collection(real.to_path(tmp_path))
    assert c.version == 2
    items = [it for s in c.scenes.values() for it in s.items if it.pos_rel is not None]
    canvas_px = c.resolution_px or _profile_canvas(real, tmp_path)
    if canvas_px is None or not items:
        pytest.skip(f"{real.file}: no saved canvas size or no item with relative coordinates")
    # Aitum Vertical's scenes live on their own canvas; its size is in the plugin config, not here.
    main_items = [it for s in c.scenes_on_canvas() for it in s.items if it.pos_rel is not None]
    assert main_items
    for it in main_items:
        assert not it.rel_disagrees(canvas_px, tol_px=0.01), (it.scene_name, it.source_name)
    moved = main_items[0]
    from dataclasses import replace
    edited = replace(moved, transform=replace(moved.transform, pos_x=moved.transform.pos_x + 40))
    assert edited.rel_disagrees(canvas_px)


def _profile_canvas(real: Any, tmp_path: Path) -> tuple[int, int] | None:
    """The base canvas of the profile saved in the same commit (for files without `resolution`)."""
    for p in files("obs-profile"):
        if p.repo == real.repo and p.commit == real.commit:
            v = read_ini(p.to_path(tmp_path)).get("Video", {})
            return (int(v["BaseCX"]), int(v["BaseCY"])) if "BaseCX" in v else None
    return None


def _by_file(name: str) -> Any:
    hit = [f for f in manifest() if f.file == name]
    if not hit:
        pytest.skip(f"{name} not in the manifest")
    return hit[0]


def test_hand_checked_facts(tmp_path: Path) -> None:
    """Facts read by eye from the saved files (and what OBS's UI shows for them)."""
    z = load_collection(_by_file("obs/29.1/zevaverbach_Untitled.json").to_path(tmp_path))
    assert z.scene_order == ("Scene", "Scene 2") and z.current_program_scene == "Scene 2"
    assert z.transition_duration_ms == 100 and z.transitions == {}   # Fade/Cut are never saved
    eos = z.scene("Scene 2").item("eos")
    assert eos is not None and (eos.transform.pos_x, eos.transform.pos_y) == (971.0, 514.0)
    assert z.source("Video Capture Device").versioned_id == "av_capture_input_v2"

    g = load_collection(_by_file("obs/27.2/glyphack_Untitled.json").to_path(tmp_path))
    blur = g.source("Video Capture Device (V4L2)").filter("Blur")
    assert blur is not None and blur.kind == "streamfx-filter-blur" and blur.enabled   # plugin filter kept

    v = load_collection(_by_file("obs/30.1/vulbyte_main_scene.json").to_path(tmp_path))
    main = v.scene("Scene")
    assert main.backup_items == 6 and v.scene("c-card").is_group
    assert "c-card" in main.item_names() and "3-capture_in" not in main.item_names()   # member, not item


def test_obs32_aitum_vertical_canvas(tmp_path: Path) -> None:
    c = load_collection(_by_file("obs/32.0/sandro_Untitled.json").to_path(tmp_path))
    canvas = c.canvas("Aitum Vertical")
    assert canvas is not None and canvas.flags == 14 and canvas.uuid != MAIN_CANVAS_UUID
    assert [s.name for s in c.scenes_on_canvas("Aitum Vertical")] == ["Vertical Scene"]
    assert [s.name for s in c.scenes_on_canvas()] == ["Scene"]
    assert c.scene_order == ("Scene",)   # the vertical canvas's scenes are not in scene_order


@pytest.mark.parametrize("real", params("obs"))
def test_defaults_never_override_saved_values(real: Any, tmp_path: Path) -> None:
    """settings = OBS defaults filled in under what was saved: every saved value survives."""
    c = load_collection(real.to_path(tmp_path))
    for src in c.sources.values():
        assert all(src.settings[k] == v for k, v in src.raw_settings.items()), src.name
        for f in src.filters:
            assert all(f.settings[k] == v for k, v in f.raw_settings.items()), (src.name, f.name)


def test_profile_directory_with_encoders(tmp_path: Path) -> None:
    """OBS 30.1 Advanced profile with VideoToolbox encoders: encoder JSON read with defaults under it."""
    ini = _by_file("obs-profile/30.1/vulbyte_basic.ini")
    d = tmp_path / "profile"
    d.mkdir()
    (d / "basic.ini").write_bytes(ini.data())
    for name in ("recordEncoder.json", "streamEncoder.json"):
        (d / name).write_bytes(_by_file(f"obs-profile/30.1/vulbyte_{name}").data())
    p = load_profile(d)
    assert p.output_mode == "Advanced" and p.recording.encoder == "com.apple.videotoolbox.videoencoder.ave.avc"
    assert p.record_encoder is not None and p.record_encoder["rate_control"] == "CRF" and p.record_encoder["quality"] == 12
    assert p.stream_encoder is not None and p.stream_encoder["bitrate"] == 4096


@pytest.mark.parametrize("real", [p for p in params("obs-profile") if p.values[0].name.endswith(".ini")])
def test_profile_basic_ini(real: Any, tmp_path: Path) -> None:
    ini = read_ini(real.to_path(tmp_path))
    p = parse_basic_ini(ini, real.file)
    assert p.output_mode == ini.get("Output", {}).get("Mode", "Simple")
    assert p.video.base_w_px == int(ini["Video"]["BaseCX"]) and p.video.output_h_px == int(ini["Video"]["OutputCY"])
    assert p.video.fps > 0


def test_profile_hand_checked(tmp_path: Path) -> None:
    from fractions import Fraction
    p = parse_basic_ini(read_ini(_by_file("obs-profile/29.1/zevaverbach_basic.ini").to_path(tmp_path)))
    assert p.output_mode == "Advanced" and p.recording.rec_type == "FFmpeg" and p.video.fps == Fraction(30000, 1001)
    q = parse_basic_ini(read_ini(_by_file("obs-profile/32.1/omarchyquattro_basic.ini").to_path(tmp_path)))
    assert q.recording.tracks == (1, 2, 3) and (q.video.base_w_px, q.video.output_w_px) == (2560, 1920)


# ---- synth vs real: the writer's shapes against what OBS saved -------------------------------

#: Keys the synth writes that some OBS version does not (or the other way), with the reason.
SYNTH_ITEM_ONLY_IN_NEWER = {"blend_method", "source_uuid", "bounds_crop", "pos_rel", "scale_rel", "bounds_rel",
                            "scale_ref", "blend_type", "show_transition", "hide_transition"}


def _keys(items: list[dict[str, Any]]) -> set[str]:
    return set().union(*(set(i) for i in items)) if items else set()


@pytest.mark.parametrize("real", [p for p in params("obs") if _major(p.values[0].version) == 29])
def test_synth_matches_obs29_shapes(real: Any) -> None:
    """obs_synth claims OBS 29's shapes: its source, item and top-level keys must be exactly the ones
    OBS 29 saved (a key OBS did not write, or one it always writes and synth omits, fails)."""
    raw = real.json()
    sources = [s for s in raw["sources"] if s["id"] not in ("scene", "group")]
    items = [i for s in raw["sources"] if s["id"] == "scene" for i in s["settings"].get("items", [])]
    syn_src = O.source("Mic", "coreaudio_input_capture", {})
    syn_item = O.item("Mic", 1)
    syn_coll = O.collection("Synth", [O.scene("Scene", [syn_item])], [syn_src])
    real_src_keys = set.intersection(*(set(s) for s in sources))
    assert real_src_keys - {"filters", "uuid"} <= set(syn_src), real_src_keys - set(syn_src)
    assert set(syn_src) - {"filters"} <= _keys(sources) | {"prev_ver"}
    assert set(syn_item) <= _keys(items) | SYNTH_ITEM_ONLY_IN_NEWER, set(syn_item) - _keys(items)
    assert set.intersection(*(set(i) for i in items)) - {"source_uuid"} <= set(syn_item)
    real_top = set(raw) - {"AuxAudioDevice1", "DesktopAudioDevice1", "virtual-camera", "resolution"}
    assert real_top <= set(syn_coll), real_top - set(syn_coll)
    json.dumps(syn_coll)


_INI_LINE = re.compile(r"^\[[^\]]+\]$|^[^=\s][^=]*=.*$")


def test_synth_basic_ini_like_obs(tmp_path: Path) -> None:
    """obs_synth.write_profile writes basic.ini the way OBS does: [Section] and Key=Value lines with
    no spaces around '=', case kept, booleans lowercase; the real files' lines all have that shape
    (the Windows one starts with a UTF-8 BOM, which read_ini skips; synth writes none, as on Linux)."""
    reals = [f for f in files("obs-profile") if f.name.endswith(".ini")]
    for f in reals:
        text = f.data().decode("utf-8-sig")
        bad = [ln for ln in text.splitlines() if ln.strip() and not _INI_LINE.match(ln)]
        assert not bad, (f.file, bad[:3])
        assert not re.search(r"=(True|False)$", text, re.M), f.file   # OBS writes true/false
    d = O.write_profile(tmp_path, "Synth", {"Output": {"Mode": "Advanced"}, "AdvOut": {"RecRB": True, "RecTracks": 3},
                                            "Video": {"BaseCX": 1920, "BaseCY": 1080, "FPSType": 1, "FPSInt": 30}})
    text = (d / "basic.ini").read_text(encoding="utf-8")
    assert all(_INI_LINE.match(ln) for ln in text.splitlines() if ln.strip())
    assert "RecRB=true" in text and " = " not in text
    p = parse_basic_ini(read_ini(d / "basic.ini"))
    assert p.replay_buffer.enabled and p.recording.tracks == (1, 2) and p.video.fps == 30
    real_sections = set().union(*(set(read_ini(f.to_path(tmp_path))) for f in reals))
    assert set(read_ini(d / "basic.ini")) <= real_sections
