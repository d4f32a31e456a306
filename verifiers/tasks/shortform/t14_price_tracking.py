"""R06.04.01.04-T14: a '¥199' price label tracked above a spinning shoe in Jianying.

Work dir: fixtures/shoe_spin.mp4. Output: out/shoe_label.mp4.
GT: gt/shoe.json = {"fps", "boxes": [[x, y, w, h] per frame]} (the shoe, frame pixels);
gt/render.json = instance scale (synthetic: 1/3, so OCR still reads the label).
The label is found by OCR on frames sampled every 0.5 s: label_present needs its text; tracking and
overlap use the box of the text OCR finds (whatever it says), so a typo costs only label_present.
A sample counts only when the export plays the shoe clip in step there (`_shared/plays.py`): a
correct first frame held for the whole length shows a perfect label in every sample (issue 21).
no_overlap rewards leaving the shoe uncovered, so it pays in proportion to the samples where a
label is found on the playing clip (rule 3).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from verifiers.base import AgentOutputError, GTError
from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.errors import MediaError
from verifiers.measure.frames import iter_frames
from verifiers.measure.ocr import read_text_cached
from verifiers.params import NoParams
from verifiers.paramtypes.shortform import LabelText, Tracking
from verifiers.synth import InstanceWriter
from verifiers.synthkit.shortform_video import write_video
from verifiers.tasks.shortform._shared.cases import register_video_cases
from verifiers.tasks.shortform._shared.check_guards import needs_ocr
from verifiers.tasks.shortform._shared.export import instance_scale, probe_artifact
from verifiers.tasks.shortform._shared.plays import SourceTimeline

TASK = "R06.04.01.04-T14"
N = check_names(TASK)
OUTPUT = "out/shoe_label.mp4"
FPS = 24.0
SCALE = 1 / 3
SAMPLE_S = 0.5
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")  # synth only (Debian fonts-dejavu)


def _norm(text: str) -> str:
    """NFKC (fullwidth ￥ → ¥) without spaces: OCR returns either width of the yen sign."""
    return "".join(unicodedata.normalize("NFKC", text).split())


def reads_as(text: str, want: str) -> bool:
    """The label's text, allowing OCR to misread the currency sign alone (seen: '?199'): the
    digits must be exact, and nothing but one sign-like character may precede them."""
    got, want = _norm(text), _norm(want)
    if want in got:
        return True
    digits = want.lstrip("¥$€£")
    return got.endswith(digits) and len(got) == len(digits) + 1 and not got[0].isdigit()


@dataclass(frozen=True)
class LabelTrack:
    """OCR of the export every SAMPLE_S: how often the label was read, placed right, on the shoe."""

    n: int
    playing: int  # samples showing the source frame of their own time
    found: int
    tracked: int
    overlaps: int
    located: int
    samples: list[dict]


class ShoeFile(GTFile, file="shoe.json", task=TASK):
    """gt/shoe.json: the shoe's box on every frame of the clip (the clip's pixels = the export's)."""

    fps: float = gt_field(doc="the clip's frame rate: box k is the frame at k / fps")
    boxes_px: list[list[float]] = gt_field("boxes", "per frame: x, y, w, h of the shoe")

    def validate(self) -> None:
        self.expect(self.fps > 0, "fps", "must be > 0")
        self.expect(bool(self.boxes_px) and all(len(b) == 4 for b in self.boxes_px), "boxes_px",
                    "must hold one [x, y, w, h] per frame")


def track_label(path: Path, source: SourceTimeline, shoe: ShoeFile, want: str, tp: Tracking,
                scale: float) -> LabelTrack:
    """Only samples that play the clip in step are judged; the others count as misses."""
    n = playing = found = tracked = overlaps = located = 0
    samples = []
    for fr in iter_frames(path, every_s=SAMPLE_S):
        n += 1
        if not source.plays(fr.rgb, fr.t_s):
            samples.append({"t_s": fr.t_s, "label": None, "plays_source": False})
            continue
        playing += 1
        boxes = read_text_cached(fr.rgb)
        label = next((b for b in boxes if reads_as(b.text, want)), None)
        found += label is not None
        box = label or next((b for b in boxes if any(ch.isdigit() for ch in b.text)), None)
        i = min(round(fr.t_s * shoe.fps), len(shoe.boxes_px) - 1)
        sx, sy, sw, sh = shoe.boxes_px[i]
        if box is None:
            samples.append({"t_s": fr.t_s, "label": None})
            continue
        located += 1
        cx, cy = box.center
        dx, above = cx - (sx + sw / 2), sy - cy
        ok = abs(dx) <= tp.max_dx_px * scale and tp.min_above_px * scale <= above <= tp.max_above_px * scale
        tracked += ok
        overlap = box.x0 < sx + sw and box.x1 > sx and box.y0 < sy + sh and box.y1 > sy
        overlaps += overlap
        samples.append({"t_s": fr.t_s, "text": box.text, "dx_px": dx, "above_px": above, "overlap": overlap})
    return LabelTrack(n, playing, found, tracked, overlaps, located, samples)


class PriceTracking(CheckedTask):
    task_id = TASK

    @provides
    def track(self) -> LabelTrack:
        shoe = self.ctx.gt_typed(ShoeFile)
        try:
            source = SourceTimeline(self.ctx.input("fixtures/shoe_spin.mp4"))
        except MediaError as exc:
            raise GTError(f"fixtures/shoe_spin.mp4: {exc}") from None
        scale = instance_scale(self.ctx)
        path, _pr = probe_artifact(self.ctx, OUTPUT)
        want = _norm(self.task.check(N.label_present).typed.text)
        try:
            return track_label(path, source, shoe, want, self.task.check(N.tracking).typed, scale)
        except MediaError as exc:
            raise AgentOutputError(str(exc)) from None

    @check(N.label_present)
    @needs_ocr
    def label_present(self, p: LabelText, curve: Curve) -> Result:
        t = self.track
        return Result(curve.count(t.found, t.n), {"found": f"{t.found}/{t.n}", "playing": f"{t.playing}/{t.n}"},
                      f"'{_norm(p.text)}' read in {t.found}/{t.n} samples ({t.playing} play the clip in step)")

    @check(N.tracking)
    @needs_ocr
    def tracking(self, p: Tracking, curve: Curve) -> Result:
        t = self.track
        pct = 100 * t.tracked / t.n if t.n else 0.0
        return Result(curve.passes(pct >= p.min_frames_pct), {"samples": t.samples, "tracked_pct": pct},
                      f"label placed right in {pct:.0f}% of samples (need {p.min_frames_pct}%)")

    @check(N.no_overlap)
    @needs_ocr
    def no_overlap(self, p: NoParams, curve: Curve) -> Result:
        t = self.track
        if not t.located:
            return Result.fail("no label found on the playing clip")
        present = t.located / t.n  # rule 3: leaving the shoe uncovered pays with the label there
        return Result(curve.passes(t.overlaps == 0) * present,
                      {"overlapping_samples": t.overlaps, "label_on_playing_clip": f"{t.located}/{t.n}"},
                      f"label overlaps the shoe in {t.overlaps}/{t.located} samples"
                      f" (label found on the playing clip in {t.located}/{t.n})")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        from PIL import Image, ImageDraw, ImageFont

        w, h = 360, 640
        n = int(4 * FPS)
        phase = float(rng.uniform(0, 2 * np.pi))
        # the shoe crosses the frame (45 px/s, either way) with a 10 px sway: its centre moves one
        # way all along, so no pose repeats. It used to swing 90 px on a 4 s sine: at phases near
        # k pi/4 the path was symmetric in time and two moments showed the same picture, which
        # `plays` cannot tell apart (seed 7: the oracle "played" 6/8 samples, 33.75)
        sweep = float(rng.choice([-1.0, 1.0]))
        frames, boxes = [], []
        base = np.zeros((h, w, 3), np.uint8)
        base[:] = (70, 110, 140)
        cv2.rectangle(base, (0, 420), (w, h), (150, 140, 120), -1)
        for i in range(n):
            t = i / FPS
            cx = 180 + sweep * 45 * (t - 2) + 10 * np.sin(np.pi * t + phase)
            cy = 400 + 15 * np.sin(2 * np.pi * t / 2)
            ew = 60 + 15 * np.cos(2 * np.pi * t)  # the spin changes the width
            f = base.copy()
            cv2.ellipse(f, (round(cx), round(cy)), (round(ew), 28), 0, 0, 360, (30, 30, 35), -1)
            cv2.ellipse(f, (round(cx - ew / 3), round(cy - 10)), (round(ew / 3), 10), 0, 0, 360, (220, 220, 220), -1)
            frames.append(f)
            boxes.append([round(cx - ew), round(cy - 28), 2 * round(ew), 56])
        write_video(inst.workdir / "fixtures/shoe_spin.mp4", frames, FPS)
        inst.write_json(inst.gt / "shoe.json", {"fps": FPS, "boxes": boxes})
        inst.write_json(inst.gt / "render.json", {"scale": SCALE})
        font = ImageFont.truetype(str(FONT), 22)

        def render(text="¥199", static=False, drop_px=27):
            out = []
            for i, f in enumerate(frames):
                x, y, bw, _bh = boxes[0 if static else i]
                cx, cy = x + bw / 2, y - drop_px if drop_px > 0 else y + 20
                img = Image.fromarray(f)
                d = ImageDraw.Draw(img)
                d.rounded_rectangle((cx - 40, cy - 15, cx + 40, cy + 15), 6, fill=(210, 30, 30))
                d.text((cx, cy), text, font=font, fill=(255, 255, 255), anchor="mm")
                out.append(np.asarray(img))
            return out

        write_video(inst.oracle / OUTPUT, render(), FPS)
        n_samples = int(np.ceil(n / FPS / SAMPLE_S))
        register_video_cases(inst, OUTPUT, "fixtures/shoe_spin.mp4", keeps={"still_with_sound": (
            45 / n_samples, "the held first frame is the right composite for the first sample (the clip is at its "
                            f"first frame there): 1/{n_samples} of label_present (20) and of no_overlap (25)")})
        write_video(inst.mutant("wrong_price", [N.label_present], "label reads ¥189") / OUTPUT, render(text="¥189"), FPS)
        write_video(inst.mutant("not_tracked", [N.tracking], "label left where the shoe started") / OUTPUT,
                    render(static=True), FPS)
        # near misses at the seed's 120 px (x 1/3 = 40 px) "above the shoe" edge: the label centre
        # 37 px (111 full-scale) and 44 px (132) above the shoe's top
        write_video(inst.mutant("near_miss_above_inside", [], "label 111 px above the shoe: inside 120") / OUTPUT,
                    render(drop_px=37), FPS)
        write_video(inst.mutant("near_miss_above_outside", [N.tracking], "label 132 px above the shoe: outside 120")
                    / OUTPUT, render(drop_px=44), FPS)
        write_video(inst.mutant("on_the_shoe", [N.tracking, N.no_overlap], "label dropped onto the shoe") / OUTPUT,
                    render(drop_px=0), FPS)
