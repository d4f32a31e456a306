"""Near-miss mutant pairs at a seed line (issue 21): just inside lowers nothing, just outside scores 0
on exactly its check. Renders are lossless, so the value measured is the value applied."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.gain import frame_gradient_ratio, linear_y, log2_gain

#: how far either side of an untouched-region line (mean ΔE2000) the pair sits
UNTOUCHED_MARGIN_DE2000 = 0.2


def render_writer(output: str) -> Callable[[Path, np.ndarray], None]:
    """The `write` of a pair for a task whose oracle is the render alone: the frames as `output`."""
    def write(folder: Path, frames: np.ndarray) -> None:
        g.write_video(folder / output, frames)
    return write


def write_pair(inst: Any, label: str, check: str, inside: np.ndarray, outside: np.ndarray,
               write: Callable[[Path, np.ndarray], None], why_inside: str, why_outside: str,
               also: list[str] | None = None) -> None:
    """Mutants near_miss_<label>_inside (expects nothing lowered) and _outside (expects `check`, and
    `also` where another check judges the same quantity at the same line);
    `write(folder, frames)` writes the render and whatever else the task's oracle carries (a DRX)."""
    write(inst.mutant(f"near_miss_{label}_inside", [], why_inside), inside)
    write(inst.mutant(f"near_miss_{label}_outside", [check, *(also or [])], why_outside), outside)


def untouched_pair(inst: Any, check: str, render8: np.ndarray, src8: np.ndarray, regions: list[np.ndarray],
                   line_de2000: float, write: Callable[[Path, np.ndarray], None], label: str = "untouched",
                   also: list[str] | None = None, measure: Any = None) -> None:
    """The pair at an untouched-region line: the oracle with each region's L* lifted (per frame, region
    by region: the scorer judges the worst region) to a mean ΔE2000 just under line − margin (passes)
    and just over line + margin (fails every frame); `measure` as in `lift_to_de` (default: the mean
    per-pixel ΔE2000 the untouched checks read)."""
    lo, hi = line_de2000 - UNTOUCHED_MARGIN_DE2000, line_de2000 + UNTOUCHED_MARGIN_DE2000
    inside, outside = render8, render8
    for region in regions:
        inside = g.lift_to_de(inside, src8, region, lo, above=False, measure=measure)
        outside = g.lift_to_de(outside, src8, region, hi, above=True, measure=measure)
    write_pair(inst, label, check, inside, outside, write, f"{label} region moved mean ΔE2000 {lo:.1f}: just inside the {line_de2000} line",
               f"{label} region moved mean ΔE2000 {hi:.1f}: just outside the {line_de2000} line", also)


def gain_to_p95(render8: np.ndarray, src8: np.ndarray, mask: np.ndarray, target_stops: float, *,
                above: bool) -> np.ndarray:
    """`render8` with the masked pixels lifted in linear light until the 95th percentile of |gain| over
    the mask (the scorers' smoothed gain map, gain.log2_gain) is `target_stops`, frame by frame, just
    `above` or just below: the pair at a "background gain ≤ x stop" line."""
    def p95(a: np.ndarray, b: np.ndarray, sel: np.ndarray) -> float:
        return float(np.percentile(np.abs(log2_gain(linear_y(a[None]), linear_y(b[None]))[0])[sel], 95))

    return g.bisect_region(render8, src8, mask, target_stops, above=above,
                           apply=lambda px, st: g.grade_gain(px, 1.0, st), measure=p95, max_x=0.5)


def bisect_frames(n_frames: int, make: Callable[[int, float], np.ndarray], measure: Callable[[int, np.ndarray], float],
                  target: float, *, x_below: float, x_above: float, above: bool, steps: int = 12) -> np.ndarray:
    """Frames `make(i, x)` ((1, h, w, 3) uint8), x set frame by frame by bisection between `x_below` (where
    `measure(i, frame)` reads below `target`) and `x_above` (where it reads above), returning the frame
    just `above` the target or just below. Why: a near-miss pair at a line on a statistic of the whole
    picture (an edge's softness, a key's width, a band of posterised codes) rather than of a region's
    pixels, which `synthkit.grading.bisect_region` covers; `measure` is the scorer's own statistic."""
    out = []
    for i in range(n_frames):
        lo, hi = x_below, x_above
        for _ in range(steps):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if measure(i, make(i, mid)) > target else (mid, hi)
        out.append(make(i, hi if above else lo))
    return np.concatenate(out)


def softened_to_ratio(src8: np.ndarray, ring: np.ndarray, graded: Callable[[int, float], np.ndarray], target_ratio: float,
                      *, soft_px: float, smooth_px: float, above: bool, steps: int = 12) -> np.ndarray:
    """Frames `graded(i, softness_px)` with the window's softness set frame by frame (between a hard edge
    and `soft_px`) so that the edge statistic of T02's no_halo and T06's soft_edges (`gain.frame_gradient_ratio`
    in `ring`: p99 gradient of the unsmoothed gain map over the source's median log2-Y gradient, both
    smoothed `smooth_px`) reads `target_ratio`, just `above` it or just below: the pair at a soft-edge line."""
    y0 = np.log2(linear_y(src8) + 1e-3)

    def ratio(i: int, frame: np.ndarray) -> float:
        raw = log2_gain(linear_y(src8[i:i + 1]), linear_y(frame), smooth_px=0)[0]
        return frame_gradient_ratio(raw, y0[i], ring[i], smooth_px)

    # the ratio falls as the edge softens: `soft_px` (the oracle's softness) reads below, a hard edge above
    return bisect_frames(len(src8), graded, ratio, target_ratio, x_below=soft_px, x_above=0.0, above=above, steps=steps)
