"""R06.04.02.02-T19: remove magenta neon spill from a face but keep the neon.

Render: out/club_skin.mov. GT: gt/source.mov, gt/masks.npz {face, neon, wall}. The face's mean
hue (chroma-weighted, over the face eroded by EDGE_PX so the edge is judged separately) starts near
350° and must land in 25–55° with |ΔL*| ≤ 4. Clean edges (the seed names no numbers): the face-side
ring of EDGE_PX must also read as skin (hue within RING_SLACK_DEG of the target range: neither the
old magenta nor a green overcorrection), and the wall-side ring must stay within RING_MAX_DE of the
source (no fringe painted onto the background).
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import binary_dilation, binary_erosion

from verifiers.checks import Result, check, check_names
from verifiers.curves import Curve
from verifiers.params import NoParams
from verifiers.paramtypes.grading import SpillRemoved
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.near_miss import render_writer, untouched_pair, write_pair
from verifiers.tasks.grading._shared.preservation import GradingTask
from verifiers.tasks.grading._shared.regions import (
    circular_mean_hue,
    floor_de,
    frame_share,
    interior,
    masked_mean,
    per_frame_de,
    untouched,
)
from verifiers.tasks.grading._shared.shot import Shot

OUTPUT = "out/club_skin.mov"
EDGE_PX = 3
RING_SLACK_DEG = 15.0
RING_MAX_DE = 3.0
N_FRAMES = 24


def make_scene(rng: np.random.Generator, n: int = N_FRAMES) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    lab = g.flat(n, (18, 10, -12))  # dark club wall with a violet tint
    lab[..., 0] += 5 * g.texture(rng, n, pan_px_per_frame=0.5)
    neon = g.rect(n, np.tile([20, 20, 14, 100], (n, 1))) | g.rect(n, np.tile([210, 30, 14, 90], (n, 1)))
    lab[neon] = (62, 78, -28)
    face = g.ellipse(n, g.path_linear(n, (115, 70), (135, 66)), (26, 34))
    lab[face] = (58, 22, -4)  # skin drenched in magenta: hue ≈ 350°
    lab[..., 0][face] += 5 * g.texture(rng, n, sigma_px=2)[face]
    wall = ~(neon | face)
    return g.to_rgb8(lab), {"face": face, "neon": neon, "wall": wall}


def in_range(h: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return (h >= lo) & (h <= hi)


TASK = "R06.04.02.02-T19"
N = check_names(TASK)


def edge_rings(shot: Shot, face: np.ndarray, core: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(face-side ring, wall-side ring) of EDGE_PX each, starting the render's chroma share away from the
    outline: that share is both sides' colour."""
    gpx = max(shot.guard_px())
    inner = interior(face, gpx) & ~interior(face, gpx + EDGE_PX)
    inner = np.where(inner.reshape(shot.n, -1).any(axis=1)[:, None, None], inner, face & ~core)
    outer = np.stack([binary_dilation(m, iterations=gpx + EDGE_PX) & ~(binary_dilation(m, iterations=gpx) if gpx
                                                                        else m) for m in face])
    return inner, outer


class NeonSpill(GradingTask):
    task_id = TASK
    output = OUTPUT
    preserves = (N.neon_untouched, N.clean_edges)
    primary_mask = "face"
    core_band_px = EDGE_PX

    @check(N.spill_removed)
    def spill_removed(self, p: SpillRemoved, curve: Curve) -> Result:
        shot, core = self.shot, self.core
        ls, lo = shot.lab("src"), shot.lab("out")
        hue = np.array([circular_mean_hue(lo[i], core[i]) for i in range(shot.n)])
        dl = masked_mean(lo[..., 0], core) - masked_mean(ls[..., 0], core)
        sc, pct = frame_share(curve, in_range(hue, p.min_hue_deg, p.max_hue_deg) & (np.abs(dl) <= p.max_l_change_lab))
        return Result(sc, {"face_hue_deg": [float(hue.min()), float(hue.max())],
                           "max_abs_l_change": float(np.abs(dl).max()), "frames_ok_pct": pct},
                      "" if sc == 1 else f"face hue {hue.mean():.0f}°, ΔL* {dl.mean():.1f} (frames ok {pct:.0f}%)")

    neon_untouched = untouched(N.neon_untouched, "neon", "wall")

    @check(N.clean_edges)
    def clean_edges(self, p: NoParams, curve: Curve) -> Result:
        shot = self.shot
        spill = self.task.check(N.spill_removed).typed  # the ring's hue range is the spill check's, widened
        inner, outer = edge_rings(shot, shot.mask("face"), self.core)
        ring_hue = np.array([circular_mean_hue(shot.lab("out")[i], inner[i]) for i in range(shot.n)])
        ring_de = np.maximum(per_frame_de(shot, outer, stride=1) - floor_de(shot, outer), 0.0)
        lo_h, hi_h = spill.min_hue_deg - RING_SLACK_DEG, spill.max_hue_deg + RING_SLACK_DEG
        sc, pct = frame_share(curve, in_range(ring_hue, lo_h, hi_h) & (ring_de <= RING_MAX_DE))
        return Result(sc, {"face_ring_hue_deg": [float(ring_hue.min()), float(ring_hue.max())],
                           "ring_hue_range_deg": [lo_h, hi_h], "wall_ring_max_delta_e2000": float(ring_de.max()),
                           "ring_px": EDGE_PX, "frames_ok_pct": pct},
                      "" if sc == 1 else f"fringe at the face edge: ring hue {ring_hue.mean():.0f}°, "
                                         f"wall ring ΔE2000 {ring_de.max():.1f}")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        src, masks = make_scene(rng)
        g.write_shot(inst, src, masks, {"face_source_hue_deg": 350})
        face = masks["face"]
        g.write_video(inst.oracle / OUTPUT, g.grade_lab(src, face, hue_deg=50))

        m = inst.mutant("overcorrected_yellow_green", [N.spill_removed, N.clean_edges],
                        "hue pushed 110° round: the face turns yellow-green")
        g.write_video(m / OUTPUT, g.grade_lab(src, face, hue_deg=110))

        m = inst.mutant("brightened_face", [N.spill_removed], "spill fixed but the face lifted 8 L*")
        g.write_video(m / OUTPUT, g.grade_lab(src, face, hue_deg=50, dl=8))

        m = inst.mutant("whole_frame_rotated", [N.neon_untouched, N.clean_edges], "hue vs hue applied to the frame")
        g.write_video(m / OUTPUT, g.grade_lab(src, np.ones(face.shape), hue_deg=50))

        m = inst.mutant("qualifier_too_tight", [N.clean_edges], "the key misses the face's outer 3 px: magenta rim")
        g.write_video(m / OUTPUT, g.grade_lab(src, np.stack([binary_erosion(f, iterations=EDGE_PX) for f in face]),
                                              hue_deg=50))

        # near misses at the seed's line (|ΔL*| ≤ 4): the face lifted 3.5 L* passes in full, 4.5 fails every frame
        m = inst.mutant("near_miss_lift_inside", [], "spill fixed, face lifted 3.5 L*: just inside the 4 L* edge")
        g.write_video(m / OUTPUT, g.grade_lab(src, face, hue_deg=50, dl=3.5))
        m = inst.mutant("near_miss_lift_outside", [N.spill_removed], "face lifted 4.5 L*: just outside the 4 L* edge")
        g.write_video(m / OUTPUT, g.grade_lab(src, face, hue_deg=50, dl=4.5))

        write = render_writer(OUTPUT)

        # the hue line's 55° edge (the face starts at 350°): rotated 63° it reads ≈ 53°, 67° ≈ 57°
        write_pair(inst, "hue", N.spill_removed, g.grade_lab(src, face, hue_deg=63), g.grade_lab(src, face, hue_deg=67),
                   write, "face hue ≈ 53°: just inside the 55° edge", "face hue ≈ 57°: just outside the 55° edge")

        untouched_pair(inst, N.neon_untouched, g.grade_lab(src, face, hue_deg=50), src, [masks["neon"], masks["wall"]],
                       1.5, write, "neon_wall")

        # clean_edges' two lines (the project's, the seed names none): the face-side ring's hue within
        # RING_SLACK_DEG of 25-55° (≤ 70°: the oracle's ring ≈ 40°, turned 27° more ≈ 67°, 33° more ≈ 73°,
        # the face's core untouched), and the wall-side ring within RING_MAX_DE of the source (its L*
        # lifted to a mean ΔE2000 of line ∓ 0.2; a 3 px ring is too little of the wall to move neon_untouched)
        oracle = g.grade_lab(src, face, hue_deg=50)
        ring = face & ~interior(face, EDGE_PX)
        write_pair(inst, "edge_hue", N.clean_edges, g.grade_lab(oracle, ring, hue_deg=27),
                   g.grade_lab(oracle, ring, hue_deg=33), write,
                   "face ring ≈ 67°: just inside the 70° ring line", "face ring ≈ 73°: just outside 70°")
        wall_ring = np.stack([binary_dilation(m, iterations=EDGE_PX) & ~m for m in face])
        write_pair(inst, "wall_ring", N.clean_edges, g.lift_to_de(oracle, src, wall_ring, RING_MAX_DE - 0.2, above=False),
                   g.lift_to_de(oracle, src, wall_ring, RING_MAX_DE + 0.2, above=True), write,
                   f"wall ring mean ΔE2000 {RING_MAX_DE - 0.2:.1f}: just inside the {RING_MAX_DE} line",
                   f"{RING_MAX_DE + 0.2:.1f}: just outside {RING_MAX_DE}")
