"""Fuzz: any JSON shape or ini text gives a parsed model or ObsFileError, never another exception."""

from __future__ import annotations

import json
import math
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from verifiers.apps.obs import (
    ObsFileError,
    Transform,
    load_collection,
    parse_basic_ini,
    parse_collection,
    read_ini,
    rendered_rect,
)

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40), st.floats(allow_nan=False),
                    st.text(max_size=8))
json_values = st.recursive(scalars, lambda kids: st.one_of(
    st.lists(kids, max_size=4), st.dictionaries(st.sampled_from(
        ["name", "id", "versioned_id", "settings", "items", "pos", "x", "y", "scale", "bounds", "sources",
         "groups", "filters", "hotkeys", "muted", "volume", "mixers", "scene_order", "transitions",
         "private_settings", "transition", "transition_duration", "custom_size", "cx", "cy", "align",
         "bounds_type", "crop_left", "visible", "modules", "macros", "key", "control"]), kids, max_size=6)),
    max_leaves=30)

# shapes close to real files, so the fuzzer reaches the item/filter code and not only the top level
near_real = st.fixed_dictionaries({
    "name": scalars,
    "sources": st.lists(st.fixed_dictionaries({
        "name": st.text(max_size=5), "id": st.sampled_from(["scene", "group", "gain_filter", "image_source"]),
        "settings": st.fixed_dictionaries({"items": st.lists(json_values, max_size=3),
                                           "custom_size": scalars, "cx": scalars}),
        "filters": st.lists(json_values, max_size=2), "hotkeys": json_values,
        "private_settings": json_values}), max_size=3),
    "scene_order": json_values, "transitions": json_values, "modules": json_values,
})


@settings(max_examples=200, deadline=None)
@given(st.one_of(json_values, near_real))
def test_collection_never_crashes(obj: object) -> None:
    try:
        coll = parse_collection(obj, "fuzz.json")
    except ObsFileError as exc:
        assert str(exc).startswith("fuzz.json: ")
        return
    for name in coll.scenes:
        coll.scene(name).item_names()
    coll.macros()


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300))
def test_ini_never_crashes(tmp_path_factory: object, text: str) -> None:
    p = Path(tmp_path_factory.mktemp("ini")) / "basic.ini"  # type: ignore[attr-defined]
    p.write_bytes(text.encode("utf-8", errors="replace"))
    try:
        parse_basic_ini(read_ini(p), str(p))
    except ObsFileError as exc:
        assert str(exc).startswith(str(p))


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200))
def test_collection_file_bytes_never_crash(tmp_path_factory: object, data: bytes) -> None:
    p = Path(tmp_path_factory.mktemp("coll")) / "c.json"  # type: ignore[attr-defined]
    p.write_bytes(data)
    try:
        load_collection(p)
    except ObsFileError as exc:
        assert str(exc).startswith(str(p))


def test_fuzz_strategies_reach_items() -> None:
    obj = {"sources": [{"name": "S", "id": "scene", "settings": {"items": [{"name": "x", "pos": {"x": 1}}]}}]}
    assert parse_collection(json.loads(json.dumps(obj))).scene("S").item_names() == ["x"]


finite = st.floats(-1e5, 1e5, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(st.builds(Transform, pos_x=finite, pos_y=finite, scale_x=finite, scale_y=finite, rot_deg=finite,
                 align=st.integers(0, 15), bounds_type=st.integers(0, 6), bounds_x=finite, bounds_y=finite,
                 bounds_align=st.integers(0, 15), crop_left=st.integers(0, 5000), crop_top=st.integers(0, 5000),
                 crop_right=st.integers(0, 5000), crop_bottom=st.integers(0, 5000)),
       st.floats(0, 8000), st.floats(0, 8000))
def test_rendered_rect_total(tf: Transform, w: float, h: float) -> None:
    r = rendered_rect(tf, w, h)
    assert r.w >= 0 and r.h >= 0


def test_subnormal_scale_with_bounds_is_an_empty_rect_not_nan() -> None:
    """Found by the fuzz test in CI: scale 5e-304 with scale-to-width bounds overflowed to inf/NaN.
    libobs keeps scale as a 32-bit float, where that scale is 0."""
    tf = Transform(pos_x=10.0, pos_y=20.0, scale_x=5.365905303213598e-304, scale_y=3.0, rot_deg=0.0, align=0,
                   bounds_type=3, bounds_x=32155.0, bounds_y=0.0, bounds_align=0,
                   crop_left=0, crop_top=0, crop_right=0, crop_bottom=0)
    r = rendered_rect(tf, 1.0, 1.0)
    assert all(math.isfinite(v) for v in (r.x, r.y, r.w, r.h)) and r.w >= 0 and r.h >= 0
