"""R06.04.01.04-T05: key a green-screen presenter over an office background, bottom-left, 60 % high.

Work dir: fixtures/presenter_green.mp4, fixtures/office_bg.jpg. Output: out/presenter.mp4.
GT: gt/matte.json = {"fps", "parts": per source frame [[kind, cx, cy, a, b], ...] in source pixels
(kind "ellipse" with semi-axes a, b or "rect" with half-sizes a, b), "source_px": [w, h]};
gt/render.json = instance scale (synthetic only).

The presenter mask is what differs from the (scaled) background image. Key quality compares it to the
GT matte scaled to the mask's own bbox height and aligned on its bbox, so a misplaced but clean key
loses placement only.

Content identity (issue 21, rule 2): that shape comparison is blind to a still composite repeated
(the presenter's outline barely changes between frames), so each sample's mask is also compared
with the matte of every source frame: it must match its own time's matte as well as any other
(within FOLLOW_TOL_IOU) wherever the source's mattes differ by more than that. A composite that
does not follow the presenter fails every check. Rule 3: spill and export_spec (keep the edges
clean, export the right size) pay in proportion to the samples whose key passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from verifiers.base import GTError
from verifiers.checks import Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.frames import Frame, iter_frames
from verifiers.paramtypes.shortform import KeyQuality, Placement, SizePx, Spill
from verifiers.synth import InstanceWriter
from verifiers.synthkit.shortform_video import write_video
from verifiers.tasks.shortform._shared.cases import register_video_cases
from verifiers.tasks.shortform._shared.check_guards import unless
from verifiers.tasks.shortform._shared.export import ExportTask, instance_scale, size_ok
from verifiers.tasks.shortform._shared.luma import frame_luma, luma_codes, shrink_by_chroma_bleed

TASK = "R06.04.01.04-T05"
N = check_names(TASK)
OUTPUT = "out/presenter.mp4"
FPS = 24.0
SCALE = 1 / 6
DIFF_LEVEL = 30  # R'G'B' max-channel difference that marks presenter colour against the background
# Y' difference that marks presenter pixels against the background. Away from the presenter the
# export is the background JPEG through H.264: |ΔY'| there is codec noise, 99.9th percentile 2.4
# codes on the seed-0 synthetic oracle. 12 = five times that.
LUMA_DIFF_LEVEL = 12
GREEN = (0, 177, 64)
#: IoU by which a sample's mask may match another source frame's matte better than its own time's.
#: Measured (seed 0, synthetic presenter swaying ±6 px): the oracle and its four H.264/AAC exports
#: match their own time best (gap 0.000, mutants ≤ 0.006); the first frame held misses by 0.018 on
#: the samples where the presenter has moved, the mattes' own spread over time being 0.03-0.045.
#: A real presenter moves far more than this miniature; 0.01 sits between the two.
FOLLOW_TOL_IOU = 0.01
#: share of informative samples (source mattes differing over time) whose mask follows its own time
FOLLOW_MIN_SHARE = 0.8


def raster(parts, w: int, h: int) -> np.ndarray:
    m = np.zeros((h, w), np.uint8)
    for kind, cx, cy, a, b in parts:
        if kind == "ellipse":
            cv2.ellipse(m, (round(cx), round(cy)), (round(a), round(b)), 0, 0, 360, 1, -1)
        else:
            cv2.rectangle(m, (round(cx - a), round(cy - b)), (round(cx + a), round(cy + b)), 1, -1)
    return m.astype(bool)


def bbox(mask: np.ndarray) -> tuple[int, int, int, int] | None:
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return None
    return int(xs.min()), int(ys.min()), int(xs.max() - xs.min() + 1), int(ys.max() - ys.min() + 1)


@dataclass(frozen=True)
class KeyMeasure:
    """Per sampled frame: mask-vs-GT-matte IoU, edge-band spill, the mask's bbox."""

    ious: list[float]
    spills: list[float]
    boxes: list[tuple[int, int, int, int]]
    follows: list[bool | None]  # per sample: matches its own time's matte best (None: mattes all alike)

    def following_share(self) -> float | None:
        """Share of informative samples that follow the presenter's motion (None: none informative)."""
        told = [f for f in self.follows if f is not None]
        return sum(told) / len(told) if told else None

    def plays(self) -> bool:
        share = self.following_share()
        return share is None or share >= FOLLOW_MIN_SHARE


def frame_iou(mask: np.ndarray, gt_src: np.ndarray, bb: tuple, gb: tuple) -> float:
    """IoU of the mask with the GT matte scaled to the mask's bbox height and placed on its bbox."""
    fh, fw = mask.shape
    k = bb[3] / gb[3]
    crop = gt_src[gb[1]:gb[1] + gb[3], gb[0]:gb[0] + gb[2]].astype(np.uint8)
    gt_c = cv2.resize(crop, (max(1, round(gb[2] * k)), bb[3]), interpolation=cv2.INTER_NEAREST) > 0
    gt_full = np.zeros_like(mask)
    x0, y0 = bb[0], bb[1]
    hh, ww = gt_c.shape
    gt_full[y0:y0 + hh, x0:x0 + ww] = gt_c[: fh - y0, : fw - x0]
    return float((mask & gt_full).sum() / max(1, (mask | gt_full).sum()))


def presenter_mask(fr: Frame, bg: np.ndarray) -> np.ndarray:
    """Presenter pixels: where Y' differs from the background (full resolution: the key's true
    edge), plus where colour differs once the 4:2:0 chroma bleed is eroded away (isoluminant
    parts). A mask on R'G'B' alone grows a pixel past the edge onto background pixels whose chroma
    is interpolated from the presenter, and the 2-px spill band then sits half on the background."""
    dy = np.abs(frame_luma(fr) - luma_codes(bg, fr.tags.matrix))
    d = np.abs(fr.rgb.astype(np.int16) - bg).max(axis=2)
    mask = (dy > LUMA_DIFF_LEVEL) | shrink_by_chroma_bleed(d > DIFF_LEVEL)
    return cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)) > 0


class MatteFile(GTFile, file="matte.json", task=TASK):
    """gt/matte.json: the presenter's matte on every source frame, as ellipses and rectangles."""

    fps: float = gt_field(doc="the presenter clip's frame rate: parts[k] is the frame at k / fps")
    parts: list[list[list[str | float]]] = gt_field(
        doc="per source frame: [kind ('ellipse' or 'rect'), cx, cy, a, b] shapes in source pixels (half axes)")
    source_px: list[int] = gt_field(doc="the presenter clip's width, height")

    def validate(self) -> None:
        self.expect(self.fps > 0, "fps", "must be > 0")
        self.expect(len(self.source_px) == 2 and min(self.source_px) > 0, "source_px", "must be [width, height] > 0")
        self.expect(bool(self.parts) and all(
            len(s) == 5 and s[0] in ("ellipse", "rect") and all(isinstance(v, float) for v in s[1:])
            for frame in self.parts for s in frame), "parts",
            "must hold, per frame, [kind, cx, cy, a, b] shapes with kind 'ellipse' or 'rect'")


def measure_key(path: Path, bg_img: np.ndarray, matte: MatteFile, fw: int, fh: int) -> KeyMeasure:
    bg = cv2.resize(bg_img, (fw, fh), interpolation=cv2.INTER_AREA).astype(np.int16)
    sw, sh = matte.source_px
    mattes = [raster(parts, sw, sh) for parts in matte.parts]
    boxes = [bbox(m) for m in mattes]
    out = KeyMeasure([], [], [], [])
    for fr in iter_frames(path, every_s=0.5):
        i = min(round(fr.t_s * matte.fps), len(matte.parts) - 1)
        mask = presenter_mask(fr, bg)
        bb = bbox(mask)
        gb = boxes[i]
        if bb is None or gb is None:
            out.ious.append(0.0)
            out.follows.append(False)
            continue
        out.boxes.append(bb)
        every = [frame_iou(mask, m, bb, b) if b is not None else 0.0 for m, b in zip(mattes, boxes, strict=True)]
        out.ious.append(every[i])
        out.follows.append(None if max(every) - min(every) <= FOLLOW_TOL_IOU else every[i] >= max(every) - FOLLOW_TOL_IOU)
        band = mask & ~cv2.erode(mask.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
        px = fr.rgb[band].astype(float) / 255.0
        if len(px):
            out.spills.append(float(np.mean(px[:, 1] - np.maximum(px[:, 0], px[:, 2]))))
    return out


class GreenKey(ExportTask, output=OUTPUT):
    task_id = TASK

    @provides
    def key(self) -> KeyMeasure:
        matte = self.ctx.gt_typed(MatteFile)
        bg_img = cv2.imread(str(self.ctx.input("fixtures/office_bg.jpg")))
        if bg_img is None:
            raise GTError("fixtures/office_bg.jpg unreadable")
        self.ctx.input("fixtures/presenter_green.mp4")
        f = self.export.facts
        return measure_key(self.export.path, cv2.cvtColor(bg_img, cv2.COLOR_BGR2RGB), matte,
                           f["width_px"], f["height_px"])

    def _not_playing(self) -> Result | None:
        """Every check's answer when the composite does not follow the presenter clip."""
        if self.key.plays():
            return None
        share = self.key.following_share() or 0.0
        return Result.fail(f"the composite does not play the presenter clip: only {100 * share:.0f}% of samples"
                           f" match their own time's matte best (need {100 * FOLLOW_MIN_SHARE:.0f}%; a held frame?)",
                           {"following_pct": 100 * share})

    def _keyed_share(self) -> float:
        """Rule 3: share of samples whose key passes (the primary change present there)."""
        p = self.task.check(N.key_quality).typed
        ious = self.key.ious
        return sum(v >= p.min_iou for v in ious) / len(ious) if ious else 0.0

    @check(N.key_quality)
    @unless(_not_playing)
    def key_quality(self, p: KeyQuality, curve: Curve) -> Result:
        ious = self.key.ious
        iou = float(np.median(ious)) if ious else 0.0
        return Result(curve.passes(iou >= p.min_iou), {"median_iou": iou, "min_iou": p.min_iou},
                      f"presenter mask IoU {iou:.3f} vs GT matte")

    @check(N.spill)
    @unless(_not_playing)
    def spill(self, p: Spill, curve: Curve) -> Result:
        spills = self.key.spills
        sp = float(np.median(spills)) if spills else 1.0
        keyed = self._keyed_share()
        return Result(curve.passes(sp <= p.max_spill) * keyed, {"edge_spill": sp, "keyed_share": keyed},
                      f"edge spill {sp:.3f} (max {p.max_spill}); key right in {100 * keyed:.0f}% of samples")

    @check(N.placement)
    @unless(_not_playing)
    def placement(self, p: Placement, curve: Curve) -> Result:
        boxes = self.key.boxes
        if not boxes:
            return Result.fail("no presenter found over the background")
        fh = self.export.facts["height_px"]
        x, y, w, h = np.median(np.array(boxes), axis=0)
        share = 100 * h / fh
        tol = max(1.0, p.anchor_tolerance_px * instance_scale(self.ctx))
        ok = p.min_height_pct <= share <= p.max_height_pct and x <= tol and abs(fh - (y + h)) <= tol
        return Result(curve.passes(ok), {"bbox_px": [x, y, w, h], "height_pct": share},
                      f"presenter {share:.1f}% of the height at x={x:.0f}, bottom gap {fh - (y + h):.0f} px")

    @check(N.export_spec)
    @unless(_not_playing)
    def export_spec(self, p: SizePx, curve: Curve) -> Result:
        facts = self.export.facts
        keyed = self._keyed_share()
        return Result(curve.passes(size_ok(facts, list(p.size_px), instance_scale(self.ctx))) * keyed,
                      {**facts, "keyed_share": keyed}, f"key right in {100 * keyed:.0f}% of samples")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        sw, sh = 320, 180
        n = int(3 * FPS)
        ow, oh = 180, 320
        r = np.random.default_rng(int(rng.integers(1 << 30)))
        bg = np.zeros((640, 360, 3), np.uint8)
        bg[:] = (200, 190, 170)
        for _ in range(14):
            c = tuple(int(v) for v in r.integers(60, 240, 3))
            x, y = int(r.integers(0, 360)), int(r.integers(0, 640))
            cv2.rectangle(bg, (x, y), (x + int(r.integers(20, 120)), y + int(r.integers(20, 160))), c, -1)
        p = inst.workdir / "fixtures/office_bg.jpg"
        p.parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(p), cv2.cvtColor(bg, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 97])
        parts_all, src = [], []
        for i in range(n):
            dx = 6 * np.sin(2 * np.pi * i / n)
            parts = [["ellipse", 160 + dx, 50, 16, 20], ["rect", 160 + dx * 0.5, 125, 38, 50]]
            parts_all.append(parts)
            f = np.zeros((sh, sw, 3), np.uint8)
            f[:] = GREEN
            m = raster(parts, sw, sh)
            f[m] = (200, 120, 90)
            f[m & (np.arange(sh)[:, None] > 80)] = (40, 60, 140)  # shirt
            src.append(f)
        write_video(inst.workdir / "fixtures/presenter_green.mp4", src, FPS)
        inst.write_json(inst.gt / "matte.json", {"fps": FPS, "parts": parts_all, "source_px": [sw, sh]})
        inst.write_json(inst.gt / "render.json", {"scale": SCALE})

        def render(size=(ow, oh), anchor="left", grow=0, spill=0.0, height_share=0.6):
            w, h = size
            bgo = cv2.resize(bg, (w, h), interpolation=cv2.INTER_AREA)
            out = []
            for i in range(n):
                m = raster(parts_all[i], sw, sh).astype(np.uint8)
                if grow:
                    m = cv2.dilate(m, np.ones((2 * grow + 1, 2 * grow + 1), np.uint8))
                f = src[i].copy()
                gb = bbox(m > 0)
                x, y, bw, bh = gb
                k = height_share * h / bh
                nw, nh = max(1, round(bw * k)), round(bh * k)
                pf = cv2.resize(f[y:y + bh, x:x + bw], (nw, nh), interpolation=cv2.INTER_AREA)
                pm = cv2.resize(m[y:y + bh, x:x + bw], (nw, nh), interpolation=cv2.INTER_NEAREST) > 0
                if spill:  # the whole outline: outside the bbox crop is not presenter (an eroded
                    # crop border stays filled by default, and the body's sides kept no cast: seed 11)
                    edge = pm & ~cv2.erode(pm.astype(np.uint8), np.ones((7, 7), np.uint8),
                                           borderType=cv2.BORDER_CONSTANT, borderValue=0).astype(bool)
                    pf = pf.astype(np.float32)
                    pf[edge, 1] += spill * 255
                    pf = np.clip(pf, 0, 255).astype(np.uint8)
                o = bgo.copy()
                x0 = 0 if anchor == "left" else w - nw
                y0 = h - nh
                o[y0:y0 + nh, x0:x0 + nw][pm] = pf[pm]
                out.append(o)
            return out

        write_video(inst.oracle / OUTPUT, render(), FPS)
        register_video_cases(inst, OUTPUT, "fixtures/presenter_green.mp4")
        write_video(inst.mutant("green_fringe", [N.key_quality, N.spill, N.export_spec],
                                "key leaves a 4-px green fringe (a bad matte that is also green on the edge; export_spec pays with the key only)") / OUTPUT,
                    render(grow=4), FPS)
        write_video(inst.mutant("spill", [N.spill], "edges keep a green cast (no despill)") / OUTPUT,
                    render(spill=0.7), FPS)
        # near misses at the seed's 58-62 % height edge (1 px of the 320-px miniature = 0.31 %)
        write_video(inst.mutant("near_miss_height_inside", [], "presenter 61 % high: inside the 62 % edge") / OUTPUT,
                    render(height_share=0.61), FPS)
        write_video(inst.mutant("near_miss_height_outside", [N.placement], "presenter 63.5 % high: outside the 62 % edge")
                    / OUTPUT, render(height_share=0.635), FPS)
        write_video(inst.mutant("bottom_right", [N.placement], "anchored bottom-right") / OUTPUT,
                    render(anchor="right"), FPS)
        write_video(inst.mutant("exported_720p", [N.export_spec], "exported 720x1280") / OUTPUT,
                    render(size=(120, 214)), FPS)
