"""R06.04.02.02-T15: relight a midday walk toward golden hour with windows and keys.

Render: out/golden.mov. GT: gt/source.mov, gt/masks.npz {subject}. Falloff: per frame, the slope of
a straight-line fit of mean L* per column against x, times the frame width, must be a drop of ≥ 8.
Highlights/shadows are the source's top/bottom 30 % of L* per frame (so the grade cannot move the
masks); their mean b* in the render must be ≥ 10 and ≤ −2. Rim: per frame, the mean L* of the
subject's RIM_PX left-most pixels per row minus that of its right-most must be ≥ 6.
vlm_plausibility is a judged check (verifiers.rubric): the score is the recorded judges' mean, and
without a recorded judgment it is an error (could not judge), never a number tally made up.
"""

from __future__ import annotations

import numpy as np

from verifiers.checks import Result, check, check_names
from verifiers.curves import Curve
from verifiers.params import NoParams
from verifiers.paramtypes.grading import Falloff, Rim, WarmCool
from verifiers.rubric import rubric_event, rubric_result
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.near_miss import write_pair
from verifiers.tasks.grading._shared.preservation import GradingTask
from verifiers.tasks.grading._shared.regions import frame_share
from verifiers.tasks.grading._shared.shot import Shot

OUTPUT = "out/golden.mov"
RIM_PX = 4
N_FRAMES = 24


def make_scene(rng: np.random.Generator, n: int = N_FRAMES):
    lab = g.flat(n, (55, -8, 20))  # field
    lab[..., 0] += 25 * g.texture(rng, n, sigma_px=5, pan_px_per_frame=1.5)
    yy = np.arange(g.HEIGHT_PX)[None, :, None]
    sky = np.broadcast_to(yy < 40, lab.shape[:3])
    lab[sky] = (85, -3, -12)
    c = g.path_linear(n, (110, 80), (150, 80))
    subject = g.ellipse(n, c, (14, 40))
    lab[subject] = (50, 12, 14)
    lab[..., 0][subject] += 3 * g.texture(rng, n, sigma_px=2)[subject]
    return g.to_rgb8(lab), {"subject": subject}


def edge_bands(mask: np.ndarray, px: int) -> tuple[np.ndarray, np.ndarray]:
    """(left band, right band): each row's first/last `px` mask pixels, per frame."""
    left, right = np.zeros_like(mask), np.zeros_like(mask)
    idx = np.arange(mask.shape[2])
    for i in range(mask.shape[0]):
        for y in np.nonzero(mask[i].any(axis=1))[0]:
            xs = idx[mask[i, y]]
            left[i, y, xs[:px]] = True
            right[i, y, xs[-px:]] = True
    return left, right


def golden(src8: np.ndarray, subject: np.ndarray, *, falloff: float | np.ndarray = 14.0, split: float = 1.0,
           rim: float = 12.0, warm: float = 0.0) -> np.ndarray:
    """Left-to-right L* falloff (one for the shot, or one per frame shaped (n, 1, 1)), split toning about the
    frame's median L*, a rim light on the left edge."""
    lab = g.to_lab(src8)
    n, _h, w = lab.shape[:3]
    x = np.arange(w)[None, None, :] / (w - 1)
    mid = np.median(lab[..., 0].reshape(n, -1), axis=1)[:, None, None]
    keep = 0.2 if split else 1.0
    lab[..., 2] = keep * lab[..., 2] + split * (lab[..., 0] - mid) + warm - (4.0 if split else 0.0)
    lab[..., 0] += falloff * (0.5 - x)
    left, _ = edge_bands(subject, RIM_PX + 2)
    lab[..., 0] += rim * left
    return g.to_rgb8(lab)


def split_tone_b(src_lab: np.ndarray, out_lab: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per frame: the render's mean b* over the source's top 30 % L* (highlights) and bottom 30 % (shadows)."""
    hb, sb = np.zeros(len(src_lab)), np.zeros(len(src_lab))
    for i in range(len(src_lab)):
        lum = src_lab[i][..., 0]
        hi_m, lo_m = lum >= np.percentile(lum, 70), lum <= np.percentile(lum, 30)
        hb[i], sb[i] = out_lab[i][..., 2][hi_m].mean(), out_lab[i][..., 2][lo_m].mean()
    return hb, sb


def rim_delta(out_lab: np.ndarray, subject: np.ndarray) -> np.ndarray:
    """Per frame: mean L* of the subject's left RIM_PX edge band less its right band's."""
    left, right = edge_bands(subject, RIM_PX)
    return np.array([out_lab[i][..., 0][left[i]].mean() - out_lab[i][..., 0][right[i]].mean()
                     for i in range(len(out_lab))])


TASK = "R06.04.02.02-T15"
N = check_names(TASK)


class GoldenHour(GradingTask):
    task_id = TASK
    output = OUTPUT
    preserves = ()

    def primary_region(self, shot: Shot) -> np.ndarray:
        return np.ones_like(shot.mask("subject"))

    @check(N.vlm_plausibility)
    def vlm_plausibility(self, p: NoParams, curve: Curve) -> Result:
        res = rubric_result(self.ctx, N.vlm_plausibility, "a VLM judge")
        return res if res.error else Result(curve.count([res.score]), res.evidence, res.message)

    @check(N.luminance_falloff)
    def luminance_falloff(self, p: Falloff, curve: Curve) -> Result:
        shot = self.shot
        lo, w = shot.lab("out"), shot.src.shape[2]
        x = np.arange(w)
        drop = np.array([-np.polyfit(x, lo[i][..., 0].mean(axis=0), 1)[0] * (w - 1) for i in range(shot.n)])
        sc, pct = frame_share(curve, drop >= p.min_l_drop_lab)
        return Result(sc, {"min_l_drop": float(drop.min()), "frames_ok_pct": pct},
                      "" if sc == 1 else f"L* falls only {drop.min():.1f} left to right")

    @check(N.warm_highlights_cool_shadows)
    def warm_highlights_cool_shadows(self, p: WarmCool, curve: Curve) -> Result:
        hb, sb = split_tone_b(self.shot.lab("src"), self.shot.lab("out"))
        sc, pct = frame_share(curve, (hb >= p.min_highlight_b_lab) & (sb <= p.max_shadow_b_lab))
        return Result(sc, {"min_highlight_b": float(hb.min()), "max_shadow_b": float(sb.max()), "frames_ok_pct": pct},
                      "" if sc == 1 else f"highlights b* {hb.mean():.1f}, shadows b* {sb.mean():.1f}")

    @check(N.subject_rim)
    def subject_rim(self, p: Rim, curve: Curve) -> Result:
        delta = rim_delta(self.shot.lab("out"), self.shot.mask("subject"))
        sc, pct = frame_share(curve, delta >= p.min_rim_l_delta_lab)
        return Result(sc, {"min_rim_l_delta": float(delta.min()), "frames_ok_pct": pct},
                      "" if sc == 1 else f"subject's left edge only {delta.min():.1f} L* above its right")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        src, masks = make_scene(rng)
        subject = masks["subject"]
        g.write_shot(inst, src, masks)
        g.write_video(inst.oracle / OUTPUT, golden(src, subject))
        judged = [rubric_event(N.vlm_plausibility, 1.0, "synthetic stand-in for a VLM judge")]
        inst.write_events(inst.oracle, judged)

        m = inst.mutant("flat_light", [N.luminance_falloff], "no left-to-right falloff")
        g.write_video(m / OUTPUT, golden(src, subject, falloff=0.0))
        inst.write_events(m, judged)

        m = inst.mutant("orange_everything", [N.warm_highlights_cool_shadows], "a global warm tint: shadows warm too")
        g.write_video(m / OUTPUT, golden(src, subject, split=0.0, warm=14.0))
        inst.write_events(m, judged)

        m = inst.mutant("no_rim", [N.subject_rim], "no rim light on the subject")
        g.write_video(m / OUTPUT, golden(src, subject, rim=0.0))
        inst.write_events(m, judged)

        # near misses at the seed's line (L* falls ≥ 8 left to right, per frame): the shot has its own fall,
        # different on every frame, so each frame's ramp is the target less that fall (the same fit the check
        # makes): 8.5 passes in full, 7.5 fails every frame
        x = np.arange(src.shape[2])
        flat = g.to_lab(golden(src, subject, falloff=0.0))
        own = np.array([-np.polyfit(x, f[..., 0].mean(axis=0), 1)[0] * (len(x) - 1) for f in flat])[:, None, None]
        for name, lowers, why, target in (
                ("near_miss_falloff_inside", [], "L* falls 8.5 on every frame: just inside the 8 L* edge", 8.5),
                ("near_miss_falloff_outside", [N.luminance_falloff], "L* falls 7.5 on every frame: just outside 8", 7.5)):
            m = inst.mutant(name, lowers, why)
            g.write_video(m / OUTPUT, golden(src, subject, falloff=target - own))
            inst.write_events(m, judged)

        self.secondary_near_misses(inst, src, subject, judged)

        m = inst.mutant("no_judgment", [N.vlm_plausibility], "the right render, but no judge recorded a verdict")
        g.write_video(m / OUTPUT, golden(src, subject))

    @staticmethod
    def secondary_near_misses(inst: InstanceWriter, src: np.ndarray, subject: np.ndarray, judged: list) -> None:
        """Pairs at the toning lines (highlights b* ≥ 10, shadows b* ≤ −2) and the rim line (left edge ≥ 6 L*
        above the right): each frame's offset is the target less the oracle's own value on that frame."""
        def write(folder, frames: np.ndarray) -> None:
            g.write_video(folder / OUTPUT, frames)
            inst.write_events(folder, judged)

        ls, oracle = g.to_lab(src), g.to_lab(golden(src, subject))
        hb, sb = (v[:, None, None] for v in split_tone_b(ls, oracle))
        write_pair(inst, "highlights", N.warm_highlights_cool_shadows, golden(src, subject, warm=10.5 - hb),
                   golden(src, subject, warm=9.5 - hb), write, "highlights b* +10.5: just inside the +10 edge",
                   "highlights b* +9.5: just outside +10")
        write_pair(inst, "shadows", N.warm_highlights_cool_shadows, golden(src, subject, warm=-2.5 - sb),
                   golden(src, subject, warm=-1.5 - sb), write, "shadows b* −2.5: just inside the −2 edge",
                   "shadows b* −1.5: just outside −2")
        own = rim_delta(g.to_lab(golden(src, subject, rim=0.0)), subject)[:, None, None]
        write_pair(inst, "rim", N.subject_rim, golden(src, subject, rim=6.5 - own), golden(src, subject, rim=5.5 - own),
                   write, "rim 6.5 L* above the right edge: just inside the 6 L* edge", "rim 5.5 L*: just outside 6")
