"""R06.04.02.02-T06: vignette a walking subject (−0.5 stop outside) with a custom tracked window.

Render: out/market_vignette.mov. GT: gt/source.mov, gt/masks.npz {subject}. Node graph:
state/grade.drx needs a custom (curve) window. Gains are log2 linear-Y ratios. Outside: the median
gain beyond 1.5× the subject's box within [−0.6, −0.4]. Subject protected: on every frame the
subject's median gain ≥ −0.05 stop and ≥ 98 % of its pixels above −0.1 stop. Soft edges (no number
in the seed): between the subject (+3 px) and BAND_SCALE× its box, the gain map's 99th-percentile gradient
(smoothed 1 px) over the source's median log2-luminance gradient ≤ SOFT_MAX_RATIO.
"""

from __future__ import annotations

import numpy as np

from verifiers.checks import Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.params import NoParams
from verifiers.paramtypes.grading import SubjectProtected, VignetteOutside
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.gain import (
    GAIN_SMOOTH_PX,
    edge_gradient_ratio,
    gain_map_stops,
    linear_y,
    log2_gain,
    per_frame_gain,
)
from verifiers.tasks.grading._shared.near_miss import softened_to_ratio, write_pair
from verifiers.tasks.grading._shared.node_graph import node_check
from verifiers.tasks.grading._shared.preservation import GradingTask
from verifiers.tasks.grading._shared.regions import bbox_region, frame_share, outside
from verifiers.tasks.grading._shared.shot import Shot, guarded

OUTPUT = "out/market_vignette.mov"
DRX = "state/grade.drx"
SOFT_MAX_RATIO = 1.2
BAND_SCALE = 2.2  # where a protecting window's edge can sit
N_FRAMES = 24


def make_scene(rng: np.random.Generator, n: int = N_FRAMES):
    lab = g.flat(n, (55, 6, 14))
    lab[..., 0] += 8 * g.texture(rng, n, sigma_px=6, pan_px_per_frame=0.5) + 6 * g.texture(rng, n, sigma_px=1.2)
    x = g.path_linear(n, (60, 0), (190, 0))[:, 0]
    head = g.ellipse(n, np.c_[x, np.full(n, 40)], (9, 11))
    body = g.rect(n, np.c_[x - 13, np.full(n, 50), np.full(n, 26), np.full(n, 70)])
    subject = head | body
    lab[body] = (35, 20, 25)
    lab[head] = (62, 14, 18)
    lab[..., 0][subject] += 4 * g.texture(rng, n, sigma_px=2)[subject]
    return g.to_rgb8(lab), {"subject": subject}


TASK = "R06.04.02.02-T06"
N = check_names(TASK)


def protected_pct(gmap: np.ndarray, subject: np.ndarray, protected_gain_stops: float) -> np.ndarray:
    """Per frame: percent of subject pixels whose gain is at or above `protected_gain_stops`."""
    return np.array([100 * float(np.mean(gmap[i][subject[i]] >= protected_gain_stops)) for i in range(len(gmap))])


class Vignette(GradingTask):
    task_id = TASK
    output = OUTPUT
    preserves = (N.subject_protected, N.soft_edges, N.custom_window)

    def primary_region(self, shot: Shot) -> np.ndarray:
        return ~bbox_region(shot.mask("subject"), self.task.check(N.outside_darkened).typed.bbox_scale_x)

    @provides
    def subject(self) -> np.ndarray:
        """The subject less the render's chroma share at its outline (that share is the vignette's too)."""
        return guarded(self.shot, self.shot.mask("subject"))[0]

    @check(N.custom_window)
    def custom_window(self, p: NoParams, curve: Curve) -> Result:
        return node_check(self.ctx, DRX, ("custom", "curve"), "custom curve window", curve)

    @check(N.outside_darkened)
    def outside_darkened(self, p: VignetteOutside, curve: Curve) -> Result:
        gain = per_frame_gain(gain_map_stops(self.shot), ~bbox_region(self.shot.mask("subject"), p.bbox_scale_x))
        sc, pct = frame_share(curve, (gain >= p.min_gain_stops) & (gain <= p.max_gain_stops))
        return Result(sc, {"gain_stop": [float(np.nanmin(gain)), float(np.nanmax(gain))], "frames_ok_pct": pct},
                      "" if sc == 1 else f"outside gain {np.nanmean(gain):+.2f} stop")

    @check(N.subject_protected)
    def subject_protected(self, p: SubjectProtected, curve: Curve) -> Result:
        shot, subject = self.shot, self.subject
        gmap = gain_map_stops(shot)
        if max(shot.guard_px()) > 0:  # per-pixel gain of a lossy render: smoothed over its chroma share too
            gmap = gain_map_stops(shot, smooth_px=GAIN_SMOOTH_PX + max(shot.guard_px()) / 2)
        med = per_frame_gain(gmap, subject)
        prot = protected_pct(gmap, subject, p.protected_gain_stops)
        need = np.full(shot.n, float(p.min_protected_pixels_pct))
        if shot.floor is not None:  # rule 4: what the export alone darkens or unprotects is not the agent's
            gfl = gain_map_stops(shot, which="floor", smooth_px=GAIN_SMOOTH_PX + max(shot.guard_px()) / 2)
            med = med - np.minimum(per_frame_gain(gfl, subject), 0.0)
            need = need - (100.0 - protected_pct(gfl, subject, p.protected_gain_stops))
        sc, pct = frame_share(curve, (med >= p.min_subject_gain_stops) & (prot >= need))
        return Result(sc, {"min_median_gain_stop": float(np.nanmin(med)),
                           "min_protected_pixels_pct": float(prot.min()), "frames_ok_pct": pct},
                      "" if sc == 1 else f"subject darkened on {100 - pct:.0f}% of frames")

    @check(N.soft_edges)
    def soft_edges(self, p: NoParams, curve: Curve) -> Result:
        shot = self.shot
        band = bbox_region(self.subject, BAND_SCALE) & outside(self.subject, 3)
        # edges judged on the unsmoothed map, less the ratio the export alone produces there (rule 4)
        fl = edge_gradient_ratio(shot, band, 1.0, "floor") if shot.floor is not None else np.zeros(shot.n)
        ratio = np.maximum(edge_gradient_ratio(shot, band, 1.0) - fl, 0.0)
        sc, pct = frame_share(curve, ratio <= SOFT_MAX_RATIO)
        return Result(sc, {"max_gradient_ratio": float(ratio.max()), "limit": SOFT_MAX_RATIO, "frames_ok_pct": pct},
                      "" if sc == 1 else f"window edge is hard: gain gradient ×{ratio.max():.2f} the picture's")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        src, masks = make_scene(rng)
        subject = masks["subject"]
        g.write_shot(inst, src, masks)
        nodes = [{"id": "1", "type": "Corrector"}, {"id": "2", "type": "Corrector", "window": "Custom Curve", "tracked": "1"}]

        def vignette(win: np.ndarray, soft_px: float = 8.0, stops: float = -0.5) -> np.ndarray:
            return g.grade_gain(src, 1.0 - np.clip(g.soften(win, soft_px), 0, 1), stops)

        window = bbox_region(subject, 1.7)
        g.write_video(inst.oracle / OUTPUT, vignette(window))
        g.drx(inst.oracle / DRX, nodes)

        m = inst.mutant("circle_window", [N.custom_window], "a circle window instead of a custom curve")
        g.write_video(m / OUTPUT, vignette(window))
        g.drx(m / DRX, [nodes[0], {"id": "2", "type": "Corrector", "window": "Circle"}])

        m = inst.mutant("vignette_too_light", [N.outside_darkened], "outside only −0.2 stop")
        g.write_video(m / OUTPUT, vignette(window, stops=-0.2))
        g.drx(m / DRX, nodes)

        m = inst.mutant("window_not_tracked", [N.subject_protected],
                        "window left where the subject started: she walks into the dark")
        g.write_video(m / OUTPUT, vignette(np.repeat(window[:1], len(window), axis=0)))
        g.drx(m / DRX, nodes)

        m = inst.mutant("hard_window", [N.soft_edges], "softness 0: a visible dark frame edge")
        g.write_video(m / OUTPUT, vignette(window, soft_px=0))
        g.drx(m / DRX, nodes)

        # near misses at the seed's line (−0.6 … −0.4 stop): −0.43 stop passes in full, −0.37 fails every frame
        for name, lowers, why, stops in (
                ("near_miss_gain_inside", [], "outside −0.43 stop: just inside the −0.4 stop edge", -0.43),
                ("near_miss_gain_outside", [N.outside_darkened], "outside −0.37 stop: just outside −0.4", -0.37)):
            m = inst.mutant(name, lowers, why)
            g.write_video(m / OUTPUT, vignette(window, stops=stops))
            g.drx(m / DRX, nodes)

        # near misses at the subject line (median gain ≥ −0.05 stop): the subject caught by −0.035 stop reads
        # −0.041 and passes; −0.045 reads −0.052 (8-bit steps) and fails every frame, its pixels all still protected
        def write(folder, frames: np.ndarray) -> None:
            g.write_video(folder / OUTPUT, frames)
            g.drx(folder / DRX, nodes)

        oracle = vignette(window)
        write_pair(inst, "subject", N.subject_protected, g.grade_gain(oracle, subject, -0.035),
                   g.grade_gain(oracle, subject, -0.045), write,
                   "subject darkened −0.04 stop: just inside the −0.05 stop line", "−0.052 stop: just outside −0.05")
        # the second line (≥ 98 % of the subject's pixels above −0.1 stop): the top of the subject (its
        # first pixels in raster order) caught by −0.3 stop over 1.5 / 2.5 % of its pixels, read on the
        # scorer's smoothed gain map; the median stays ≈ 0
        p = self.task.check(N.subject_protected).typed
        write_pair(inst, "protected_pct", N.subject_protected,
                   caught_share(oracle, src, subject, 100 - p.min_protected_pixels_pct - 0.5, p.protected_gain_stops,
                                above=False),
                   caught_share(oracle, src, subject, 100 - p.min_protected_pixels_pct + 0.5, p.protected_gain_stops,
                                above=True), write,
                   "1.5 % of the subject below −0.1 stop: just inside the 98 % protected line",
                   "2.5 % below −0.1 stop: just outside 98 %")
        # the soft-edge line (gradient ratio ≤ SOFT_MAX_RATIO, the project's constant): the window's softness
        # bisected frame by frame on the scorer's statistic to read 0.1 under / over it
        band = bbox_region(subject, BAND_SCALE) & outside(subject, 3)

        def softened(i: int, soft_px: float) -> np.ndarray:
            return g.grade_gain(src[i:i + 1], 1.0 - np.clip(g.soften(window[i:i + 1], soft_px), 0, 1), -0.5)

        write_pair(inst, "soft_edges", N.soft_edges,
                   *(softened_to_ratio(src, band, softened, SOFT_MAX_RATIO + d, soft_px=8.0, smooth_px=1.0, above=d > 0,
                                       steps=8)
                     for d in (-0.1, 0.1)), write,
                   f"window edge as hard as reads a gradient ratio {SOFT_MAX_RATIO - 0.1:.1f}: just inside {SOFT_MAX_RATIO}",
                   f"{SOFT_MAX_RATIO + 0.1:.1f}: just outside {SOFT_MAX_RATIO}")


def caught_share(render8: np.ndarray, src8: np.ndarray, subject: np.ndarray, target_pct: float,
                 protected_gain_stops: float, *, above: bool) -> np.ndarray:
    """`render8` with the top of the subject darkened −0.3 stop, frame by frame, over as many pixels as
    leave `target_pct` % of the subject below `protected_gain_stops` on the scorers' smoothed gain map
    (just `above` or just below): the pair at the "98 % of the subject protected" line."""
    def dark_top(px: np.ndarray, share: float) -> np.ndarray:
        out, k = px.copy(), round(share * px.shape[1])
        out[:, :k] = g.grade_gain(px[:, :k], np.ones(1), -0.3)
        return out

    def unprotected_pct(s: np.ndarray, frame: np.ndarray, sel: np.ndarray) -> float:
        gm = log2_gain(linear_y(s[None]), linear_y(frame[None]))[0]
        return 100 - 100 * float(np.mean(gm[sel] >= protected_gain_stops))

    return g.bisect_region(render8, src8, subject, target_pct, above=above, apply=dark_top, measure=unprotected_pct,
                           max_x=0.1, steps=12)
