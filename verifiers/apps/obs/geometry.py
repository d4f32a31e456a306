"""Where a scene item ends up on the canvas: the same arithmetic as libobs' update_item_transform.

Tasks say "Cam at 480x270 in the bottom-right corner"; OBS stores pos + align + scale or bounds
+ crop. `rendered_rect` turns the stored transform and the source's size into the rectangle the
viewer sees (rotation 0 only: a rotated item gets its axis-aligned bounding box, flagged).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from verifiers.apps.obs.collection import (
    ALIGN_BOTTOM,
    ALIGN_LEFT,
    ALIGN_RIGHT,
    ALIGN_TOP,
    BOUNDS_MAX_ONLY,
    BOUNDS_NONE,
    BOUNDS_SCALE_INNER,
    BOUNDS_SCALE_OUTER,
    BOUNDS_SCALE_TO_HEIGHT,
    BOUNDS_SCALE_TO_WIDTH,
    BOUNDS_STRETCH,
    Collection,
    Source,
    Transform,
)


@dataclass(frozen=True)
class Rect:
    """Axis-aligned rectangle in canvas pixels (x, y = top-left)."""

    x: float
    y: float
    w: float
    h: float
    rotated: bool = False

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def bottom(self) -> float:
        return self.y + self.h

    def close_to(self, other: Rect, tol_px: float = 1.0) -> bool:
        return all(abs(a - b) <= tol_px for a, b in
                   ((self.x, other.x), (self.y, other.y), (self.w, other.w), (self.h, other.h)))

    def intersection_area(self, other: Rect) -> float:
        w = min(self.right, other.right) - max(self.x, other.x)
        h = min(self.bottom, other.bottom) - max(self.y, other.y)
        return max(0.0, w) * max(0.0, h)

    def as_tuple(self) -> tuple[float, float, float, float]:
        return (self.x, self.y, self.w, self.h)


def _align_offset(align: int, cx: float, cy: float) -> tuple[float, float]:
    """libobs add_alignment: how far the alignment point is from the top-left."""
    ox = 0.0 if align & ALIGN_LEFT else cx if align & ALIGN_RIGHT else cx / 2.0
    oy = 0.0 if align & ALIGN_TOP else cy if align & ALIGN_BOTTOM else cy / 2.0
    return ox, oy


def rendered_rect(tf: Transform, source_w_px: float, source_h_px: float) -> Rect:
    """The content's rectangle on the parent canvas for a source of the given (uncropped) size."""
    cx = max(0.0, source_w_px - tf.crop_left - tf.crop_right)
    cy = max(0.0, source_h_px - tf.crop_top - tf.crop_bottom)
    sx, sy = _as_float32(tf.scale_x), _as_float32(tf.scale_y)  # libobs keeps scale as float: 1e-304 is 0
    origin_x = origin_y = 0.0
    if tf.bounds_type != BOUNDS_NONE and cx > 0 and cy > 0 and sx != 0 and sy != 0:
        width, height = cx * abs(sx), cy * abs(sy)
        bt = tf.bounds_type
        if bt == BOUNDS_MAX_ONLY and (width > tf.bounds_x or height > tf.bounds_y):
            bt = BOUNDS_SCALE_INNER
        if bt in (BOUNDS_SCALE_INNER, BOUNDS_SCALE_OUTER):
            item_aspect = width / height
            bounds_aspect = tf.bounds_x / tf.bounds_y if tf.bounds_y else math.inf
            use_width = bounds_aspect < item_aspect
            if tf.bounds_type == BOUNDS_SCALE_OUTER:
                use_width = not use_width
            mul = tf.bounds_x / width if use_width else tf.bounds_y / height
            sx, sy = sx * mul, sy * mul
        elif bt == BOUNDS_SCALE_TO_WIDTH:
            mul = tf.bounds_x / width
            sx, sy = sx * mul, sy * mul
        elif bt == BOUNDS_SCALE_TO_HEIGHT:
            mul = tf.bounds_y / height
            sx, sy = sx * mul, sy * mul
        elif bt == BOUNDS_STRETCH:
            sx, sy = tf.bounds_x / cx, tf.bounds_y / cy
        width, height = cx * sx, cy * sy
        dx, dy = _align_offset(tf.bounds_align, -(tf.bounds_x - width), -(tf.bounds_y - height))
        ax, ay = _align_offset(tf.align, tf.bounds_x, tf.bounds_y)
        origin_x, origin_y = dx + ax, dy + ay
    else:
        width, height = cx * sx, cy * sy
        origin_x, origin_y = _align_offset(tf.align, width, height)
    # content spans [pos - origin, pos - origin + size]; negative scale flips around the origin
    x0, y0 = tf.pos_x - origin_x, tf.pos_y - origin_y
    xs, ys = sorted((x0, x0 + width)), sorted((y0, y0 + height))
    if tf.rot_deg % 360.0 != 0.0:
        # rotate the four corners about pos, return the bounding box
        a = math.radians(tf.rot_deg)
        ca, sa = math.cos(a), math.sin(a)
        pts = [(x - tf.pos_x, y - tf.pos_y) for x in xs for y in ys]
        rx = [tf.pos_x + px * ca - py * sa for px, py in pts]
        ry = [tf.pos_y + px * sa + py * ca for px, py in pts]
        return _finite_or_empty(Rect(min(rx), min(ry), max(rx) - min(rx), max(ry) - min(ry), rotated=True), tf)
    return _finite_or_empty(Rect(xs[0], ys[0], xs[1] - xs[0], ys[1] - ys[0]), tf)


def _as_float32(value: float) -> float:
    """The value as libobs holds it (32-bit float): subnormal-small scales flush to 0 there."""
    import struct

    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def _finite_or_empty(r: Rect, tf: Transform) -> Rect:
    """A transform whose arithmetic overflows (absurd scale × bounds) renders nothing useful: an
    empty rect at the item's position, never NaN/inf sizes that would poison geometry checks."""
    if all(math.isfinite(v) for v in (r.x, r.y, r.w, r.h)):
        return r
    x = tf.pos_x if math.isfinite(tf.pos_x) else 0.0
    y = tf.pos_y if math.isfinite(tf.pos_y) else 0.0
    return Rect(x, y, 0.0, 0.0, rotated=r.rotated)


def image_size_px(path: str | Path) -> tuple[int, int] | None:
    """Width/height of a PNG/JPEG/GIF/BMP from its header (None when unknown or unreadable)."""
    try:
        with open(path, "rb") as f:
            head = f.read(64 * 1024)
    except OSError:
        return None
    if head[:8] == b"\x89PNG\r\n\x1a\n" and len(head) >= 24:
        w, h = struct.unpack(">II", head[16:24])
        return int(w), int(h)
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        w, h = struct.unpack("<HH", head[6:10])
        return int(w), int(h)
    if head[:2] == b"BM" and len(head) >= 26:
        w, h = struct.unpack("<ii", head[18:26])
        return abs(int(w)), abs(int(h))
    if head[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(head):
            if head[i] != 0xFF:
                i += 1
                continue
            marker = head[i + 1]
            seglen = struct.unpack(">H", head[i + 2:i + 4])[0]
            if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
                h, w = struct.unpack(">HH", head[i + 5:i + 9])
                return int(w), int(h)
            i += 2 + seglen
    return None


def source_size_px(coll: Collection, source: Source, canvas_px: tuple[int, int],
                   sizes: Mapping[str, tuple[float, float]] | None = None) -> tuple[float, float] | None:
    """A source's native size: caller-given sizes first, then what the settings/files determine.

    Scenes are canvas-sized unless custom-sized; colour sources carry width/height; images are
    read from their header. Anything else (cameras, media, text) needs `sizes` or gives None.
    """
    if sizes and source.name in sizes:
        return sizes[source.name]
    if source.kind in ("scene", "group"):
        scene = coll.scenes.get(source.name)
        if scene is not None and scene.custom_size:
            return scene.custom_size
        if source.kind == "scene":
            return canvas_px
        return None
    if source.kind.startswith("color_source"):
        return float(source.settings["width"]), float(source.settings["height"])
    if source.kind == "image_source":
        file = source.settings.get("file")
        return image_size_px(file) if isinstance(file, str) and file else None
    return None


def item_rect(coll: Collection, scene_name: str, source_name: str, canvas_px: tuple[int, int] = (1920, 1080),
              sizes: Mapping[str, tuple[float, float]] | None = None) -> Rect | None:
    """Rendered rectangle of the topmost `source_name` item in `scene_name` (None: size unknown)."""
    item = coll.scene(scene_name).item(source_name)
    if item is None:
        raise KeyError(f"scene {scene_name!r} has no item {source_name!r}")
    src = coll.sources.get(source_name)
    if src is None:
        return None
    size = source_size_px(coll, src, canvas_px, sizes)
    if size is None:
        return None
    return rendered_rect(item.transform, *size)
