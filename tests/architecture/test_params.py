"""Typed params: catalog params become frozen dataclasses, with errors naming the field."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from verifiers.catalog import CatalogError, load_catalog, parse_catalog_file
from verifiers.params import ParamsError, build_params, check_unit_names
from verifiers.paramtypes.streaming import CamGeometry


def test_catalog_params_are_typed_at_load() -> None:
    spec = load_catalog().get("R06.12.01.01-T01").check("cam_geometry")
    assert spec.typed == CamGeometry(bounds_px=(480, 270), pos_px=(1416, 786), margin_px=24, tolerance_px=2.0)
    assert isinstance(spec.typed.tolerance_px, float)


@pytest.mark.parametrize("raw, msg", [
    ({"bounds_px": [480, 270], "pos_px": [1416, 786], "margin_px": 24}, "missing param tolerance_px"),
    ({"bounds_px": [480, 270], "pos_px": [1416, 786], "margin_px": 24, "tolerance_px": 2, "tol": 1},
     "unknown param"),
    ({"bounds_px": [480], "pos_px": [1416, 786], "margin_px": 24, "tolerance_px": 2}, "bounds_px"),
    ({"bounds_px": [480, 270], "pos_px": [1416, 786], "margin_px": "24", "tolerance_px": 2}, "margin_px"),
    ({"bounds_px": [480, 270], "pos_px": [1416, 786], "margin_px": True, "tolerance_px": 2}, "margin_px"),
])
def test_bad_params_name_the_field(raw: dict, msg: str) -> None:
    with pytest.raises(ParamsError, match=msg):
        build_params(CamGeometry, raw)


def test_a_wrong_param_in_the_yaml_is_a_catalog_error_naming_task_and_check() -> None:
    text = """
family: streaming
tasks:
  - id: R06.12.01.01-T01
    title: t
    checks:
      - {name: scenes_sources, weight: 25, params: {scene_count: 3, canvas_px: [1920, 1080]}}
      - {name: cam_geometry, weight: 75, params: {bounds_px: [480, 270], pos_px: [1, 2], margin_px: 24, tolerance: 2}}
"""
    with pytest.raises(CatalogError, match=r"R06.12.01.01-T01 check 'cam_geometry': unknown param\(s\) tolerance"):
        parse_catalog_file(text, "streaming.yaml")


def test_numeric_fields_carry_units() -> None:
    @dataclass(frozen=True)
    class Bad:
        tolerance: float
        delay_ms: int
        name: str

    assert check_unit_names(Bad) == ["tolerance"]
