"""OBS file parsers on the reference files OBS 29.0.2 saved, hand-made 30/31-style files, and garbage."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from verifiers.apps.obs import (
    ObsFileError,
    Transform,
    decode_binding,
    item_rect,
    load_collection,
    load_profile,
    normalize,
    parse_collection,
    read_ini,
    rendered_rect,
)

REF = Path("/work/shared/reference/obs29")
needs_ref = pytest.mark.skipif(not REF.exists(), reason="reference OBS files not present")


@needs_ref
def test_reference_collection() -> None:
    c = load_collection(REF / "scenes" / "Test.json")
    assert c.name == "Test"
    assert c.scene_order == ("Main", "BRB")
    assert c.current_program_scene == "BRB"
    assert c.current_transition == "Stinger" and c.transition_duration_ms == 300
    main = c.scene("Main")
    assert main.item_names() == ["Background", "Cam", "Mic", "Music"]   # bottom -> top
    assert main.is_topmost("Music") and not main.is_topmost("Cam")
    assert main.is_topmost("Cam", among=["Background", "Cam"])
    assert main.select_hotkeys == ("Ctrl+Alt+1",)
    cam = main.item("Cam")
    assert cam is not None and cam.transform.bounds_type == 2 and cam.transform.align == 5
    r = item_rect(c, "Main", "Cam")
    assert r is not None and r.as_tuple() == (100.0, 786.0, 480.0, 270.0)
    mic = c.source("Mic")
    assert mic.hotkeys["libobs.mute"] == ("Ctrl+M",)
    assert mic.hotkeys["libobs.push-to-mute"] == ("P",)
    assert mic.tracks == (1, 2) and math.isclose(mic.volume_db, -6.0206, abs_tol=1e-3)
    assert [f.name for f in mic.filters] == ["Noise", "Gain", "Comp", "Limit"]
    noise, gain, comp, limit = mic.filters
    assert noise.kind == "noise_suppress_filter_v2" and noise.settings["suppress_level"] == -30
    assert gain.settings == {"db": 6.0}
    assert comp.settings["sidechain_source"] == "Music" and comp.settings["output_gain"] == 0.0
    assert comp.raw_settings.get("output_gain") is None            # default filled, raw kept
    assert limit.settings == {"threshold": -3.0, "release_time": 60}
    brb = c.scene("BRB")
    assert brb.transition_override == "Stinger" and brb.transition_override_duration_ms == 700
    stinger = c.transition("Stinger")
    assert stinger.kind == "obs_stinger_transition" and stinger.settings["transition_point"] == 1500
    assert c.transition("Fade").kind == "fade_transition"
    assert c.source("Cam").settings["width"] == 1920
    assert set(c.inputs) == {"Music", "Mic", "Background", "Cam"}


@needs_ref
def test_reference_profile() -> None:
    p = load_profile(REF / "profiles" / "Test")
    assert p.output_mode == "Advanced"
    assert p.recording.format == "mkv" and p.recording.path == "/home/streamer/Videos"
    assert p.recording.encoder == "obs_x264" and p.recording.tracks == (1, 2)
    assert p.replay_buffer.enabled and p.replay_buffer.max_time_s == 45 and p.replay_buffer.max_size_mb == 1024
    assert p.replay_buffer.prefix == "Replay"
    assert (p.video.base_w_px, p.video.base_h_px, p.video.fps) == (1920, 1080, 30)
    assert p.hotkeys["OBSBasic.StartRecording"] == ("Shift+F9",)
    assert p.record_encoder is not None and p.record_encoder["bitrate"] == 6000
    assert p.record_encoder["keyint_sec"] == 2
    assert p.service == {"type": "rtmp_custom", "server": "rtmp://127.0.0.1/live", "key": "streamkey123",
                         "use_auth": False}
    assert read_ini(REF / "global.ini")["OBSWebSocket"]["ServerPort"] == "4455"


def test_obs30_style_profile_and_collection(tmp_path: Path) -> None:
    d = tmp_path / "P"
    d.mkdir()
    (d / "basic.ini").write_text("[General]\nName=P\n[Output]\nMode=Simple\n[SimpleOutput]\n"
                                 "FilePath=/rec\nRecFormat2=hybrid_mp4\nRecRB=true\nRecRBTime=30\n"
                                 "[Video]\nFPSType=2\nFPSNum=30000\nFPSDen=1001\n")
    p = load_profile(d)
    assert p.output_mode == "Simple" and p.recording.format == "hybrid_mp4" and p.recording.path == "/rec"
    assert p.replay_buffer.enabled and p.replay_buffer.max_time_s == 30 and p.replay_buffer.max_size_mb == 512
    assert math.isclose(p.video.fps_float, 29.97, abs_tol=0.001) and p.video.base_w_px is None
    coll = parse_collection({
        "name": "U", "scene_order": [{"name": "S"}], "current_program_scene": "S",
        "sources": [
            {"id": "scene", "versioned_id": "scene", "name": "S", "uuid": "u-s",
             "settings": {"items": [{"name": "G", "source_uuid": "u-g", "pos": {"x": 10, "y": 20}}]}},
            {"id": "color_source", "versioned_id": "color_source_v3", "name": "C", "uuid": "u-c",
             "settings": {}}],
        "groups": [{"id": "group", "name": "G", "uuid": "u-g", "settings": {
            "custom_size": True, "cx": 200, "cy": 100, "items": [{"name": "C"}]}}],
    })
    assert coll.scene("S").uuid == "u-s" and coll.scene("S").items[0].source_uuid == "u-g"
    assert coll.scene("G").is_group and coll.nested_scenes("S") == ["G"]
    assert coll.source("C").settings == {"color": 0xFFD1D1D1, "width": 1920, "height": 1080}
    assert item_rect(coll, "S", "G").as_tuple() == (10.0, 20.0, 200.0, 100.0)
    assert coll.transition_duration_ms == 300 and coll.macros() == []


@pytest.mark.parametrize(("tf", "size", "expected"), [
    # Cam 1920x1080 bounded 480x270 scale-inner at bottom right with 24 px margin
    (Transform(pos_x=1416, pos_y=786, bounds_type=2, bounds_x=480, bounds_y=270), (1920, 1080),
     (1416, 786, 480, 270)),
    # same rectangle expressed with bottom-right alignment
    (Transform(pos_x=1896, pos_y=1056, align=10, bounds_type=2, bounds_x=480, bounds_y=270), (1920, 1080),
     (1416, 786, 480, 270)),
    # plain scale 0.25, centred alignment
    (Transform(pos_x=960, pos_y=540, align=0, scale_x=0.25, scale_y=0.25), (1920, 1080),
     (720, 405, 480, 270)),
    # 4:3 source into a 16:9 box, scale inner, content centred in the box (bounds_align 0)
    (Transform(pos_x=0, pos_y=0, bounds_type=2, bounds_x=480, bounds_y=270), (640, 480),
     (60, 0, 360, 270)),
    # scale outer overflows the box
    (Transform(bounds_type=3, bounds_x=480, bounds_y=270), (640, 480), (0, -45, 480, 360)),
    # stretch ignores aspect
    (Transform(bounds_type=1, bounds_x=300, bounds_y=300), (640, 480), (0, 0, 300, 300)),
    # crop reduces the native size before scaling
    (Transform(pos_x=5, pos_y=5, crop_left=100, crop_right=100, crop_top=40), (640, 480), (5, 5, 440, 440)),
    # max-only does not upscale
    (Transform(bounds_type=6, bounds_x=1000, bounds_y=1000), (640, 480), (180, 260, 640, 480)),
])
def test_rendered_rect(tf: Transform, size: tuple[int, int], expected: tuple[float, ...]) -> None:
    r = rendered_rect(tf, *size)
    assert r.as_tuple() == pytest.approx(expected, abs=0.01)


def test_hotkeys_decode_and_normalize() -> None:
    assert decode_binding({"key": "OBS_KEY_1", "control": True, "alt": True}) == "Ctrl+Alt+1"
    assert decode_binding({"key": "OBS_KEY_NUM5", "shift": True}) == "Shift+Num5"
    assert decode_binding({"key": "OBS_KEY_SPACE", "alt": True, "control": True}) == "Ctrl+Alt+Space"
    assert normalize("alt + control + 1") == "Ctrl+Alt+1"
    assert normalize("shift+f9") == "Shift+F9"


@needs_ref
@pytest.mark.parametrize("cut", [0.0, 0.3, 0.7, 0.999])
def test_truncated_collection_names_file(tmp_path: Path, cut: float) -> None:
    data = (REF / "scenes" / "Test.json").read_bytes()
    bad = tmp_path / "Weekly.json"
    bad.write_bytes(data[: int(len(data) * cut)])
    with pytest.raises(ObsFileError) as err:
        load_collection(bad)
    assert str(bad) in str(err.value)


@pytest.mark.parametrize(("content", "fragment"), [
    (b"\x89PNG\r\n\x1a\n\x00\x00garbage", "not"),
    (b"[1, 2, 3]", "top level"),
    (b'{"sources": [{"name": "X", "settings": {"items": 5}, "id": "scene"}]}', "items"),
    (b'{"sources": [{"name": "X", "id": "scene", "settings": {"items": [{"name": "Y", "pos": {"x": "a"}}]}}]}',
     "pos.x"),
])
def test_garbage_collection_is_clear_error(tmp_path: Path, content: bytes, fragment: str) -> None:
    bad = tmp_path / "c.json"
    bad.write_bytes(content)
    with pytest.raises(ObsFileError, match=fragment) as err:
        load_collection(bad)
    assert err.value.path == str(bad)


@pytest.mark.parametrize(("ini", "fragment"), [
    ("[Vid", "not a valid ini"),
    ("BaseCX=1920\n", "not a valid ini"),
    ("[Video]\nBaseCX=19x0\n", "BaseCX"),
    ('[Hotkeys]\nOBSBasic.StartRecording={"bindings":[{"ke\n', "StartRecording"),
    ("[Output]\nMode=Fancy\n", "Mode"),
])
def test_garbage_ini_is_clear_error(tmp_path: Path, ini: str, fragment: str) -> None:
    d = tmp_path / "Prof"
    d.mkdir()
    (d / "basic.ini").write_text(ini)
    with pytest.raises(ObsFileError, match=fragment) as err:
        load_profile(d)
    assert str(d / "basic.ini") in str(err.value)


@needs_ref
def test_truncated_encoder_json_names_file(tmp_path: Path) -> None:
    d = tmp_path / "Prof"
    shutil.copytree(REF / "profiles" / "Test", d)
    (d / "recordEncoder.json").chmod(0o644)
    (d / "recordEncoder.json").write_text('{"rate_control":"CBR","bitr')
    with pytest.raises(ObsFileError, match=r"recordEncoder\.json.*truncated"):
        load_profile(d)


def test_binary_ini(tmp_path: Path) -> None:
    p = tmp_path / "basic.ini"
    p.write_bytes(b"\x00\x01\x02[General]")
    with pytest.raises(ObsFileError, match="binary"):
        read_ini(p)


def test_collection_roundtrip_json_dump_is_stable() -> None:
    coll = parse_collection(json.loads(json.dumps({"name": "x", "sources": []})))
    assert coll.scenes == {} and coll.scene_order == ()


def test_advanced_scene_switcher_macros() -> None:
    coll = parse_collection({"name": "m", "sources": [], "modules": {"advanced-scene-switcher": {
        "macros": [
            {"name": "Auto BRB", "pause": False, "conditions": [{"id": "idle", "logic": 0}],
             "actions": [{"id": "scene_switch", "sceneSelection": {"name": "BRB"}}], "elseActions": []},
            {"name": "Paused one", "pause": True, "conditions": [], "actions": []},
            "garbage-entry",
        ]}}})
    macros = coll.macros()
    assert [m.name for m in macros] == ["Auto BRB", "Paused one"]
    auto = coll.macro("Auto BRB")
    assert auto is not None and auto.condition_ids == ["idle"] and auto.action_ids == ["scene_switch"]
    assert auto.actions[0]["sceneSelection"]["name"] == "BRB" and not auto.paused
    assert macros[1].paused and coll.macro("nope") is None
