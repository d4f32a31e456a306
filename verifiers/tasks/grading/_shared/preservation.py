"""The grading family's scorer base: the shot as a provider and baseline-relative preservation.

Policy (docs/grading.md "Scoring policy", issue 21), rule 3: the checks a task lists in `preserves`
(untouched regions, protected subject, node graph, …: what a do-nothing render would pass) earn
credit only in proportion to the share of frames (T14: shots) in which the task's primary change is
present (`primary_change`). A render that is unusable or not the shot (`AgentOutputError` from the
shot provider, content identity rule 2) credits them nothing. Rules 2 and 4 live in
`identity.py` and `shot.py`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from verifiers.base import AgentOutputError, Checks
from verifiers.checks import CheckedTask, provides
from verifiers.tasks.grading._shared.cases import register_cases
from verifiers.tasks.grading._shared.gain import gain_map_stops
from verifiers.tasks.grading._shared.identity import require_identity
from verifiers.tasks.grading._shared.regions import chroma_of, floor_de, interior, per_frame_de
from verifiers.tasks.grading._shared.shot import Shot, load_shot

#: the primary change is present on a frame when the primary region's mean ΔE2000 (source → render)
#: exceeds the export floor's by this much (half a just-noticeable difference: an unedited export
#: sits at 0 ± 0.05 after the floor, the subtlest correct grade, T11's contrast, above 0.5)
CHANGE_MIN_DE = 0.5


def primary_change(shot: Shot, region: np.ndarray) -> np.ndarray:
    """Per frame that has a primary region: is the task's primary change present there (region's
    mean ΔE2000 ≥ the export floor's + CHANGE_MIN_DE)? Frames without the region are not counted."""
    has = region.reshape(len(region), -1).any(axis=1)
    if not has.any():
        return np.zeros(0, dtype=bool)
    raw = per_frame_de(shot, region)
    return (raw - floor_de(shot, region) >= CHANGE_MIN_DE)[has]


class GradingTask(CheckedTask):
    """A grading scorer: `@check` methods reading `self.shot`; this class applies the family's policy.

    Subclasses set `output` (the render), name `preserves` (checks a do-nothing render would pass)
    and where the asked-for change lives: `primary_mask` (a GT mask's name; `core` is its interior,
    `core_band_px` in) or `primary_region(shot)`;
    after every check has run, the preserve checks are scaled by the share of frames carrying that
    change (rule 3). `gmap` and `chroma` are shared inputs several tasks read (computed on first use).
    """

    output: ClassVar[str] = ""
    preserves: ClassVar[tuple[str, ...]] = ()
    primary_mask: ClassVar[str] = ""
    #: `core` is the primary mask this many px in from its edge (erosion per frame)
    core_band_px: ClassVar[int] = 0

    @provides
    def shot(self) -> Shot:
        """load_shot, then the content-identity gate (rule 2): a render not of the shot fails its readers."""
        shot = load_shot(self.ctx, self.output)
        shot.identity = require_identity(shot, self.output)
        return shot

    @provides
    def gmap(self) -> np.ndarray:
        """Per-pixel exposure gain of the render, stops (gain.gain_map_stops)."""
        return gain_map_stops(self.shot)

    @provides
    def chroma(self) -> tuple[np.ndarray, np.ndarray]:
        """(source C*, render C*) per pixel."""
        return chroma_of(self.shot, "src"), chroma_of(self.shot, "out")

    @provides
    def core(self) -> np.ndarray:
        """The primary mask away from its own edge (`core_band_px`): a soft window's grade is read
        there, not where it fades into the surroundings."""
        return interior(self.shot.mask(self.primary_mask), self.core_band_px)

    def primary_region(self, shot: Shot) -> np.ndarray:
        if not self.primary_mask:
            raise NotImplementedError(f"{type(self).__name__} names no primary_mask or primary_region")
        return shot.mask(self.primary_mask)

    def change_present(self, shot: Shot) -> np.ndarray:
        """Per counted frame: is the primary change there? (ΔE2000 above the floor by default)."""
        return primary_change(shot, self.primary_region(shot))

    def presence(self) -> tuple[np.ndarray, dict[str, Any]]:
        """(per unit: primary change present, evidence); raises what the shot provider raised."""
        present = self.change_present(self.shot)
        return present, {"primary_change_frames_pct": 100.0 * float(present.mean()), "identity": self.shot.identity}

    def after_checks(self, checks: Checks) -> None:
        try:
            present, why = self.presence()
        except AgentOutputError as exc:  # the render is unusable or not the shot: preserves earn nothing
            scale_preserves(checks, self.preserves, 0.0, {"reason": str(exc)})
            return
        # anything else (GT missing: GTError) goes to scoring.py as before the move; every check has its result
        scale_preserves(checks, self.preserves, float(np.mean(present)) if len(present) else 0.0, why)

    def build(self, inst: Any, rng: np.random.Generator) -> None:
        """The task's synthetic instance (workdir, GT, oracle, mutants)."""
        raise NotImplementedError

    def synth(self, inst: Any, rng: np.random.Generator) -> None:
        """build(), then the family's export and gaming-baseline cases (verifiers.synthcases)."""
        self.build(inst, rng)
        register_cases(inst, self.task_id, self.output)


def scale_preserves(checks: Checks, preserves: tuple[str, ...], factor: float, why: dict[str, Any]) -> None:
    """Rule 3: each judged preserve check's score × `factor`, the unscaled score kept in evidence."""
    for name in preserves:
        res = checks.results.get(name)
        if res is None or res.status == "error" or factor >= 1.0:
            continue
        ev = {**res.evidence, "baseline_relative": {**why, "unscaled_score": res.score, "factor": factor}}
        if "reason" in why:  # the render is unusable or not the shot: say that, not a share
            msg = f"{why['reason']} (this share is credited only with the task's change present)"
        else:
            msg = (f"{res.message + '; ' if res.message else ''}credited ×{factor:.2f}: the task's primary "
                   f"change is present on {100 * factor:.0f}% of frames (leaving things alone earns nothing by itself)")
        checks.set(name, res.score * factor, ev, msg)
