"""Procedural shots and secondary grades for the colour-grading family's synthetic instances.

A shot is a (frames, height, width, 3) uint8 sRGB stack: a textured background plus flat-ish
coloured regions (umbrella, face ellipse, wall, sky) whose per-frame boolean masks are the GT.
Grades are applied in CIELAB or in linear light through a per-pixel weight `alpha` in [0, 1]:
`out = src + alpha * (graded - src)`, so pixels with alpha 0 stay bit-identical (the oracle grades
exactly the GT region; mutants move, blur or leak alpha). Videos are written lossless (PNG in
MOV, rgb24) so thresholds are measured without codec noise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from scipy.ndimage import gaussian_filter
from skimage.color import lab2rgb, rgb2lab

WIDTH_PX = 256
HEIGHT_PX = 144
FPS = 12  # 2 s shots at 12 fps: 24 frames keep the suite fast


def write_video(path: Path, frames: np.ndarray, fps: int = FPS) -> Path:
    """Lossless rgb24 PNG-in-MOV: decoded back bit-exact by verifiers.measure.frames."""
    import av

    path.parent.mkdir(parents=True, exist_ok=True)
    frames = np.asarray(frames, dtype=np.uint8)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("png", rate=fps)
        stream.width, stream.height = frames.shape[2], frames.shape[1]
        stream.pix_fmt = "rgb24"
        for f in frames:
            for pkt in stream.encode(av.VideoFrame.from_ndarray(np.ascontiguousarray(f), format="rgb24")):
                container.mux(pkt)
        for pkt in stream.encode():
            container.mux(pkt)
    return path


def write_masks(path: Path, masks: dict[str, np.ndarray]) -> Path:
    """GT masks as one compressed NPZ: name → (frames, height, width) bool."""
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **{k: np.asarray(v, dtype=bool) for k, v in masks.items()})
    return path


def write_shot(inst: Any, src: np.ndarray, masks: dict[str, np.ndarray], facts: dict | None = None) -> None:
    """The GT every grading instance carries (source.mov, masks.npz, shot.json = fps + `facts`) and
    the empty out/ the agent exports into. `inst` is a verifiers.synth.InstanceWriter."""
    write_video(inst.gt / "source.mov", src)
    write_masks(inst.gt / "masks.npz", masks)
    inst.write_json(inst.gt / "shot.json", {"fps": FPS, **(facts or {})})
    (inst.workdir / "out").mkdir(parents=True, exist_ok=True)


def texture(rng: np.random.Generator, n: int, h: int = HEIGHT_PX, w: int = WIDTH_PX, *, sigma_px: float = 6.0,
            amp: float = 1.0, pan_px_per_frame: float = 0.0) -> np.ndarray:
    """(n, h, w) smooth noise in about [-amp, amp], optionally panning sideways over time."""
    pad = int(abs(pan_px_per_frame) * n) + 2
    base = gaussian_filter(rng.standard_normal((h, w + pad)), sigma_px)
    base *= amp / (np.abs(base).max() + 1e-9)
    out = np.empty((n, h, w))
    for i in range(n):
        off = round(abs(pan_px_per_frame) * i)
        out[i] = base[:, off: off + w]
    return out


def flat(n: int, lab: tuple[float, float, float], h: int = HEIGHT_PX, w: int = WIDTH_PX) -> np.ndarray:
    """(n, h, w, 3) Lab stack of one colour."""
    return np.broadcast_to(np.asarray(lab, dtype=np.float64), (n, h, w, 3)).copy()


def to_rgb8(lab: np.ndarray) -> np.ndarray:
    """Lab stack → uint8 sRGB (clipped)."""
    return np.clip(np.round(lab2rgb(lab) * 255.0), 0, 255).astype(np.uint8)


def to_lab(rgb8: np.ndarray) -> np.ndarray:
    return rgb2lab(np.asarray(rgb8, dtype=np.float64) / 255.0)


def ellipse(n: int, centers: np.ndarray, radii: tuple[float, float], h: int = HEIGHT_PX,
            w: int = WIDTH_PX) -> np.ndarray:
    """(n, h, w) bool ellipses; centers is (n, 2) of (x, y) per frame."""
    yy, xx = np.mgrid[0:h, 0:w]
    out = np.zeros((n, h, w), dtype=bool)
    for i, (cx, cy) in enumerate(np.asarray(centers, dtype=float)):
        out[i] = ((xx - cx) / radii[0]) ** 2 + ((yy - cy) / radii[1]) ** 2 <= 1.0
    return out


def rect(n: int, boxes: np.ndarray, h: int = HEIGHT_PX, w: int = WIDTH_PX) -> np.ndarray:
    """(n, h, w) bool rectangles; boxes is (n, 4) of (x, y, width, height) per frame."""
    out = np.zeros((n, h, w), dtype=bool)
    for i, (x, y, bw, bh) in enumerate(np.round(np.asarray(boxes, dtype=float)).astype(int)):
        out[i, max(0, y): max(0, y + bh), max(0, x): max(0, x + bw)] = True
    return out


def path_linear(n: int, start: tuple[float, float], end: tuple[float, float]) -> np.ndarray:
    """(n, 2) positions moving linearly from start to end."""
    t = np.linspace(0.0, 1.0, n)[:, None]
    return np.asarray(start, dtype=float) * (1 - t) + np.asarray(end, dtype=float) * t


def soften(mask: np.ndarray, sigma_px: float) -> np.ndarray:
    """Per-frame Gaussian-feathered alpha from a bool mask (a soft window edge)."""
    m = np.asarray(mask, dtype=np.float64)
    if sigma_px <= 0:
        return m
    return np.stack([gaussian_filter(f, sigma_px) for f in m])


def lag(mask: np.ndarray, frames: int) -> np.ndarray:
    """The mask of `frames` frames earlier (first frame repeated): a track that trails the motion."""
    idx = np.clip(np.arange(len(mask)) - frames, 0, len(mask) - 1)
    return np.asarray(mask)[idx]


def blend(src8: np.ndarray, graded8: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """out = src + alpha·(graded − src), rounded; alpha 0 keeps pixels bit-identical."""
    a = np.asarray(alpha, dtype=np.float64)[..., None]
    out = src8.astype(np.float64) + a * (graded8.astype(np.float64) - src8.astype(np.float64))
    return np.clip(np.round(out), 0, 255).astype(np.uint8)


def grade_lab(src8: np.ndarray, alpha: np.ndarray, *, chroma_scale: float = 1.0, hue_deg: float = 0.0,
              dl: float = 0.0, da: float = 0.0, db: float = 0.0, l_scale: float = 1.0,
              l_pivot: float = 50.0) -> np.ndarray:
    """A secondary in Lab: scale chroma, rotate hue, scale L* about a pivot, offset L*, a*, b*.

    Only pixels with alpha > 0 are converted (speed); the rest are copied bit-identical.
    """
    alpha = np.broadcast_to(np.asarray(alpha, dtype=np.float64), src8.shape[:-1])
    sel = alpha > 0
    out = src8.copy()
    if not sel.any():
        return out
    px = src8[sel][None]
    lab = to_lab(px)
    a, b = lab[..., 1] * chroma_scale, lab[..., 2] * chroma_scale
    th = np.radians(hue_deg)
    lab[..., 1] = a * np.cos(th) - b * np.sin(th) + da
    lab[..., 2] = a * np.sin(th) + b * np.cos(th) + db
    lab[..., 0] = l_pivot + (lab[..., 0] - l_pivot) * l_scale + dl
    out[sel] = blend(px, to_rgb8(lab), alpha[sel][None])[0]
    return out


def _decode_srgb(c: np.ndarray) -> np.ndarray:
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


#: the 256 8-bit codes in linear light: the same formula per element, looked up (speed)
_SRGB8_LINEAR = _decode_srgb(np.arange(256, dtype=np.float64) / 255.0)


def grade_gain(src8: np.ndarray, alpha: np.ndarray, stops: float) -> np.ndarray:
    """Exposure in linear light by `stops`, weighted per pixel by alpha (fractional alpha = partial stops).

    Speed (near-miss bisections call this dozens of times per shot): only pixels whose exposure moves
    (stops x alpha != 0) are computed, uint8 codes are linearised by lookup; an 8-bit code at gain 1
    encodes back to itself (all 256 checked in tests/grading), so the result is the same, bit for bit."""
    ev = stops * np.broadcast_to(np.asarray(alpha, dtype=np.float64), src8.shape[:-1])
    sel = ev != 0
    out = src8.copy()
    if not sel.any():
        return out
    every = bool(sel.all())   # a whole-frame grade: no indexing
    px, ev = (src8, ev) if every else (src8[sel], ev[sel])
    lin = _SRGB8_LINEAR[px] if px.dtype == np.uint8 else _decode_srgb(px.astype(np.float64) / 255.0)
    lin = np.clip(lin * (2.0 ** ev)[..., None], 0, 1)
    enc = np.where(lin <= 0.0031308, lin * 12.92, 1.055 * lin ** (1 / 2.4) - 0.055)
    enc8 = np.clip(np.round(enc * 255.0), 0, 255).astype(np.uint8)
    if every:
        return enc8
    out[sel] = enc8
    return out


def set_lab(src8: np.ndarray, alpha: np.ndarray, target_lab: tuple[float, float, float]) -> np.ndarray:
    """Move the masked pixels' mean (per frame) to target_lab, keeping their local variation."""
    alpha = np.broadcast_to(np.asarray(alpha, dtype=np.float64), src8.shape[:-1])
    out = src8.copy()
    for i in range(len(src8)):
        sel = alpha[i] > 0
        if not sel.any():
            continue
        px = src8[i][sel][None]
        lab = to_lab(px)
        core = alpha[i][sel] > 0.5
        mean = lab[0][core].mean(axis=0) if core.any() else lab[0].mean(axis=0)
        new = lab + (np.asarray(target_lab, dtype=np.float64) - mean)
        out[i][sel] = blend(px, to_rgb8(new), alpha[i][sel][None])[0]
    return out


def drx(path: Path, nodes: list[dict[str, str]]) -> Path:
    """A node-graph export in the XML shape `verifiers.tasks.grading._shared.node_graph.drx_nodes` reads.

    Synthetic: it stands for the harness's DRX export; see docs/grading.md for what is assumed.
    """
    from xml.sax.saxutils import quoteattr

    body = "\n".join(
        "    <Node " + " ".join(f"{k}={quoteattr(str(v))}" for k, v in n.items()) + "/>" for n in nodes)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'<?xml version="1.0" encoding="UTF-8"?>\n<DRX>\n  <NodeGraph>\n{body}\n  </NodeGraph>\n</DRX>\n',
                    encoding="utf-8")
    return path


def bisect_region(render8: np.ndarray, src8: np.ndarray, mask: np.ndarray, target: float, *, above: bool,
                  apply: Any, measure: Any, max_x: float, steps: int = 10, search_stride: int = 1) -> np.ndarray:
    """`render8` with `apply(px, x)` done to the masked pixels ((1, k, 3) uint8), x found frame by frame
    (bisection over [0, max_x]) so that `measure(src_frame, new_frame, frame_mask)` sits at `target`,
    just `above` it or just below. `measure` must grow with x (it may step: the 8-bit result is what is
    measured). A per-pixel measure may search on every `search_stride`-th masked pixel (raster order,
    as the scorers sample ΔE2000). Why: near-miss pairs at a seed line, measured as the scorer does."""
    out = render8.copy()
    for i in range(len(render8)):
        sel = np.asarray(mask[i], dtype=bool)
        if not sel.any():
            continue
        part = np.zeros_like(sel)
        part.flat[np.flatnonzero(sel)[::search_stride]] = True
        px, frame, src_i = render8[i][part][None], render8[i].copy(), src8[i]

        def at(x: float, frame: np.ndarray = frame, part: np.ndarray = part, px: np.ndarray = px) -> np.ndarray:
            frame[part] = apply(px, x)[0]
            return frame

        lo, hi = 0.0, max_x
        for _ in range(steps):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if measure(src_i, at(mid), part) < target else (lo, mid)
        out[i][sel] = apply(render8[i][sel][None], hi if above else lo)[0]
    return out


def lift_to_de(render8: np.ndarray, src8: np.ndarray, mask: np.ndarray, target_de2000: float, *,
               above: bool, measure: Any = None) -> np.ndarray:
    """`render8` with the masked pixels' L* raised, frame by frame, until their ΔE2000 against `src8` is
    `target_de2000`, just `above` it or just below (a pure L* lift moves ΔE2000 monotonically). Why: a
    near-miss pair at an untouched-region line ("ΔE2000 ≤ 1.5") needs a region left *almost* alone;
    `measure(src_px, render_px)` on the masked (1, k, 3) pixels is the check's statistic, by default
    the mean per-pixel ΔE2000."""
    from verifiers.measure.colour import delta_e2000, rgb_to_lab

    # speed: a frame's bisection asks for the Lab of the same pixels at every step (the render's, to lift
    # them; the source's, to compare): each is converted once per frame (same values, same result)
    last: dict[str, Any] = {}

    def lift(px: np.ndarray, dl: float) -> np.ndarray:
        if last.get("px") is not px:
            last.update(px=px, lab=to_lab(px))
        lab = last["lab"].copy()
        lab[..., 0] += dl
        return to_rgb8(lab)

    def mean_de(a: np.ndarray, b: np.ndarray, sel: np.ndarray) -> float:
        if last.get("src") is not a or last.get("sel") is not sel:
            last.update(src=a, sel=sel, src_lab=rgb_to_lab(a[sel][None]))
        return float(delta_e2000(last["src_lab"], rgb_to_lab(b[sel][None])).mean())

    return bisect_region(render8, src8, mask, target_de2000, above=above, apply=lift, max_x=8.0, search_stride=3,
                         measure=mean_de if measure is None else lambda a, b, sel: measure(a[sel][None], b[sel][None]))

