"""Near-miss mutant pairs at a seed line (issue 21): just inside lowers nothing, just outside scores 0
on exactly its check. Renders are lossless, so the value measured is the value applied."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.gain import linear_y, log2_gain

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
