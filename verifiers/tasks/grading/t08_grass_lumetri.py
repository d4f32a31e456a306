"""R06.04.02.02-T08: greener grass in Premiere Lumetri (HSL Secondary) without touching skin.

Render: out/picnic_grass.mp4. GT: gt/source.mov, gt/masks.npz {grass, skin, dress}. The grass
mask's mean hue must get 5–15° closer to 120° and its mean chroma rise 15–30 %. The project check
reads state/project.prproj (the harness's copy; Premiere saves it gzip-compressed XML): a Lumetri
effect whose HSL Secondary section is enabled. Premiere's parameter layout is not public; the
reader looks for an element or attribute naming "HSL Secondary" with an enabled/true flag and says
so in docs/grading.md.
"""

from __future__ import annotations

import gzip
import re

import numpy as np

from verifiers.checks import Result, check, check_names
from verifiers.curves import Curve
from verifiers.measure.colour import hue_difference_deg
from verifiers.params import NoParams
from verifiers.paramtypes.grading import GrassChange
from verifiers.provenance import outside_app_writes
from verifiers.synth import InstanceWriter
from verifiers.synthkit import grading as g
from verifiers.tasks.grading._shared.near_miss import untouched_pair
from verifiers.tasks.grading._shared.preservation import GradingTask
from verifiers.tasks.grading._shared.regions import (
    chroma_change_pct,
    circular_mean_hue,
    frames_within,
    untouched,
)

OUTPUT = "out/picnic_grass.mp4"
PROJECT = "state/project.prproj"
N_FRAMES = 24
_HSL = re.compile(r"hsl\s*_?secondary[^>]{0,200}?(enabled|active)\s*=\s*\"(true|1)\"", re.I)


def read_prproj(data: bytes) -> str:
    """A .prproj as text: gzip when it starts with the gzip magic, else plain XML."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def make_scene(rng: np.random.Generator, n: int = N_FRAMES) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    yy = np.arange(g.HEIGHT_PX)[None, :, None]
    lab = g.flat(n, (75, -4, -20))  # sky
    grass = np.broadcast_to(yy >= 60, (n, g.HEIGHT_PX, g.WIDTH_PX)).copy()
    lab[grass] = (55, -12, 40)  # yellowish grass, hue ≈ 107°
    lab[..., 0][grass] += 8 * g.texture(rng, n, sigma_px=1.5, pan_px_per_frame=0.3)[grass]
    skin = g.ellipse(n, g.path_linear(n, (90, 60), (100, 60)), (13, 16))
    dress = g.rect(n, np.c_[g.path_linear(n, (74, 76), (84, 76)), np.tile([32, 50], (n, 1))])
    dress &= ~skin
    lab[dress] = (80, 0, 60)  # yellow dress, hue ≈ 90°: close to the grass
    lab[skin] = (65, 15, 20)
    lab[..., 0][skin | dress] += 3 * g.texture(rng, n, sigma_px=2)[skin | dress]
    grass &= ~(skin | dress)
    return g.to_rgb8(lab), {"grass": grass, "skin": skin, "dress": dress}


TASK = "R06.04.02.02-T08"
N = check_names(TASK)


class GrassLumetri(GradingTask):
    task_id = TASK
    output = OUTPUT
    preserves = (N.skin_dress_untouched, N.hsl_secondary)
    primary_mask = "grass"

    @check(N.hsl_secondary)
    def hsl_secondary(self, p: NoParams, curve: Curve) -> Result:
        path = self.ctx.workdir / PROJECT
        bad = outside_app_writes(self.ctx)
        if bad:
            return Result(curve.passes(False), {"outside_writes": bad},
                          f"grade file written outside Premiere: {bad[0]} (audit)")
        if not path.exists():
            return Result(curve.passes(False), {}, f"{PROJECT} missing: no project to inspect")
        found = bool(_HSL.search(read_prproj(path.read_bytes())))
        return Result(curve.passes(found), {"file": PROJECT, "audit": "not recorded" if self.ctx.events is None else "checked"},
                      "" if found else "no enabled Lumetri HSL Secondary in the project")

    @check(N.grass_change)
    def grass_change(self, p: GrassChange, curve: Curve) -> Result:
        shot, grass = self.shot, self.shot.mask("grass")
        ls, lo, target = shot.lab("src"), shot.lab("out"), p.target_hue_deg
        toward = np.array([abs(hue_difference_deg(circular_mean_hue(ls[i], grass[i]), target))
                           - abs(hue_difference_deg(circular_mean_hue(lo[i], grass[i]), target)) for i in range(shot.n)])
        gain = chroma_change_pct(shot, grass)
        return frames_within(curve, {"hue_toward_target_deg": (toward, p.min_hue_shift_deg, p.max_hue_shift_deg),
                                     "chroma_gain_pct": (gain, p.min_chroma_gain_pct, p.max_chroma_gain_pct)},
                             lambda _pct: f"grass hue moved {toward.mean():.1f}° toward {target:g}°, "
                                          f"chroma {gain.mean():+.0f}%")

    skin_dress_untouched = untouched(N.skin_dress_untouched, "skin", "dress")

    def build(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        src, masks = make_scene(rng)
        g.write_shot(inst, src, masks, {"grass_source_hue_deg": 107})
        grass = masks["grass"]

        def project(folder, hsl: bool) -> None:
            xml = ('<?xml version="1.0"?>\n<PremiereData Version="3">\n  <VideoFilterComponent MatchName="AE.ADBE Lumetri">\n'
                   f'    <HSLSecondary Enabled="{"true" if hsl else "false"}" Key="grass"/>\n'
                   '  </VideoFilterComponent>\n</PremiereData>\n')
            (folder / "state").mkdir(parents=True, exist_ok=True)
            (folder / PROJECT).write_bytes(gzip.compress(xml.encode()))

        def render(folder, alpha, hue=10.0, chroma=1.22) -> None:
            g.write_video(folder / OUTPUT, g.grade_lab(src, alpha, hue_deg=hue, chroma_scale=chroma))

        render(inst.oracle, grass)
        project(inst.oracle, True)

        # near misses at the seed's lines (hue 5…15° toward green, chroma +15…30 %): 6° and +27 % pass in
        # full, 4° and +34 % fail every frame (the grass sits 13° from the target: "toward" cannot pass 15°)
        for name, lowers, why, hue, chroma in (
                ("near_miss_hue_inside", [], "hue +6°: just inside the 5° edge", 6.0, 1.22),
                ("near_miss_hue_outside", [N.grass_change], "hue +4°: just outside the 5° edge", 4.0, 1.22),
                ("near_miss_chroma_inside", [], "chroma +27 %: just inside the 30 % edge", 10.0, 1.27),
                ("near_miss_chroma_outside", [N.grass_change], "chroma +34 %: just outside the 30 % edge", 10.0, 1.34)):
            m = inst.mutant(name, lowers, why)
            render(m, grass, hue=hue, chroma=chroma)
            project(m, True)

        m = inst.mutant("saturation_only", [N.grass_change], "grass saturated but its hue left yellowish")
        render(m, grass, hue=0.0)
        project(m, True)

        m = inst.mutant("key_catches_dress", [N.skin_dress_untouched], "the green key also caught the yellow dress")
        render(m, grass | masks["dress"])
        project(m, True)

        m = inst.mutant("basic_correction_not_hsl", [N.hsl_secondary], "HSL Secondary left disabled (mask from elsewhere)")
        render(m, grass)
        project(m, False)

        def write(folder, frames: np.ndarray) -> None:
            g.write_video(folder / OUTPUT, frames)
            project(folder, True)

        untouched_pair(inst, N.skin_dress_untouched, g.grade_lab(src, grass, hue_deg=10.0, chroma_scale=1.22), src,
                       [masks["skin"], masks["dress"]], 1.5, write, "skin_dress")
