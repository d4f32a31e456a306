"""OBS scene collection JSON (basic/scenes/<name>.json) -> typed, read-only model.

Tolerant of what OBS 27 to 32 write (proven on real saved files, tests/formats/): uuids may be
absent (before 29), groups may be listed in `groups` or among `sources`, transitions list only
configurable ones (Fade and Cut never appear). OBS 31+ (`"version": 2`) also saves relative
coordinates (`pos_rel`, `scale_rel`, `bounds_rel`, `scale_ref`) and libobs loads those, not `pos`;
OBS 31+ canvases (Aitum Vertical) are listed in `canvases` and their scenes carry `canvas_uuid`.
Items marked `group_item_backup` (copies of a group's members kept for old OBS) are skipped, as
libobs skips them on load.
Strict about shape: a file that is not JSON, is truncated, or has wrong types raises ObsFileError
naming the file and the offending key.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifiers.apps.obs.defaults import with_defaults
from verifiers.apps.obs.errors import ObsFileError
from verifiers.apps.obs.hotkeys import decode_bindings

# Alignment bits (libobs obs-defs.h).
ALIGN_CENTER, ALIGN_LEFT, ALIGN_RIGHT, ALIGN_TOP, ALIGN_BOTTOM = 0, 1, 2, 4, 8

BOUNDS_NONE, BOUNDS_STRETCH, BOUNDS_SCALE_INNER, BOUNDS_SCALE_OUTER = 0, 1, 2, 3
BOUNDS_SCALE_TO_WIDTH, BOUNDS_SCALE_TO_HEIGHT, BOUNDS_MAX_ONLY = 4, 5, 6

#: The main canvas's uuid in OBS 31+ collections (every scene without another canvas_uuid is on it).
MAIN_CANVAS_UUID = "6c69626f-6273-4c00-9d88-c5136d61696e"

#: Top-level keys holding the global audio sources (channels 1-6 of libobs's output).
GLOBAL_AUDIO_KEYS = ("DesktopAudioDevice1", "DesktopAudioDevice2", "AuxAudioDevice1", "AuxAudioDevice2",
                     "AuxAudioDevice3", "AuxAudioDevice4")

#: Fade and Cut exist in every OBS without being saved in `transitions`.
BUILTIN_TRANSITIONS = {"Fade": "fade_transition", "Cut": "cut_transition"}


@dataclass(frozen=True)
class Transform:
    """A scene item's placement, in canvas pixels of its parent scene (rotation in degrees)."""

    pos_x: float = 0.0
    pos_y: float = 0.0
    scale_x: float = 1.0
    scale_y: float = 1.0
    rot_deg: float = 0.0
    align: int = ALIGN_LEFT | ALIGN_TOP
    bounds_type: int = BOUNDS_NONE
    bounds_x: float = 0.0
    bounds_y: float = 0.0
    bounds_align: int = ALIGN_CENTER
    crop_left: int = 0
    crop_top: int = 0
    crop_right: int = 0
    crop_bottom: int = 0

    def close_to(self, other: Transform, tol_px: float = 0.5, tol_scale: float = 1e-3,
                 tol_deg: float = 0.01) -> bool:
        """Same placement within tolerances (positions/bounds in px, scale ratio, rotation)."""
        px = (self.pos_x - other.pos_x, self.pos_y - other.pos_y, self.bounds_x - other.bounds_x,
              self.bounds_y - other.bounds_y)
        crop = (self.crop_left - other.crop_left, self.crop_top - other.crop_top,
                self.crop_right - other.crop_right, self.crop_bottom - other.crop_bottom)
        return (all(abs(d) <= tol_px for d in px) and all(abs(d) <= tol_px for d in crop)
                and abs(self.scale_x - other.scale_x) <= tol_scale
                and abs(self.scale_y - other.scale_y) <= tol_scale
                and abs(self.rot_deg - other.rot_deg) <= tol_deg
                and self.align == other.align and self.bounds_type == other.bounds_type
                and (self.bounds_type == BOUNDS_NONE or self.bounds_align == other.bounds_align))


@dataclass(frozen=True)
class SceneItem:
    """One layer of a scene. `index` 0 is the bottom layer (OBS's items[0])."""

    id: int
    source_name: str
    scene_name: str
    index: int
    visible: bool
    locked: bool
    transform: Transform
    source_uuid: str | None = None
    blend_type: str = "normal"
    show_transition: dict[str, Any] = field(default_factory=dict)
    hide_transition: dict[str, Any] = field(default_factory=dict)
    pos_rel: tuple[float, float] | None = None      # OBS 31+: (pos - canvas centre) / (canvas height / 2)
    bounds_rel: tuple[float, float] | None = None   # OBS 31+: bounds / (canvas height / 2)
    scale_rel: tuple[float, float] | None = None
    scale_ref: tuple[float, float] | None = None

    @property
    def name(self) -> str:
        return self.source_name

    def loaded_pos_px(self, canvas_px: tuple[int, int]) -> tuple[float, float]:
        """Where libobs 31+ puts the item on a canvas of this size: from `pos_rel` when saved
        together with `scale_rel` and `scale_ref` (obs-scene.c scene_load_item), else `pos`."""
        if self.pos_rel is None or self.scale_rel is None or self.scale_ref is None:
            return (self.transform.pos_x, self.transform.pos_y)
        half_h = canvas_px[1] / 2.0
        return (self.pos_rel[0] * half_h + canvas_px[0] / 2.0, self.pos_rel[1] * half_h + half_h)

    def loaded_bounds_px(self, canvas_px: tuple[int, int]) -> tuple[float, float]:
        """Bounds as libobs 31+ loads them: from `bounds_rel` when present, else `bounds`."""
        if self.bounds_rel is None:
            return (self.transform.bounds_x, self.transform.bounds_y)
        half_h = canvas_px[1] / 2.0
        return (self.bounds_rel[0] * half_h, self.bounds_rel[1] * half_h)

    def rel_disagrees(self, canvas_px: tuple[int, int], tol_px: float = 0.5) -> bool:
        """True when `pos`/`bounds` were edited without `pos_rel`/`bounds_rel` (OBS 31+ would load
        the relative values and ignore the edit). Files OBS saved itself always agree."""
        px, py = self.loaded_pos_px(canvas_px)
        bx, by = self.loaded_bounds_px(canvas_px)
        t = self.transform
        return max(abs(px - t.pos_x), abs(py - t.pos_y), abs(bx - t.bounds_x), abs(by - t.bounds_y)) > tol_px


@dataclass(frozen=True)
class Filter:
    """A source filter; `settings` are effective (defaults filled in), `raw_settings` as saved."""

    name: str
    kind: str
    enabled: bool
    settings: dict[str, Any]
    raw_settings: dict[str, Any]
    index: int


@dataclass(frozen=True)
class Source:
    """A source as saved: inputs, scenes and groups alike (scenes also appear in `scenes`)."""

    name: str
    kind: str            # `id` (e.g. "ffmpeg_source", "scene")
    versioned_id: str    # what OBS instantiates (e.g. "color_source_v3")
    uuid: str | None
    settings: dict[str, Any]
    raw_settings: dict[str, Any]
    filters: tuple[Filter, ...]
    hotkeys: dict[str, tuple[str, ...]]
    muted: bool
    volume: float        # linear multiplier (1.0 = 0 dB)
    balance: float
    mixers: int          # audio track bitmask, bit 0 = track 1
    monitoring_type: int
    sync_ns: int
    enabled: bool
    private_settings: dict[str, Any]
    canvas_uuid: str | None = None  # OBS 31+: the canvas a scene belongs to (MAIN_CANVAS_UUID = main)

    @property
    def volume_db(self) -> float:
        return 20.0 * math.log10(self.volume) if self.volume > 0 else -math.inf

    @property
    def tracks(self) -> tuple[int, ...]:
        """Audio tracks (1-based) the source is routed to."""
        return tracks_from_mask(self.mixers)

    @property
    def sync_offset_ms(self) -> float:
        return self.sync_ns / 1e6

    def filter(self, name: str) -> Filter | None:
        return next((f for f in self.filters if f.name == name), None)

    def filters_of_kind(self, kind_prefix: str) -> list[Filter]:
        """Filters whose kind starts with the prefix ("noise_suppress_filter" matches _v2)."""
        return [f for f in self.filters if f.kind.startswith(kind_prefix)]


@dataclass(frozen=True)
class Scene:
    """A scene (or group) with its items bottom-to-top and its transition override."""

    name: str
    uuid: str | None
    items: tuple[SceneItem, ...]
    source: Source
    is_group: bool = False
    custom_size: tuple[int, int] | None = None
    transition_override: str | None = None
    transition_override_duration_ms: int | None = None
    canvas_uuid: str | None = None
    backup_items: int = 0  # group_item_backup entries skipped (libobs ignores them on load)

    def item(self, source_name: str) -> SceneItem | None:
        """The topmost item showing `source_name` (a scene can show a source twice)."""
        for it in reversed(self.items):
            if it.source_name == source_name:
                return it
        return None

    def item_names(self) -> list[str]:
        """Source names bottom -> top."""
        return [it.source_name for it in self.items]

    def is_topmost(self, source_name: str, among: list[str] | None = None,
                   visible_only: bool = True) -> bool:
        """True when `source_name` is above every other (visible) item, or every item in `among`."""
        items = [it for it in self.items if it.visible or not visible_only]
        if among is not None:
            items = [it for it in items if it.source_name in among or it.source_name == source_name]
        return bool(items) and items[-1].source_name == source_name

    @property
    def select_hotkeys(self) -> tuple[str, ...]:
        return self.source.hotkeys.get("OBSBasic.SelectScene", ())


@dataclass(frozen=True)
class Transition:
    name: str
    kind: str
    settings: dict[str, Any]
    uuid: str | None = None


@dataclass(frozen=True)
class Canvas:
    """One entry of OBS 31+'s `canvases` (`{"info": {"name", "uuid", "private", "flags"}}`)."""

    name: str
    uuid: str
    flags: int = 0
    private: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Collection:
    name: str
    path: str
    current_scene: str | None
    current_program_scene: str | None
    scene_order: tuple[str, ...]
    scenes: dict[str, Scene]
    sources: dict[str, Source]
    transitions: dict[str, Transition]
    current_transition: str | None
    transition_duration_ms: int
    modules: dict[str, Any]
    raw: dict[str, Any] = field(repr=False)
    version: int = 1                                     # 2 from OBS 31 (relative coordinates)
    resolution_px: tuple[int, int] | None = None         # canvas size at save time (30.1+ write it)
    canvases: tuple[Canvas, ...] = ()                    # OBS 31+ extra canvases (Aitum Vertical)
    audio_devices: dict[str, str] = field(default_factory=dict)  # "AuxAudioDevice1" -> source name

    def canvas(self, name: str) -> Canvas | None:
        return next((c for c in self.canvases if c.name == name), None)

    def scenes_on_canvas(self, canvas: str | None = None) -> list[Scene]:
        """Scenes of one canvas by name or uuid (None = the main canvas), groups excluded."""
        if canvas is None:
            uuid: str | None = MAIN_CANVAS_UUID
        else:
            c = next((c for c in self.canvases if canvas in (c.name, c.uuid)), None)
            uuid = c.uuid if c else canvas
        return [s for s in self.scenes.values() if not s.is_group
                and (s.canvas_uuid or MAIN_CANVAS_UUID) == uuid]

    def scene(self, name: str) -> Scene:
        try:
            return self.scenes[name]
        except KeyError:
            raise KeyError(f"no scene {name!r} in collection {self.name!r}") from None

    def source(self, name: str) -> Source:
        try:
            return self.sources[name]
        except KeyError:
            raise KeyError(f"no source {name!r} in collection {self.name!r}") from None

    @property
    def inputs(self) -> dict[str, Source]:
        """Sources that are neither scenes nor groups, nor the global audio devices (Desktop Audio,
        Mic/Aux: in `sources` and `audio_devices`, not in OBS's Sources list, so not counted here)."""
        globals_ = set(self.audio_devices.values())
        return {n: s for n, s in self.sources.items() if s.kind not in ("scene", "group") and n not in globals_}

    def transition(self, name: str) -> Transition:
        if name in self.transitions:
            return self.transitions[name]
        if name in BUILTIN_TRANSITIONS:
            return Transition(name, BUILTIN_TRANSITIONS[name], {})
        raise KeyError(f"no transition {name!r} in collection {self.name!r}")

    def scenes_using(self, source_name: str) -> list[str]:
        return [s.name for s in self.scenes.values() if any(it.source_name == source_name for it in s.items)]

    def nested_scenes(self, scene_name: str) -> list[str]:
        """Scenes/groups shown as items of `scene_name` (direct children only)."""
        return [it.source_name for it in self.scene(scene_name).items if it.source_name in self.scenes]

    def advanced_scene_switcher(self) -> dict[str, Any]:
        """The advanced-scene-switcher plugin's saved data ({} when the plugin never saved)."""
        mod = self.modules.get("advanced-scene-switcher")
        return mod if isinstance(mod, dict) else {}

    def macros(self) -> list[Macro]:
        """advanced-scene-switcher macros in saved order (groups included, flagged)."""
        macros = self.advanced_scene_switcher().get("macros", [])
        if not isinstance(macros, list):
            return []
        return [Macro.from_saved(m) for m in macros if isinstance(m, dict)]

    def macro(self, name: str) -> Macro | None:
        return next((m for m in self.macros() if m.name == name), None)


@dataclass(frozen=True)
class Macro:
    """One advanced-scene-switcher macro: conditions and actions are kept as saved dicts; each
    has an "id" (e.g. condition "scene", "audio"; action "scene_switch", "recording")."""

    name: str
    paused: bool
    is_group: bool
    conditions: tuple[dict[str, Any], ...]
    actions: tuple[dict[str, Any], ...]
    else_actions: tuple[dict[str, Any], ...]
    raw: dict[str, Any] = field(repr=False)

    @property
    def condition_ids(self) -> list[str]:
        return [str(c.get("id", "")) for c in self.conditions]

    @property
    def action_ids(self) -> list[str]:
        return [str(a.get("id", "")) for a in self.actions]

    @classmethod
    def from_saved(cls, m: dict[str, Any]) -> Macro:
        def dicts(key: str) -> tuple[dict[str, Any], ...]:
            v = m.get(key, [])
            return tuple(x for x in v if isinstance(x, dict)) if isinstance(v, list) else ()

        return cls(str(m.get("name", "")), bool(m.get("pause", False)), bool(m.get("group", False)),
                   dicts("conditions"), dicts("actions"), dicts("elseActions"), m)


def tracks_from_mask(mask: int) -> tuple[int, ...]:
    """Bitmask (bit 0 = track 1) -> 1-based track numbers, for OBS's six tracks."""
    return tuple(i + 1 for i in range(6) if mask & (1 << i))


def mask_from_tracks(tracks: list[int] | tuple[int, ...]) -> int:
    return sum(1 << (t - 1) for t in tracks)


# ---- parsing -------------------------------------------------------------------------------

def load_collection(path: str | Path) -> Collection:
    """Read and parse a scene collection file; ObsFileError names the file on any problem."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ObsFileError(p, f"cannot read: {exc.strerror or exc}") from None
    if not data.strip():
        raise ObsFileError(p, "empty file")
    try:
        obj = json.loads(data)
    except UnicodeDecodeError:
        raise ObsFileError(p, "not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        hint = " (truncated?)" if exc.pos >= len(data.rstrip()) - 1 else ""
        raise ObsFileError(p, f"not valid JSON{hint}: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    return parse_collection(obj, str(p))


def parse_collection(obj: Any, path: str = "<collection>") -> Collection:
    r = _Reader(path)
    top = r.obj(obj, "top level")
    sources_raw = r.list(top.get("sources", []), "sources")
    groups_raw = r.list(top.get("groups", []), "groups")

    sources: dict[str, Source] = {}
    for i, s in enumerate([*sources_raw, *groups_raw]):
        src = _parse_source(r, r.obj(s, f"sources[{i}]"), f"sources[{i}]")
        sources[src.name] = src
    # Global audio devices (Desktop Audio, Mic/Aux) are saved at the top level, not in `sources`,
    # and scenes may show them as items (OBS 32 real files do).
    audio_devices: dict[str, str] = {}
    for key in GLOBAL_AUDIO_KEYS:
        if key in top:
            src = _parse_source(r, r.obj(top[key], key), key)
            if src.name not in sources:  # a same-named ordinary source wins, as a name lookup in OBS would
                sources[src.name] = src
                audio_devices[key] = src.name

    scenes: dict[str, Scene] = {}
    for src in sources.values():
        if src.kind in ("scene", "group"):
            scenes[src.name] = _parse_scene(r, src)

    transitions: dict[str, Transition] = {}
    for i, t in enumerate(r.list(top.get("transitions", []), "transitions")):
        t = r.obj(t, f"transitions[{i}]")
        kind = r.str(t.get("id", ""), f"transitions[{i}].id")
        name = r.str(t.get("name", ""), f"transitions[{i}].name")
        settings = r.obj(t.get("settings", {}), f"transitions[{i}].settings")
        transitions[name] = Transition(name, kind, with_defaults(kind, settings), t.get("uuid"))

    order = []
    for i, entry in enumerate(r.list(top.get("scene_order", []), "scene_order")):
        entry = r.obj(entry, f"scene_order[{i}]")
        order.append(r.str(entry.get("name", ""), f"scene_order[{i}].name"))
    if not order:  # very old or hand-written files: fall back to source order
        order = [n for n, s in scenes.items() if not s.is_group]

    canvases = []
    for i, c in enumerate(r.list(top.get("canvases", []), "canvases")):
        c = r.obj(c, f"canvases[{i}]")
        info = r.obj(c.get("info", c), f"canvases[{i}].info")
        canvases.append(Canvas(r.str(info.get("name", ""), f"canvases[{i}].name"),
                               r.str(info.get("uuid", ""), f"canvases[{i}].uuid"),
                               r.int(info.get("flags", 0), f"canvases[{i}].flags"),
                               r.bool(info.get("private", False), f"canvases[{i}].private"), c))
    res = top.get("resolution")
    resolution = None
    if isinstance(res, dict):
        resolution = (r.int(res.get("x", 0), "resolution.x"), r.int(res.get("y", 0), "resolution.y"))
    modules = top.get("modules", {})
    return Collection(
        name=r.str(top.get("name", ""), "name"),
        path=path,
        current_scene=_opt_str(r, top.get("current_scene"), "current_scene"),
        current_program_scene=_opt_str(r, top.get("current_program_scene"), "current_program_scene"),
        scene_order=tuple(order),
        scenes=scenes,
        sources=sources,
        transitions=transitions,
        current_transition=_opt_str(r, top.get("current_transition"), "current_transition"),
        transition_duration_ms=r.int(top.get("transition_duration", 300), "transition_duration"),
        modules=modules if isinstance(modules, dict) else {},
        raw=top,
        version=r.int(top.get("version", 1), "version"),
        resolution_px=resolution,
        canvases=tuple(canvases),
        audio_devices=audio_devices,
    )


def _parse_source(r: _Reader, s: dict[str, Any], where: str) -> Source:
    name = r.str(s.get("name"), f"{where}.name")
    kind = r.str(s.get("id", ""), f"{where}.id")
    vid = r.str(s.get("versioned_id", kind), f"{where}.versioned_id")
    raw_settings = r.obj(s.get("settings", {}), f"{where}.settings")
    filters = []
    for j, f in enumerate(r.list(s.get("filters", []), f"{where}.filters")):
        f = r.obj(f, f"{where}.filters[{j}]")
        fkind = r.str(f.get("versioned_id", f.get("id", "")), f"{where}.filters[{j}].id")
        fset = r.obj(f.get("settings", {}), f"{where}.filters[{j}].settings")
        filters.append(Filter(r.str(f.get("name", ""), f"{where}.filters[{j}].name"), fkind,
                              r.bool(f.get("enabled", True), f"{where}.filters[{j}].enabled"),
                              with_defaults(fkind, fset), fset, j))
    hotkeys_raw = r.obj(s.get("hotkeys", {}), f"{where}.hotkeys")
    hotkeys = {k: decode_bindings(v) for k, v in hotkeys_raw.items()}
    return Source(
        name=name, kind=kind, versioned_id=vid, uuid=s.get("uuid"),
        settings=with_defaults(vid, raw_settings), raw_settings=raw_settings,
        filters=tuple(filters), hotkeys=hotkeys,
        muted=r.bool(s.get("muted", False), f"{where}.muted"),
        volume=r.num(s.get("volume", 1.0), f"{where}.volume"),
        balance=r.num(s.get("balance", 0.5), f"{where}.balance"),
        mixers=r.int(s.get("mixers", 0x3F), f"{where}.mixers"),
        monitoring_type=r.int(s.get("monitoring_type", 0), f"{where}.monitoring_type"),
        sync_ns=r.int(s.get("sync", 0), f"{where}.sync"),
        enabled=r.bool(s.get("enabled", True), f"{where}.enabled"),
        private_settings=r.obj(s.get("private_settings", {}), f"{where}.private_settings"),
        canvas_uuid=_opt_str(r, s.get("canvas_uuid"), f"{where}.canvas_uuid"),
    )


def _parse_scene(r: _Reader, src: Source) -> Scene:
    where = f"scene {src.name!r}"
    st = src.raw_settings
    items: list[SceneItem] = []
    backups = 0
    for i, it in enumerate(r.list(st.get("items", []), f"{where}.items")):
        w = f"{where}.items[{i}]"
        it = r.obj(it, w)
        if it.get("group_item_backup") is True:  # libobs scene_load_item returns at once on these
            backups += 1
            continue
        pos = r.obj(it.get("pos", {}), f"{w}.pos")
        scale = r.obj(it.get("scale", {}), f"{w}.scale")
        bounds = r.obj(it.get("bounds", {}), f"{w}.bounds")
        tf = Transform(
            pos_x=r.num(pos.get("x", 0.0), f"{w}.pos.x"), pos_y=r.num(pos.get("y", 0.0), f"{w}.pos.y"),
            scale_x=r.num(scale.get("x", 1.0), f"{w}.scale.x"),
            scale_y=r.num(scale.get("y", 1.0), f"{w}.scale.y"),
            rot_deg=r.num(it.get("rot", 0.0), f"{w}.rot"),
            align=r.int(it.get("align", ALIGN_LEFT | ALIGN_TOP), f"{w}.align"),
            bounds_type=r.int(it.get("bounds_type", BOUNDS_NONE), f"{w}.bounds_type"),
            bounds_x=r.num(bounds.get("x", 0.0), f"{w}.bounds.x"),
            bounds_y=r.num(bounds.get("y", 0.0), f"{w}.bounds.y"),
            bounds_align=r.int(it.get("bounds_align", 0), f"{w}.bounds_align"),
            crop_left=r.int(it.get("crop_left", 0), f"{w}.crop_left"),
            crop_top=r.int(it.get("crop_top", 0), f"{w}.crop_top"),
            crop_right=r.int(it.get("crop_right", 0), f"{w}.crop_right"),
            crop_bottom=r.int(it.get("crop_bottom", 0), f"{w}.crop_bottom"),
        )
        items.append(SceneItem(
            id=r.int(it.get("id", i + 1), f"{w}.id"), source_name=r.str(it.get("name"), f"{w}.name"),
            scene_name=src.name, index=len(items), visible=r.bool(it.get("visible", True), f"{w}.visible"),
            locked=r.bool(it.get("locked", False), f"{w}.locked"), transform=tf,
            source_uuid=it.get("source_uuid"), blend_type=str(it.get("blend_type", "normal")),
            show_transition=it.get("show_transition") if isinstance(it.get("show_transition"), dict) else {},
            hide_transition=it.get("hide_transition") if isinstance(it.get("hide_transition"), dict) else {},
            pos_rel=_vec(r, it.get("pos_rel"), f"{w}.pos_rel"), bounds_rel=_vec(r, it.get("bounds_rel"), f"{w}.bounds_rel"),
            scale_rel=_vec(r, it.get("scale_rel"), f"{w}.scale_rel"), scale_ref=_vec(r, it.get("scale_ref"), f"{w}.scale_ref"),
        ))
    custom = None
    if st.get("custom_size"):
        custom = (r.int(st.get("cx", 0), f"{where}.cx"), r.int(st.get("cy", 0), f"{where}.cy"))
    ps = src.private_settings
    override = ps.get("transition") if isinstance(ps.get("transition"), str) and ps.get("transition") else None
    dur = ps.get("transition_duration")
    return Scene(src.name, src.uuid, tuple(items), src, is_group=src.kind == "group", custom_size=custom,
                 transition_override=override,
                 transition_override_duration_ms=int(dur) if isinstance(dur, (int, float)) and override else None,
                 canvas_uuid=src.canvas_uuid, backup_items=backups)


def _vec(r: _Reader, v: Any, where: str) -> tuple[float, float] | None:
    if v is None:
        return None
    v = r.obj(v, where)
    return (r.num(v.get("x", 0.0), f"{where}.x"), r.num(v.get("y", 0.0), f"{where}.y"))


def _opt_str(r: _Reader, v: Any, where: str) -> str | None:
    return None if v is None else r.str(v, where)


class _Reader:
    """Type-checked access that turns wrong shapes into ObsFileError naming file and key."""

    def __init__(self, path: str) -> None:
        self.path = path

    def _fail(self, where: str, want: str, got: Any) -> ObsFileError:
        return ObsFileError(self.path, f"{where}: expected {want}, got {type(got).__name__}")

    def obj(self, v: Any, where: str) -> dict[str, Any]:
        if not isinstance(v, dict):
            raise self._fail(where, "an object", v)
        return v

    def list(self, v: Any, where: str) -> list[Any]:
        if not isinstance(v, list):
            raise self._fail(where, "a list", v)
        return v

    def str(self, v: Any, where: str) -> str:
        if not isinstance(v, str):
            raise self._fail(where, "a string", v)
        return v

    def bool(self, v: Any, where: str) -> bool:
        if not isinstance(v, bool):
            raise self._fail(where, "true/false", v)
        return v

    def num(self, v: Any, where: str) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self._fail(where, "a number", v)
        return float(v)

    def int(self, v: Any, where: str) -> int:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
            raise self._fail(where, "an integer", v)
        return int(v)
