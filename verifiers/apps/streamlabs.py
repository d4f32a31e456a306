"""Streamlabs Desktop scene collections (SceneCollections/<uuid>.json) -> typed, read-only model.

Built from Streamlabs Desktop's save code (app/services/scene-collections/nodes/, GPL-3.0) and
proven on collections the app saved (its own test data, root schema 1, 3 and 4;
tests/formats/test_real_streamlabs.py). What the real files look like:

* Every node is saved as `{"schemaVersion": n, "nodeType": "<ClassName>", ...data}`; an array
  node's data is `{"items": [...]}`. So the root is `{"nodeType": "RootNode", "sources": {"items": [...]},
  "scenes": {"items": [...]}, "transitions" (schema 1: "transition"), "hotkeys", ...}` and a scene's
  `sceneItems` is a node `{"nodeType": "SceneItemsNode", "items": [...]}`, not a list.
* Scene items are saved bottom -> top (SceneItemsNode.save reverses the scene's top-first node
  list; load adds them in order, each on top). Folders are nodes too (`sceneNodeType: "folder"`,
  `childrenIds`); items carry `x`, `y`, `scaleX`, `scaleY`, `rotation`, `crop`, `visible`, and since
  dual output `display` ("horizontal" / "vertical").
* Sources hold `type` (the OBS input kind), `settings` (OBS settings: a widget is a browser_source
  with `url`, `width`, `height`), `propertiesManager` ("widget", "default", ...) and
  `propertiesManagerSettings` (`widgetType`: 0 alert box, 6 chat box, ...).

Bare lists where the app writes nodes are accepted too (hand-written files), and every dict is kept
verbatim in `raw`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifiers.apps._files import load_json

__all__ = ["SlCollection", "SlFolder", "SlItem", "SlOverlay", "SlScene", "SlSlot", "SlSource", "StreamlabsError",
           "load_collection", "load_overlay", "node_items", "parse_collection", "parse_overlay_config"]


class StreamlabsError(ValueError):
    """Not a Streamlabs collection, or one with a wrong shape; the message names file and key."""


def node_items(v: Any) -> list[Any]:
    """The items of an array node (`{"items": [...]}`), or the list itself; [] for None."""
    if v is None:
        return []
    if isinstance(v, dict):
        v = v.get("items", [])
    if not isinstance(v, list):
        raise StreamlabsError(f"expected a list or an array node, got {type(v).__name__}")
    return v


@dataclass(frozen=True)
class SlSource:
    id: str
    name: str
    type: str
    settings: dict[str, Any]
    volume: float
    muted: bool
    properties_manager: str
    properties_manager_settings: dict[str, Any]
    filters: tuple[dict[str, Any], ...]
    raw: dict[str, Any] = field(repr=False)

    @property
    def widget_type(self) -> int | None:
        """Streamlabs widget type number (0 alert box, 6 chat box, ...) for widget sources."""
        if self.properties_manager != "widget":
            return None
        wt = self.properties_manager_settings.get("widgetType")
        return int(wt) if isinstance(wt, (int, float)) and not isinstance(wt, bool) else None

    def size_px(self) -> tuple[float, float] | None:
        """Browser-source size from its settings (800x600 is OBS's browser_source default)."""
        if self.type != "browser_source":
            return None
        return (float(self.settings.get("width", 800)), float(self.settings.get("height", 600)))


@dataclass(frozen=True)
class SlItem:
    id: str
    source_id: str
    x: float
    y: float
    scale_x: float
    scale_y: float
    rotation_deg: float
    visible: bool
    locked: bool
    crop: dict[str, float]
    display: str        # "horizontal" unless dual output put it on the vertical display
    index: int          # 0 = bottom
    raw: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class SlFolder:
    id: str
    name: str
    children_ids: tuple[str, ...]
    display: str
    raw: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class SlScene:
    id: str
    name: str
    active: bool
    items: tuple[SlItem, ...]          # bottom -> top
    folders: tuple[SlFolder, ...]
    raw: dict[str, Any] = field(repr=False)

    def items_on(self, display: str = "horizontal") -> list[SlItem]:
        return [i for i in self.items if i.display == display]


@dataclass(frozen=True)
class SlCollection:
    path: str
    schema_version: int | None
    scenes: tuple[SlScene, ...]
    sources: dict[str, SlSource]       # by source id
    base_resolution_px: tuple[int, int] | None
    dual_output: bool
    raw: dict[str, Any] = field(repr=False)

    def scene(self, name: str) -> SlScene | None:
        return next((s for s in self.scenes if s.name == name), None)

    def source_named(self, name: str) -> SlSource | None:
        return next((s for s in self.sources.values() if s.name == name), None)

    def name_of(self, source_id: str) -> str | None:
        """The name behind an item's sourceId: a source, or a scene (nested scenes are saved only
        as scenes, with ids "scene_<uuid>", not in the sources node)."""
        if source_id in self.sources:
            return self.sources[source_id].name
        return next((s.name for s in self.scenes if s.id == source_id), None)

    def active_scene(self) -> SlScene | None:
        return next((s for s in self.scenes if s.active), None)


def load_collection(path: str | Path) -> SlCollection:
    return parse_collection(load_json(path, StreamlabsError), str(Path(path)))


def _num(v: Any, default: float) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else default


def parse_collection(obj: Any, path: str = "<streamlabs collection>") -> SlCollection:
    if not isinstance(obj, dict) or not isinstance(obj.get("scenes"), (dict, list)):
        raise StreamlabsError(f"{path}: not a Streamlabs collection (no scenes node)")
    try:
        sources: dict[str, SlSource] = {}
        for s in node_items(obj.get("sources")):
            if not isinstance(s, dict) or not isinstance(s.get("id"), str):
                raise StreamlabsError("sources: an item without an id")
            st = s.get("settings") if isinstance(s.get("settings"), dict) else {}
            pms = s.get("propertiesManagerSettings") if isinstance(s.get("propertiesManagerSettings"), dict) else {}
            sources[s["id"]] = SlSource(
                s["id"], str(s.get("name", "")), str(s.get("type", "")), st, _num(s.get("volume"), 1.0),
                bool(s.get("muted", False)), str(s.get("propertiesManager", "default")), pms,
                tuple(f for f in node_items(s.get("filters")) if isinstance(f, dict)), s)
        scenes = []
        for sc in node_items(obj.get("scenes")):
            if not isinstance(sc, dict):
                raise StreamlabsError("scenes: an item that is not an object")
            items, folders = [], []
            for it in node_items(sc.get("sceneItems")):
                if not isinstance(it, dict):
                    continue
                display = str(it.get("display", "horizontal"))
                if it.get("sceneNodeType") == "folder":
                    folders.append(SlFolder(str(it.get("id", "")), str(it.get("name", "")),
                                            tuple(it.get("childrenIds", []) or []), display, it))
                    continue
                crop = it.get("crop") if isinstance(it.get("crop"), dict) else {}
                items.append(SlItem(
                    str(it.get("id", "")), str(it.get("sourceId", "")), _num(it.get("x"), 0.0), _num(it.get("y"), 0.0),
                    _num(it.get("scaleX"), 1.0), _num(it.get("scaleY"), 1.0), _num(it.get("rotation"), 0.0),
                    bool(it.get("visible", True)), bool(it.get("locked", False)),
                    {k: _num(crop.get(k), 0.0) for k in ("top", "bottom", "left", "right")}, display, len(items), it))
            scenes.append(SlScene(str(sc.get("id", "")), str(sc.get("name", "")), bool(sc.get("active", False)),
                                  tuple(items), tuple(folders), sc))
    except StreamlabsError as exc:
        raise StreamlabsError(f"{path}: {exc}") from None
    res = obj.get("baseResolution")
    base = None
    if isinstance(res, dict) and isinstance(res.get("baseWidth"), int) and isinstance(res.get("baseHeight"), int):
        base = (res["baseWidth"], res["baseHeight"])
    sv = obj.get("schemaVersion")
    return SlCollection(path, sv if isinstance(sv, int) else None, tuple(scenes), sources, base,
                        bool(obj.get("dualOutputMode", False)), obj)


# ---- .overlay exports -------------------------------------------------------------------------
#
# File > Export Overlay writes a zip: config.json (OverlaysPersistenceService.saveOverlay, 2-space
# JSON of nodes/overlays/root.ts, RootNode schema 2) plus every image/video the scenes use, copied
# in under new unique names. config.json is NOT a collection: scenes hold `slots` (a SlotsNode)
# whose items carry a `content` node saying what the source is (ImageNode {filename},
# VideoNode {filename, settings}, WidgetNode {type, settings with url blanked}, TextNode {settings},
# WebcamNode, GameCaptureNode, SceneSourceNode, StreamlabelNode, ...). No public .overlay file was
# found; this follows the save code only.


@dataclass(frozen=True)
class SlSlot:
    name: str
    content_type: str            # "ImageNode", "WidgetNode", ... ("folder" for folders)
    x: float
    y: float
    scale_x: float
    scale_y: float
    filename: str | None         # a media file inside the zip (ImageNode, VideoNode)
    widget_type: int | None      # WidgetNode
    raw: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class SlOverlay:
    scenes: dict[str, tuple[SlSlot, ...]]   # scene name -> slots bottom -> top
    assets: tuple[str, ...]                 # names in the zip other than config.json
    raw: dict[str, Any] = field(repr=False)


def parse_overlay_config(obj: Any, assets: tuple[str, ...] = (), path: str = "config.json") -> SlOverlay:
    if not isinstance(obj, dict) or not isinstance(obj.get("scenes"), (dict, list)):
        raise StreamlabsError(f"{path}: not a Streamlabs overlay config (no scenes node)")
    scenes: dict[str, tuple[SlSlot, ...]] = {}
    try:
        for sc in node_items(obj["scenes"]):
            if not isinstance(sc, dict):
                continue
            slots = []
            for it in node_items(sc.get("slots")):
                if not isinstance(it, dict):
                    continue
                content = it.get("content") if isinstance(it.get("content"), dict) else {}
                kind = "folder" if it.get("sceneNodeType") == "folder" else str(content.get("nodeType", ""))
                wt = content.get("type") if kind == "WidgetNode" else None
                fn = content.get("filename")
                slots.append(SlSlot(str(it.get("name", "")), kind, _num(it.get("x"), 0.0), _num(it.get("y"), 0.0),
                                    _num(it.get("scaleX"), 1.0), _num(it.get("scaleY"), 1.0),
                                    fn if isinstance(fn, str) else None,
                                    int(wt) if isinstance(wt, (int, float)) and not isinstance(wt, bool) else None, it))
            scenes[str(sc.get("name", ""))] = tuple(slots)
    except StreamlabsError as exc:
        raise StreamlabsError(f"{path}: {exc}") from None
    return SlOverlay(scenes, assets, obj)


def load_overlay(path: str | Path) -> SlOverlay:
    """A .overlay zip: its config.json and the asset names beside it."""
    import zipfile

    p = Path(path)
    try:
        with zipfile.ZipFile(p) as z:
            names = z.namelist()
            if "config.json" not in names:
                raise StreamlabsError(f"{p}: no config.json in the overlay zip")
            obj = json.loads(z.read("config.json"))
    except (OSError, zipfile.BadZipFile) as exc:
        raise StreamlabsError(f"{p}: not a readable zip: {exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StreamlabsError(f"{p}: config.json is not valid JSON: {exc}") from None
    return parse_overlay_config(obj, tuple(n for n in names if n != "config.json" and not n.endswith("/")),
                                f"{p}:config.json")
