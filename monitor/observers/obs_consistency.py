"""Compare what OBS showed live (an observer snapshot) with the collection file it saved.

A saved file that does not match the last live state is evidence of outside edits (someone wrote
the JSON by hand instead of using OBS) or of a save that never happened. The comparison covers
what tasks score: scenes and their order, items bottom-to-top with visibility and transforms,
input kinds, mute/volume/tracks, filters in order with effective settings, the current program
scene and transition.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from verifiers.apps.obs.collection import Collection, Transform, tracks_from_mask
from verifiers.apps.obs.defaults import with_defaults


@dataclass(frozen=True)
class Difference:
    path: str      # e.g. "scene 'Live' / item 'Cam' / transform"
    live: Any
    saved: Any

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "live": self.live, "saved": self.saved}


def _transform(d: dict[str, Any]) -> Transform:
    return Transform(**{k: (int(v) if k in ("align", "bounds_type", "bounds_align") or k.startswith("crop_")
                            else float(v)) for k, v in d.items()})


def _settings_equal(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_settings_equal(a[k], b[k]) for k in a)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-6)
    return a == b


def compare(live: dict[str, Any], saved: Collection, *, check_current: bool = True) -> list[Difference]:
    """Differences between a snapshot `state` (ObsObserver) and a parsed collection; [] = agree."""
    diffs: list[Difference] = []

    live_order = [s["name"] for s in live.get("scenes", [])]
    if live_order != list(saved.scene_order):
        diffs.append(Difference("scene order", live_order, list(saved.scene_order)))
    if check_current and live.get("current_program_scene") != saved.current_program_scene:
        diffs.append(Difference("current program scene", live.get("current_program_scene"),
                                saved.current_program_scene))

    for ls in live.get("scenes", []):
        name = ls["name"]
        if name not in saved.scenes:
            continue
        sc = saved.scenes[name]
        live_items = [it["source_name"] for it in ls.get("items", [])]
        if live_items != sc.item_names():
            diffs.append(Difference(f"scene {name!r} / items bottom->top", live_items, sc.item_names()))
            continue
        for li, si in zip(ls.get("items", []), sc.items, strict=True):
            where = f"scene {name!r} / item {si.source_name!r}"
            if li.get("visible") != si.visible:
                diffs.append(Difference(f"{where} / visible", li.get("visible"), si.visible))
            ltf = _transform(li["transform"])
            if not ltf.close_to(si.transform):
                diffs.append(Difference(f"{where} / transform", li["transform"], si.transform.__dict__))
        if "transition_override" in ls:
            lo = ls["transition_override"]
            if (lo.get("name") or None) != sc.transition_override:
                diffs.append(Difference(f"scene {name!r} / transition override", lo.get("name"),
                                        sc.transition_override))

    for name, li in live.get("inputs", {}).items():
        src = saved.sources.get(name)
        if src is None:
            diffs.append(Difference(f"input {name!r}", "present", "missing"))
            continue
        where = f"input {name!r}"
        if li.get("kind") not in (src.versioned_id, src.kind):
            diffs.append(Difference(f"{where} / kind", li.get("kind"), src.versioned_id))
        if "muted" in li and li["muted"] != src.muted:
            diffs.append(Difference(f"{where} / muted", li["muted"], src.muted))
        if li.get("volume_mul") is not None and not math.isclose(li["volume_mul"], src.volume, abs_tol=1e-4):
            diffs.append(Difference(f"{where} / volume", li["volume_mul"], src.volume))
        if "tracks" in li and tuple(li["tracks"]) != tracks_from_mask(src.mixers):
            diffs.append(Difference(f"{where} / tracks", li["tracks"], list(src.tracks)))
        if "settings" in li:
            kind = src.versioned_id
            if not _settings_equal(with_defaults(kind, li["settings"]), src.settings):
                diffs.append(Difference(f"{where} / settings", li["settings"], src.raw_settings))
    for name in saved.inputs:
        if name not in live.get("inputs", {}):
            diffs.append(Difference(f"input {name!r}", "missing", "present"))

    for name, lfilters in live.get("filters", {}).items():
        src = saved.sources.get(name)
        saved_f = list(src.filters) if src else []
        if [f.get("filterName") for f in lfilters] != [f.name for f in saved_f]:
            diffs.append(Difference(f"source {name!r} / filters", [f.get("filterName") for f in lfilters],
                                    [f.name for f in saved_f]))
            continue
        for lf, sf in zip(lfilters, saved_f, strict=True):
            where = f"source {name!r} / filter {sf.name!r}"
            if bool(lf.get("filterEnabled")) != sf.enabled:
                diffs.append(Difference(f"{where} / enabled", lf.get("filterEnabled"), sf.enabled))
            if not _settings_equal(with_defaults(sf.kind, lf.get("filterSettings") or {}), sf.settings):
                diffs.append(Difference(f"{where} / settings", lf.get("filterSettings"), sf.raw_settings))
    for name, src in saved.sources.items():
        if src.filters and name not in live.get("filters", {}) and (name in live.get("inputs", {})
                                                                     or name in live_order):
            diffs.append(Difference(f"source {name!r} / filters", [], [f.name for f in src.filters]))

    tr = live.get("transition") or {}
    if check_current and tr.get("name") and tr.get("name") != saved.current_transition:
        diffs.append(Difference("current transition", tr.get("name"), saved.current_transition))
    if check_current and tr.get("duration_ms") is not None and tr["duration_ms"] != saved.transition_duration_ms:
        diffs.append(Difference("transition duration", tr["duration_ms"], saved.transition_duration_ms))
    return diffs
