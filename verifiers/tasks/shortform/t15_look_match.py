"""R06.04.01.04-T15: match eight beach-vlog clips to a reference look (neutrals, skin, sky, consistency).

Work dir: fixtures/beach_vlog/clip1..8.mp4, input/reference_frame.png. Output: out/beach_matched.mp4
(the eight clips in order). GT: gt/look.json = {"clips": [{"start_s", "end_s", "neutral", "skin",
"sky"}] (rects [x, y, w, h] in export pixels), "reference": {"skin", "sky"} (rects in the PNG)}.
Each clip is judged on its middle frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from verifiers.base import AgentOutputError, GTError
from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.evidence.base import Payload
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.colour import delta_e2000, hue_deg, hue_difference_deg, mean_lab, rect_mask
from verifiers.measure.errors import MediaError
from verifiers.measure.frames import iter_frames, read_frame_at
from verifiers.paramtypes.shortform import MaxDeltaE, Neutrals, SkyHue
from verifiers.synth import InstanceWriter
from verifiers.synthkit.shortform_video import write_video
from verifiers.tasks.shortform._shared.cases import register_video_cases
from verifiers.tasks.shortform._shared.export import probe_artifact

TASK = "R06.04.01.04-T15"
N = check_names(TASK)
OUTPUT = "out/beach_matched.mp4"
FPS = 24.0


MIN_STRUCTURE_CORR = 0.3  # correlation of _unit_highpass vectors; measured in docs/shortform.md
#: no other source frame (of any clip) may match the export's frame better than its own by more
#: than this (as grading's IDENTITY_TEMPORAL_TOL): a held or reused frame matches its own source
#: frame far better than the one it stands for
TEMPORAL_TOL = 0.02


def _unit_highpass(rgb: np.ndarray, sigma_px: float = 2.0) -> np.ndarray:
    """A frame's luma minus its Gaussian blur, centred and scaled to unit length (zeros when flat)."""
    y = cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2GRAY).astype(np.float32)
    d = (y - cv2.GaussianBlur(y, (0, 0), sigma_px)).ravel()
    d -= d.mean()
    norm = float(np.linalg.norm(d))
    return d / norm if norm > 1e-9 else np.zeros_like(d)


def _rects_ok(rects: list[list[int]]) -> bool:
    return all(len(r) == 4 and r[2] > 0 and r[3] > 0 for r in rects)


@dataclass(frozen=True)
class LookClip(Payload):
    """One clip of the vlog in the export's timeline, with its judged patches."""

    start_s: float = gt_field(doc="where the clip starts in the export")
    end_s: float = gt_field(doc="where it ends")
    neutral_px: list[int] = gt_field("neutral", "x, y, w, h of a grey patch (export px)")
    skin_px: list[int] = gt_field("skin", "x, y, w, h of a skin patch")
    sky_px: list[int] = gt_field("sky", "x, y, w, h of a sky patch")


@dataclass(frozen=True)
class LookReference(Payload):
    """The reference frame's patches the grade is matched to."""

    skin_px: list[int] = gt_field("skin", "x, y, w, h of the reference's skin patch")
    sky_px: list[int] = gt_field("sky", "x, y, w, h of its sky patch")


class LookFile(GTFile, file="look.json", task=TASK):
    """gt/look.json: the clips in export order with their patches, and the reference frame's."""

    clips: list[LookClip] = gt_field(doc="the eight clips in order")
    reference: LookReference = gt_field(doc="patches of input/reference_frame.png")

    def validate(self) -> None:
        self.expect(bool(self.clips) and all(c.start_s < c.end_s for c in self.clips), "clips",
                    "must be non-empty, each ending after it starts")
        self.expect(_rects_ok([r for c in self.clips for r in (c.neutral_px, c.skin_px, c.sky_px)])
                    and _rects_ok([self.reference.skin_px, self.reference.sky_px]), "clips",
                    "every patch is [x, y, w, h] with w, h > 0")


def _lab(rgb: np.ndarray, rect) -> np.ndarray:
    h, w = rgb.shape[:2]
    return mean_lab(rgb, rect_mask(h, w, *rect))


@dataclass(frozen=True)
class Patches:
    """Mean Lab of each clip's neutral, skin and sky patch (its middle frame), and the reference's."""

    neutral: list[np.ndarray]
    skin: list[np.ndarray]
    sky: list[np.ndarray]
    ref_skin: np.ndarray
    ref_sky: np.ndarray
    identity: list[float]  # per clip: structure correlation of the export's frame with its own source frame

    def derived(self) -> list[bool]:
        return [c >= MIN_STRUCTURE_CORR for c in self.identity]



#: the inside side of the neutrals near-miss pair (|a*| <= 3): the oracle's own grey carries a
#: per-instance a* (its 8-bit rounding of the removed cast; seed 13: a fixed gain that read 2.79 at
#: seed 0 read over 3), so the cast's gain is set on the rendered clip to land here
NEAR_MISS_A = 2.5


def gain_for_a(render, magenta, neutral_rect: list[int]) -> float:
    """The magenta gain putting clip 2's neutral patch at a* = NEAR_MISS_A before export: a* is
    near-linear in the small gain, so one secant step from the oracle (gain 0) and gain 0.02."""
    x, y, rw, rh = neutral_rect
    per = len(render()) // 8

    def a_at(gain: float) -> float:
        frames = render(lambda k, f: magenta(k, f, gain=gain))[per:2 * per]
        return float(np.mean([mean_lab(f[y:y + rh, x:x + rw])[1] for f in frames]))

    a0, a1 = a_at(0.0), a_at(0.02)
    return 0.02 * (NEAR_MISS_A - a0) / (a1 - a0)

class LookMatch(CheckedTask):
    task_id = TASK

    @provides
    def patches(self) -> Patches:
        look = self.ctx.gt_typed(LookFile)
        ref = cv2.imread(str(self.ctx.input("input/reference_frame.png")))
        if ref is None:
            raise GTError("input/reference_frame.png unreadable")
        ref = cv2.cvtColor(ref, cv2.COLOR_BGR2RGB)
        ref_skin, ref_sky = _lab(ref, look.reference.skin_px), _lab(ref, look.reference.sky_px)
        try:
            path, _pr = probe_artifact(self.ctx, OUTPUT)
            mids = [read_frame_at(path, (c.start_s + c.end_s) / 2).rgb for c in look.clips]
        except MediaError as exc:
            raise AgentOutputError(str(exc)) from None
        out = Patches([], [], [], ref_skin, ref_sky, [])
        sources = self._source_frames(len(look.clips), mids[0].shape)
        for k, (c, rgb) in enumerate(zip(look.clips, mids, strict=True), start=1):
            out.identity.append(self._identity(sources, k, (c.end_s - c.start_s) / 2, rgb))
            out.neutral.append(_lab(rgb, c.neutral_px))
            out.skin.append(_lab(rgb, c.skin_px))
            out.sky.append(_lab(rgb, c.sky_px))
        return out

    def _source_frames(self, n_clips: int, shape: tuple[int, ...]) -> list[tuple[list[float], np.ndarray]]:
        """Per source clip: its frame times and their unit high-passed luma at the export's size."""
        out = []
        for k in range(1, n_clips + 1):
            times, hps = [], []
            try:
                for fr in iter_frames(self.ctx.input(f"fixtures/beach_vlog/clip{k}.mp4")):
                    src = fr.rgb
                    if src.shape != shape:
                        src = cv2.resize(src, (shape[1], shape[0]), interpolation=cv2.INTER_AREA)
                    times.append(fr.t_s)
                    hps.append(_unit_highpass(src))
            except MediaError as exc:
                raise GTError(f"clip{k}: {exc}") from None
            out.append((times, np.stack(hps)))
        return out

    @staticmethod
    def _identity(sources: list[tuple[list[float], np.ndarray]], k: int, mid_s: float, rgb: np.ndarray) -> float:
        """Content identity (issue 21): the export's frame is the graded clip k at its middle,
        not black, a held frame or another clip: structure correlation with that source frame (or
        the one either side), and 0 when another frame of any clip matches clearly better (a still frame repeated over the
        eight clips matches the frame it was taken from)."""
        v = _unit_highpass(rgb)
        corrs = [hp @ v for _times, hp in sources]
        times = np.array(sources[k - 1][0])
        frame_s = float(np.median(np.diff(times))) if len(times) > 1 else 1.0
        # the export's frame at the middle may sit one source frame either side (another frame grid)
        near = np.abs(times - mid_s) <= 1.5 * frame_s
        own = float(corrs[k - 1][near].max()) if near.any() else -1.0
        others = np.concatenate([c[~near] if j == k - 1 else c for j, c in enumerate(corrs)])
        best_other = float(others.max()) if len(others) else -1.0
        return own if own >= best_other - TEMPORAL_TOL else 0.0

    @check(N.neutrals)
    def neutrals(self, p: Neutrals, curve: Curve) -> Result:
        neutral, own = self.patches.neutral, self.patches.derived()
        n_ok = [bool(o and abs(v[1]) <= p.max_abs_a_lab and abs(v[2]) <= p.max_abs_b_lab) for v, o in zip(neutral, own, strict=True)]
        return Result(curve.count(sum(n_ok), len(neutral)), {"neutral_ab": [[v[1], v[2]] for v in neutral],
                                                             "structure_corr": self.patches.identity},
                      f"{sum(n_ok)}/{len(neutral)} clips neutral")

    def _clips_within(self, curve: Curve, errs: list[float], most: float, key: str, what: str) -> Result:
        """k of n clips: a clip passes when its error is at most `most` and its frame is derived
        from its own source clip (content identity); `what` finishes "k/n <what>"."""
        ok = [e <= most and o for e, o in zip(errs, self.patches.derived(), strict=True)]
        return Result(curve.count(sum(ok), len(errs)), {key: errs}, f"{sum(ok)}/{len(errs)} {what}")

    @check(N.skin_match)
    def skin_match(self, p: MaxDeltaE, curve: Curve) -> Result:
        pt = self.patches
        de = [float(delta_e2000(s, pt.ref_skin)) for s in pt.skin]
        return self._clips_within(curve, de, p.max_de2000, "skin_de2000",
                                  f"clips' skin within {p.max_de2000:g} dE2000 of the reference")

    @check(N.sky_hue)
    def sky_hue(self, p: SkyHue, curve: Curve) -> Result:
        pt = self.patches
        dh = [abs(float(hue_difference_deg(hue_deg(s), hue_deg(pt.ref_sky)))) for s in pt.sky]
        return self._clips_within(curve, dh, p.max_hue_delta_deg, "sky_hue_delta_deg",
                                  f"skies within {p.max_hue_delta_deg:g}° of the reference hue")

    @check(N.consistency)
    def consistency(self, p: MaxDeltaE, curve: Curve) -> Result:
        skin = self.patches.skin
        med = np.median(np.array(skin), axis=0)
        dc = [float(delta_e2000(s, med)) for s in skin]
        mc = p.max_de2000
        ok = [d <= mc and o for d, o in zip(dc, self.patches.derived(), strict=True)]
        return Result(curve.count(sum(ok), len(dc)), {"skin_de2000_to_median": dc},
                      f"{sum(ok)}/{len(dc)} clips' skin within {mc:g} dE2000 of the others")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        w, h = 320, 180
        per = int(1.0 * FPS)
        rects = {"sky": [0, 0, 320, 60], "skin": [140, 80, 50, 60], "neutral": [230, 110, 50, 40]}
        colours = {"sky": (110, 160, 220), "skin": (224, 172, 140), "neutral": (150, 150, 150),
                   "sand": (210, 190, 150)}

        def frame(r: np.random.Generator, cast=(1.0, 1.0, 1.0), pebbles=None, i: int = 0) -> np.ndarray:
            """Sand with the GT patches; `pebbles` (x, y) drift 2 px a frame (the footage moves, so a
            held frame is not the clip), drawn under the patches so the patches stay clean."""
            f = np.zeros((h, w, 3), np.float32)
            f[:] = colours["sand"]
            for x, y in pebbles if pebbles is not None else ():
                cv2.circle(f, (int(x + 2 * i) % w, int(y)), 3, (90, 80, 60), -1)
            for k in ("sky", "skin", "neutral"):
                x, y, rw, rh = rects[k]
                f[y:y + rh, x:x + rw] = colours[k]
            f += r.normal(0, 3, f.shape)
            return np.clip(f * np.array(cast, np.float32), 0, 255).astype(np.uint8)

        ref = frame(np.random.default_rng(1))
        p = inst.workdir / "input/reference_frame.png"
        p.parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(p), cv2.cvtColor(ref, cv2.COLOR_RGB2BGR))
        casts = [tuple(rng.uniform(0.85, 1.15, 3)) for _ in range(8)]
        sources = []  # per clip its frames: each frame has its own grain, as footage does
        for k, cast in enumerate(casts, start=1):
            r = np.random.default_rng(100 + k)
            pebbles = np.column_stack([r.integers(0, w, 30), r.integers(64, h - 4, 30)])  # this clip's own
            sources.append([frame(r, cast, pebbles, i) for i in range(per)])
            write_video(inst.workdir / f"fixtures/beach_vlog/clip{k}.mp4", sources[-1], FPS)
        clips = [{"start_s": k * per / FPS, "end_s": (k + 1) * per / FPS, **rects} for k in range(8)]
        inst.write_json(inst.gt / "look.json", {"clips": clips, "reference": {"skin": rects["skin"], "sky": rects["sky"]}})

        def render(edit=None):
            out = []
            for k in range(8):
                for src in sources[k]:
                    f = src.astype(np.float32) / np.array(casts[k], np.float32)  # graded: the cast removed
                    if edit:
                        f = edit(k, f)
                    out.append(np.clip(f, 0, 255).astype(np.uint8))
            return out

        def magenta(k, f, gain=0.021):
            if k == 1:
                f = f * np.array([1 + gain, 1 - gain, 1 + gain], np.float32)
            return f

        def sky_cyan(k, f):
            if k == 2:
                x, y, rw, rh = rects["sky"]
                f[y:y + rh, x:x + rw] = (90, 190, 210)
            return f

        def skin_red(k, f):
            if k == 4:
                x, y, rw, rh = rects["skin"]
                f[y:y + rh, x:x + rw] = (240, 150, 120)
            return f

        write_video(inst.oracle / OUTPUT, render(), FPS)
        register_video_cases(inst, OUTPUT, "fixtures/beach_vlog/clip1.mp4",
                             baselines=("black_silent", "still_with_sound", "unedited_input", "other_task_oracle"))
        write_video(inst.mutant("clip2_magenta", [N.neutrals], "clip 2 keeps a slight magenta cast") / OUTPUT,
                    render(magenta), FPS)
        # near miss at the seed's |a*| ≤ 3 on neutrals: the same cast weaker (a* ≈ +2.7 on grey; the
        # clip2_magenta mutant above is the just-outside side at a* ≈ +3.4)
        near_gain = gain_for_a(render, magenta, rects["neutral"])
        write_video(inst.mutant("near_miss_magenta_inside", [], f"clip 2 with a magenta cast of a* ≈ {NEAR_MISS_A:g} "
                                "before export: within 3") / OUTPUT,
                    render(lambda k, f: magenta(k, f, gain=near_gain)), FPS)
        write_video(inst.mutant("clip3_sky_cyan", [N.sky_hue], "clip 3's sky pushed to cyan") / OUTPUT,
                    render(sky_cyan), FPS)
        write_video(inst.mutant("clip5_skin_red", [N.skin_match, N.consistency], "clip 5's skin pushed red")
                    / OUTPUT, render(skin_red), FPS)
