"""Aitum Vertical (obs-vertical-canvas) config and the vertical canvas's scenes.

Built from the plugin's save code (vertical-canvas.cpp save_canvas / CanvasDock::SaveSettings,
GPL-2.0) and proven on configs and collections users saved with OBS 32
(tests/formats/test_real_vertical.py). What the real files say:

* `plugin_config/vertical-canvas/config.json` is `{"canvas": [ {...}, ... ]}`, one object per
  vertical canvas: `width`, `height`, `current_scene`, `record_path`, `file_format`,
  `stream_outputs`, `backtrack*`, hotkeys, `transitions`, `transition` ... and no scenes.
* The scenes live in the OBS scene collection. With OBS 31+ the plugin adds an OBS canvas named
  "Aitum Vertical" (collection `canvases[].info`) and its scenes carry that canvas's
  `canvas_uuid`; they are not in `scene_order`. Older plugin versions kept them as ordinary scenes
  with `custom_size` true and `cx`/`cy` = the canvas size (the plugin migrates those on load).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifiers.apps._files import load_json
from verifiers.apps.obs.collection import Collection, Scene

CANVAS_NAME = "Aitum Vertical"  # vertical-canvas.cpp: #define CANVAS_NAME "Aitum Vertical"


class VerticalConfigError(ValueError):
    """Not a vertical-canvas config.json (message names the file)."""


@dataclass(frozen=True)
class VerticalCanvas:
    width_px: int
    height_px: int
    current_scene: str | None
    record_path: str | None
    file_format: str | None
    raw: dict[str, Any] = field(repr=False)


def parse_config(obj: Any, path: str = "config.json") -> list[VerticalCanvas]:
    if not isinstance(obj, dict) or not isinstance(obj.get("canvas"), list):
        raise VerticalConfigError(f"{path}: no \"canvas\" list (not a vertical-canvas config)")
    out = []
    for i, c in enumerate(obj["canvas"]):
        if not isinstance(c, dict) or not isinstance(c.get("width"), int) or not isinstance(c.get("height"), int):
            raise VerticalConfigError(f"{path}: canvas[{i}] has no integer width/height")

        def opt(key: str, c: dict[str, Any] = c) -> str | None:
            v = c.get(key)
            return v if isinstance(v, str) and v else None
        out.append(VerticalCanvas(c["width"], c["height"], opt("current_scene"), opt("record_path"),
                                  opt("file_format"), c))
    return out


def load_config(path: str | Path) -> list[VerticalCanvas]:
    return parse_config(load_json(path, VerticalConfigError), str(Path(path)))


def vertical_scenes(coll: Collection, canvas: VerticalCanvas | None = None,
                    canvas_name: str = CANVAS_NAME) -> list[Scene]:
    """The vertical canvas's scenes in a collection: those on the OBS canvas named `canvas_name`
    (OBS 31+), else (older plugin) scenes whose custom size is the vertical canvas's size."""
    if coll.canvas(canvas_name) is not None:
        return coll.scenes_on_canvas(canvas_name)
    if canvas is None:
        return []
    size = (canvas.width_px, canvas.height_px)
    return [s for s in coll.scenes.values() if not s.is_group and s.custom_size == size]
