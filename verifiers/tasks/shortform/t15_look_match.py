"""R06.04.01.04-T15: match eight beach-vlog clips to a reference look (neutrals, skin, sky, consistency).

Work dir: fixtures/beach_vlog/clip1..8.mp4, input/reference_frame.png. Output: out/beach_matched.mp4
(the eight clips in order). GT: gt/look.json = {"clips": [{"start_s", "end_s", "neutral", "skin",
"sky"}] (rects [x, y, w, h] in export pixels), "reference": {"skin", "sky"} (rects in the PNG)}.
Each clip is judged on its middle frame.
"""

from __future__ import annotations

import cv2
import numpy as np

from verifiers.base import AgentOutputError, Checks, GTError, ScoreContext, TaskVerifier
from verifiers.measure.colour import delta_e2000, hue_deg, hue_difference_deg, mean_lab, rect_mask
from verifiers.measure.errors import MediaError
from verifiers.measure.frames import read_frame_at
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.synthkit.shortform_video import write_video
from verifiers.tasks.shortform._shared.export import probe_artifact

OUTPUT = "out/beach_matched.mp4"
FPS = 24.0


def _lab(rgb: np.ndarray, rect) -> np.ndarray:
    h, w = rgb.shape[:2]
    return mean_lab(rgb, rect_mask(h, w, *rect))


@register
class LookMatch(TaskVerifier):
    task_id = "R06.04.01.04-T15"

    def score(self, ctx: ScoreContext, checks: Checks) -> None:
        look = ctx.gt_json("look.json")
        ref = cv2.imread(str(ctx.input("input/reference_frame.png")))
        if ref is None:
            raise GTError("input/reference_frame.png unreadable")
        ref = cv2.cvtColor(ref, cv2.COLOR_BGR2RGB)
        ref_skin, ref_sky = _lab(ref, look["reference"]["skin"]), _lab(ref, look["reference"]["sky"])
        try:
            path, _pr = probe_artifact(ctx, OUTPUT)
            mids = [read_frame_at(path, (c["start_s"] + c["end_s"]) / 2).rgb for c in look["clips"]]
        except (AgentOutputError, MediaError) as exc:
            checks.fail_rest(str(exc))
            return
        n = len(look["clips"])
        neutral, skin, sky = [], [], []
        for c, rgb in zip(look["clips"], mids, strict=True):
            neutral.append(_lab(rgb, c["neutral"]))
            skin.append(_lab(rgb, c["skin"]))
            sky.append(_lab(rgb, c["sky"]))
        npar = checks.params("neutrals")
        n_ok = [bool(abs(v[1]) <= npar["max_abs_a"] and abs(v[2]) <= npar["max_abs_b"]) for v in neutral]
        checks.set("neutrals", sum(n_ok) / n, {"neutral_ab": [[v[1], v[2]] for v in neutral]},
                   f"{sum(n_ok)}/{n} clips neutral")
        de = [float(delta_e2000(s, ref_skin)) for s in skin]
        mx = checks.params("skin_match")["max_delta_e2000"]
        checks.set("skin_match", sum(d <= mx for d in de) / n, {"skin_de2000": de},
                   f"{sum(d <= mx for d in de)}/{n} clips' skin within {mx} dE2000 of the reference")
        dh = [abs(float(hue_difference_deg(hue_deg(s), hue_deg(ref_sky)))) for s in sky]
        mh = checks.params("sky_hue")["max_hue_delta_deg"]
        checks.set("sky_hue", sum(d <= mh for d in dh) / n, {"sky_hue_delta_deg": dh},
                   f"{sum(d <= mh for d in dh)}/{n} skies within {mh}° of the reference hue")
        med = np.median(np.array(skin), axis=0)
        dc = [float(delta_e2000(s, med)) for s in skin]
        mc = checks.params("consistency")["max_delta_e2000"]
        checks.set("consistency", sum(d <= mc for d in dc) / n, {"skin_de2000_to_median": dc},
                   f"{sum(d <= mc for d in dc)}/{n} clips' skin within {mc} dE2000 of the others")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        w, h = 320, 180
        per = int(1.0 * FPS)
        rects = {"sky": [0, 0, 320, 60], "skin": [140, 80, 50, 60], "neutral": [230, 110, 50, 40]}
        colours = {"sky": (110, 160, 220), "skin": (224, 172, 140), "neutral": (150, 150, 150),
                   "sand": (210, 190, 150)}

        def frame(r: np.random.Generator, cast=(1.0, 1.0, 1.0)) -> np.ndarray:
            f = np.zeros((h, w, 3), np.float32)
            f[:] = colours["sand"]
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
        for k, cast in enumerate(casts, start=1):
            r = np.random.default_rng(100 + k)
            write_video(inst.workdir / f"fixtures/beach_vlog/clip{k}.mp4", [frame(r, cast) for _ in range(per)], FPS)
        clips = [{"start_s": k * per / FPS, "end_s": (k + 1) * per / FPS, **rects} for k in range(8)]
        inst.write_json(inst.gt / "look.json", {"clips": clips, "reference": {"skin": rects["skin"], "sky": rects["sky"]}})

        def render(edit=None):
            out = []
            for k in range(8):
                r = np.random.default_rng(200 + k)
                for _ in range(per):
                    f = frame(r).astype(np.float32)  # matched: the cast removed
                    if edit:
                        f = edit(k, f)
                    out.append(np.clip(f, 0, 255).astype(np.uint8))
            return out

        def magenta(k, f):
            if k == 1:
                f = f * np.array([1.021, 0.979, 1.021], np.float32)
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
        write_video(inst.mutant("clip2_magenta", ["neutrals"], "clip 2 keeps a slight magenta cast") / OUTPUT,
                    render(magenta), FPS)
        write_video(inst.mutant("clip3_sky_cyan", ["sky_hue"], "clip 3's sky pushed to cyan") / OUTPUT,
                    render(sky_cyan), FPS)
        write_video(inst.mutant("clip5_skin_red", ["skin_match", "consistency"], "clip 5's skin pushed red")
                    / OUTPUT, render(skin_red), FPS)
