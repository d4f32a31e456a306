"""verifiers.apps.streamlabs on scene collections Streamlabs Desktop saved (its own test data:
root schema 1 from 2018, 3 and 4 from 2024 with dual output; tests/formats/corpus.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.formats.corpus import manifest, params
from verifiers.apps.streamlabs import StreamlabsError, load_collection, node_items, parse_collection


def _real(name: str) -> Any:
    hit = [f for f in manifest() if f.file == name]
    if not hit:
        pytest.skip(f"{name} not in the manifest")
    return hit[0]


@pytest.mark.parametrize("real", params("streamlabs"))
def test_parses_and_matches_the_raw_nodes(real: Any, tmp_path: Path) -> None:
    raw = real.json()
    assert raw["nodeType"] == "RootNode" and raw["scenes"]["nodeType"] == "ScenesNode"
    c = load_collection(real.to_path(tmp_path))
    assert c.raw == raw and c.schema_version == raw["schemaVersion"]
    assert set(c.sources) == {s["id"] for s in raw["sources"]["items"]}
    for sc, want in zip(c.scenes, raw["scenes"]["items"], strict=True):
        assert want["sceneItems"]["nodeType"] == "SceneItemsNode"       # a node, not a list
        saved = [i for i in want["sceneItems"]["items"] if i.get("sceneNodeType", "item") == "item"]
        assert [(i.source_id, i.x, i.y, i.scale_x, i.scale_y) for i in sc.items] == [
            (i["sourceId"], i["x"], i["y"], i["scaleX"], i["scaleY"]) for i in saved]
        for it in sc.items:   # every item's source is a source or a (nested) scene
            assert c.name_of(it.source_id) is not None, it.source_id
    assert sum(s.active for s in c.scenes) == 1


def test_widgets_and_dual_output_by_hand() -> None:
    c = parse_collection(_real("streamlabs/2024-schema4/sld_original-dual-output-collection.json").json())
    assert c.dual_output and c.base_resolution_px == (1920, 1080) and c.active_scene().name == "Offline"
    alert, chat = c.source_named("Alertbox"), c.source_named("Chatbox")
    assert alert is not None and alert.widget_type == 0 and alert.size_px() == (800.0, 600.0)
    assert "alert-box/v3/" in alert.settings["url"]
    assert chat is not None and chat.widget_type == 6 and chat.size_px() == (350.0, 800.0)
    live = c.scene("Live Scene")
    assert live is not None and [c.name_of(i.source_id) for i in live.items][:1] == ["Game Capture"]  # bottom
    a = next(i for i in live.items if c.name_of(i.source_id) == "Alertbox")
    assert (a.x, a.y, a.display) == (560.0, 0.0, "horizontal")
    starting = c.scene("Starting Soon")
    assert starting is not None and starting.items_on("vertical")        # dual output's vertical copies


def test_schema1_and_nested_scene() -> None:
    old = parse_collection(_real("streamlabs/2018-schema1/sld_scene-collection.json").json())
    assert old.schema_version == 1 and "transition" in old.raw and old.active_scene().name == "Live Screen"
    new = parse_collection(_real("streamlabs/2024-schema3/sld_single-output-collection.json").json())
    ending = new.scene("Ending Screen")
    assert ending is not None and new.name_of(ending.items[1].source_id) == "Edit Social Channels"


def test_shapes() -> None:
    assert node_items({"items": [1]}) == [1] and node_items([2]) == [2] and node_items(None) == []
    with pytest.raises(StreamlabsError):
        parse_collection({"sources": []})
    bare = parse_collection({"scenes": {"items": [{"id": "s", "name": "Stream", "sceneItems": [
        {"id": "i", "sourceId": "b", "x": 5}]}]}, "sources": {"items": [{"id": "b", "name": "B", "type": "x"}]}})
    assert bare.scene("Stream").items[0].x == 5.0          # hand-written bare lists still read


# ---- synth vs real ---------------------------------------------------------------------------

#: How T09's synthetic collection (verifiers/tasks/streaming/t09_streamlabs_widgets.build) differs
#: from what Streamlabs Desktop saves (see docs/formats.md; the fix belongs in the task module).
KNOWN_T09_DIFFERENCES = {
    "bare_scene_items": "sceneItems is a bare list; the app saves a SceneItemsNode {schemaVersion, nodeType, items}",
    "no_node_annotations": "no schemaVersion/nodeType on the root and its nodes",
    "scenes_extra_keys": "scenes carries activeId/displayOrder (not saved by the app; scenes[].active is)",
}


def test_t09_synth_vs_real() -> None:
    try:
        from verifiers.tasks.streaming.t09_streamlabs_widgets import build, widget_rects
    except Exception as exc:  # the task package is being restructured by another helper
        pytest.skip(f"T09 task module not importable here: {exc}")
    syn = build()
    real = _real("streamlabs/2024-schema4/sld_original-dual-output-collection.json").json()
    diffs = set()
    if isinstance(syn["scenes"]["items"][0].get("sceneItems"), list):
        diffs.add("bare_scene_items")
    if "nodeType" not in syn:
        diffs.add("no_node_annotations")
    if {"activeId", "displayOrder"} & set(syn["scenes"]) and not {"activeId", "displayOrder"} & set(real["scenes"]):
        diffs.add("scenes_extra_keys")
    assert diffs <= set(KNOWN_T09_DIFFERENCES)
    # What both agree on: item keys and widget source keys the scorer reads.
    syn_item = syn["scenes"]["items"][0]["sceneItems"]
    syn_item = (syn_item if isinstance(syn_item, list) else syn_item["items"])[0]
    real_item = real["scenes"]["items"][0]["sceneItems"]["items"][0]
    assert {"id", "sourceId", "x", "y", "scaleX", "scaleY", "visible", "crop", "rotation"} <= set(syn_item) & set(real_item)
    # The reader reads both shapes the same way.
    assert parse_collection(syn).scene("Stream") is not None
    if "bare_scene_items" not in diffs:
        return
    # T09's own widget_rects reads sceneItems as a list: on the real shape it finds nothing / fails.
    wrapped = dict(syn, scenes={"items": [dict(s, sceneItems={"schemaVersion": 1, "nodeType": "SceneItemsNode",
                                                               "items": s["sceneItems"]}) for s in syn["scenes"]["items"]]})
    try:
        rects = widget_rects(wrapped)
    except (AttributeError, TypeError):
        rects = {}
    assert rects == {}, "T09 now reads the app's SceneItemsNode: drop bare_scene_items from the list above"


def test_overlay_export_shape(tmp_path: Path) -> None:
    """A .overlay as the app's save code writes it (no public sample): config.json of scenes/slots with
    content nodes, media copied into the zip under new names, widget URLs blanked."""
    import json
    import zipfile

    from verifiers.apps.streamlabs import load_overlay
    cfg = {"schemaVersion": 2, "nodeType": "RootNode", "scenes": {"schemaVersion": 2, "nodeType": "ScenesNode", "items": [
        {"name": "Main", "sceneId": "scene_1", "slots": {"schemaVersion": 1, "nodeType": "SlotsNode", "items": [
            {"id": "a", "name": "Logo", "sceneNodeType": "item", "x": 10, "y": 20, "scaleX": 0.5, "scaleY": 0.5,
             "locked": False, "content": {"schemaVersion": 1, "nodeType": "ImageNode", "filename": "k3j2.png"}},
            {"id": "b", "name": "Alert Box", "sceneNodeType": "item", "x": 560, "y": 0, "scaleX": 1, "scaleY": 1,
             "locked": False, "content": {"schemaVersion": 1, "nodeType": "WidgetNode", "type": 0,
                                          "settings": {"url": "", "width": 800, "height": 600}}}]}}]}}
    p = tmp_path / "x.overlay"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("config.json", json.dumps(cfg, indent=2))
        z.writestr("k3j2.png", b"\x89PNG")
    ov = load_overlay(p)
    logo, alert = ov.scenes["Main"]
    assert (logo.content_type, logo.filename, logo.x) == ("ImageNode", "k3j2.png", 10.0) and ov.assets == ("k3j2.png",)
    assert (alert.content_type, alert.widget_type) == ("WidgetNode", 0)
    with pytest.raises(StreamlabsError):
        load_overlay(tmp_path / "missing.overlay")
