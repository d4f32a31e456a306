"""R06.04.02.02-T13: tame a distracting neon sign behind two actors (handheld, 4 s).

Render: out/diner_sign.mov. GT: gt/source.mov, gt/masks.npz {sign, actors}. Luminance is linear
Y (BT.709), chroma is C*ab, both as per-frame means over the GT sign mask. Tracking (the seed says
only "window follows the sign"): a frame is tracked when ≥ COVER_PCT of the sign's pixels changed
(Lab distance > CHANGED_LAB); a window that also spills elsewhere is the untouched check's business.
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import binary_dilation

from verifiers.checks import Result, check, check_names
from verifiers.curves import Curve
from verifiers.params import NoParams
from verifiers.paramtypes.grading import SignToned
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.gain import linear_y
from verifiers.tasks.grading._shared.near_miss import render_writer, untouched_pair, write_pair
from verifiers.tasks.grading._shared.preservation import GradingTask
from verifiers.tasks.grading._shared.regions import (
    chroma_change_pct,
    frame_share,
    frames_within,
    masked_mean,
    untouched,
)

OUTPUT = "out/diner_sign.mov"
COVER_PCT = 90.0
CHANGED_LAB = 3.0
N_FRAMES = 24


def make_scene(rng: np.random.Generator, n: int = N_FRAMES) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Dark diner wall, a magenta neon sign drifting with the handheld camera, two actors in front."""
    lab = g.flat(n, (22, 4, 6))
    lab[..., 0] += 5 * g.texture(rng, n, pan_px_per_frame=1.0)
    shake = np.c_[np.linspace(150, 190, n) + 3 * np.sin(np.arange(n)), 28 + 2 * np.cos(np.arange(n) * 0.7)]
    sign = g.rect(n, np.c_[shake, np.tile([48, 18], (n, 1))])
    lab[sign] = (68, 70, -30)
    lab[..., 0][sign] += 6 * g.texture(rng, n, sigma_px=1.5)[sign]
    a1 = g.ellipse(n, np.tile([70, 95], (n, 1)), (22, 40))
    a2 = g.ellipse(n, np.tile([140, 105], (n, 1)), (20, 36))
    lab[a1] = (55, 14, 18)
    lab[a2] = (48, 10, 22)
    actors = a1 | a2
    lab[..., 0][actors] += 4 * g.texture(rng, n, sigma_px=2)[actors]
    return g.to_rgb8(lab), {"sign": sign & ~actors, "actors": actors}


TASK = "R06.04.02.02-T13"
N = check_names(TASK)


class NeonSign(GradingTask):
    task_id = TASK
    output = OUTPUT
    preserves = (N.actors_untouched,)
    primary_mask = "sign"

    @check(N.sign_toned_down)
    def sign_toned_down(self, p: SignToned, curve: Curve) -> Result:
        shot, sign = self.shot, self.shot.mask("sign")
        dy = 100 * (masked_mean(linear_y(shot.out), sign) / masked_mean(linear_y(shot.src), sign) - 1)
        dc = chroma_change_pct(shot, sign)
        return frames_within(curve, {"luma_change_pct": (dy, p.min_luma_change_pct, p.max_luma_change_pct),
                                     "chroma_change_pct": (dc, p.min_chroma_change_pct, p.max_chroma_change_pct)},
                             lambda pct: f"sign luminance {dy.mean():.0f}%, chroma {dc.mean():.0f}% (frames ok {pct:.0f}%)")

    actors_untouched = untouched(N.actors_untouched, "actors")

    @check(N.tracking)
    def tracking(self, p: NoParams, curve: Curve) -> Result:
        shot, sign = self.shot, self.shot.mask("sign")
        changed = np.linalg.norm(shot.lab("out") - shot.lab("src"), axis=-1) > CHANGED_LAB
        cover = 100 * (changed & sign).sum(axis=(1, 2)) / np.maximum(sign.sum(axis=(1, 2)), 1)
        sc, pct = frame_share(curve, cover >= COVER_PCT)
        return Result(sc, {"min_sign_cover_pct": float(cover.min()), "cover_needed_pct": COVER_PCT, "frames_ok_pct": pct},
                      "" if sc == 1 else f"window on the sign in only {pct:.0f}% of frames")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        src, masks = make_scene(rng)
        g.write_shot(inst, src, masks)
        sign = masks["sign"]
        window = np.stack([binary_dilation(m, iterations=2) for m in sign]) & ~masks["actors"]

        def tame(alpha: np.ndarray, l_scale: float = 0.9, chroma_scale: float = 0.6) -> np.ndarray:
            return g.grade_lab(src, alpha, l_scale=l_scale, l_pivot=0, chroma_scale=chroma_scale)

        g.write_video(inst.oracle / OUTPUT, tame(window))

        m = inst.mutant("desaturate_only", [N.sign_toned_down], "chroma lowered, brightness left")
        g.write_video(m / OUTPUT, tame(window, l_scale=1.0))

        m = inst.mutant("window_over_actor", [N.actors_untouched], "window not masked out of the actor's head")
        g.write_video(m / OUTPUT, tame(np.stack([binary_dilation(w, iterations=2) for w in sign]) | masks["actors"]))

        m = inst.mutant("static_window", [N.tracking, N.sign_toned_down],
                        "window placed on frame 1 and never tracked: the sign drifts out of it")
        g.write_video(m / OUTPUT, tame(np.repeat(window[:1], len(window), axis=0)))

        # near misses at the seed's chroma line (−50 … −30 %): −32 % passes in full, −27 % fails every frame
        m = inst.mutant("near_miss_chroma_inside", [], "chroma −32 %: just inside the seed's −30 % edge")
        g.write_video(m / OUTPUT, tame(window, chroma_scale=0.68))
        m = inst.mutant("near_miss_chroma_outside", [N.sign_toned_down], "chroma −27 %: just outside the −30 % edge")
        g.write_video(m / OUTPUT, tame(window, chroma_scale=0.73))

        write = render_writer(OUTPUT)

        write_pair(inst, "luma", N.sign_toned_down, tame(window, l_scale=0.81), tame(window, l_scale=0.8), write,
                   "sign luminance −39 %: just inside the −40 % edge", "luminance −41 %: just outside −40 %")
        # tracking: the window misses a scatter of sign pixels (L* ×0.85 keeps the luminance in range)
        draw = rng.random(sign.shape)
        write_pair(inst, "cover", N.tracking, tame(window & ~(sign & (draw < 0.07)), l_scale=0.85),
                   tame(window & ~(sign & (draw < 0.13)), l_scale=0.85), write,
                   "window covers ≈ 93 % of the sign: just inside the 90 % line", "covers ≈ 87 %: just outside 90 %")

        untouched_pair(inst, N.actors_untouched, tame(window), src, [masks["actors"]], 1.0, write, "actors")
