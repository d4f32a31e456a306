"""verifiers.apps.vertical on Aitum Vertical configs and OBS 32 collections users saved with it
(tests/formats/corpus.py): the config's canvases, the vertical scenes found through OBS 31+'s
canvases, and their items' relative coordinates on the vertical canvas's own size.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.formats.corpus import manifest, params
from verifiers.apps.obs import load_collection
from verifiers.apps.vertical import VerticalConfigError, load_config, parse_config, vertical_scenes


def _real(name: str) -> Any:
    hit = [f for f in manifest() if f.file == name]
    if not hit:
        pytest.skip(f"{name} not in the manifest")
    return hit[0]


@pytest.mark.parametrize("real", params("aitum-vertical"))
def test_config_parses(real: Any, tmp_path: Path) -> None:
    raw = real.json()
    canvases = load_config(real.to_path(tmp_path))
    assert [(c.width_px, c.height_px) for c in canvases] == [(c["width"], c["height"]) for c in raw["canvas"]]
    assert all("scenes" not in c for c in raw["canvas"])   # the plugin saves no scenes here


def test_config_facts_by_hand(tmp_path: Path) -> None:
    (c,) = load_config(_real("aitum-vertical/2025-11/byuwur_config.json").to_path(tmp_path))
    assert (c.width_px, c.height_px, c.current_scene, c.record_path, c.file_format) == (
        1080, 1920, "START.vertical", "D:/OBSVids", "hybrid_mp4")
    (old,) = load_config(_real("aitum-vertical/older/sandro_config.json").to_path(tmp_path))
    assert old.current_scene == "Vertical Scene" and old.record_path is None
    with pytest.raises(VerticalConfigError):
        parse_config({"canvas": [{"width": "1080"}]})


@pytest.mark.parametrize(("config", "collection"), [
    ("aitum-vertical/2025-11/byuwur_config.json", "obs/32.0/byuwur_byuwur.json"),
    ("aitum-vertical/older/sandro_config.json", "obs/32.0/sandro_Untitled.json"),
])
def test_vertical_scenes_in_the_collection(config: str, collection: str, tmp_path: Path) -> None:
    (canvas,) = load_config(_real(config).to_path(tmp_path))
    coll = load_collection(_real(collection).to_path(tmp_path))
    scenes = vertical_scenes(coll, canvas)
    names = [s.name for s in scenes]
    assert canvas.current_scene in names
    assert not set(names) & set(coll.scene_order)          # not in the main canvas's scene list
    for s in scenes:                                       # relative coords are on the 1080x1920 canvas
        for it in s.items:
            if it.pos_rel is not None:
                assert not it.rel_disagrees((canvas.width_px, canvas.height_px), tol_px=0.01), it.source_name


def test_legacy_custom_size_scenes() -> None:
    """Before OBS 31 the plugin kept vertical scenes as custom-size scenes of the main collection."""
    from verifiers.apps.obs import parse_collection
    from verifiers.synthkit import obs_synth as O
    v = O.scene("V-Live", [])
    v["settings"].update(custom_size=True, cx=1080, cy=1920)
    coll = parse_collection(O.collection("c", [O.scene("Main", []), v], []))
    (canvas,) = parse_config({"canvas": [{"width": 1080, "height": 1920}]})
    assert [s.name for s in vertical_scenes(coll, canvas)] == ["V-Live"]


#: How T11's synthetic config (verifiers/tasks/streaming/t11_vertical_canvas.config) differs from
#: what the plugin saves (the fix belongs in the task module; see docs/formats.md).
KNOWN_T11_DIFFERENCES = {
    "scenes_in_config": "synth nests the vertical scenes in config.json canvas[].scenes; the plugin saves "
                        "none there (they are collection scenes on the 'Aitum Vertical' OBS canvas)",
}


def test_t11_synth_vs_real() -> None:
    try:
        from verifiers.tasks.streaming.t11_vertical_canvas import config
    except Exception as exc:  # the task package is being restructured by another helper
        pytest.skip(f"T11 task module not importable here: {exc}")
    syn = config()
    real = _real("aitum-vertical/2025-11/byuwur_config.json").json()
    diffs = {"scenes_in_config"} if any("scenes" in c for c in syn["canvas"]) else set()
    assert diffs <= set(KNOWN_T11_DIFFERENCES)
    shared = {"width", "height", "record_path", "current_scene"}
    assert shared <= set(syn["canvas"][0]) and shared <= set(real["canvas"][0])
    extra = set(syn["canvas"][0]) - set(real["canvas"][0]) - {"scenes"}
    assert not extra - {"fps_numerator", "fps_denominator"}, extra   # fps: the plugin follows OBS's video settings
