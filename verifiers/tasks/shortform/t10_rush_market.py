"""R06.04.01.04-T10: Premiere Rush (Android) — 'Night Market' title, four 4-s clips, Warm preset, 1080p.

Work dir: fixtures/market/clip1..4.mp4. Output: device/Downloads/market.mp4 (pulled from the tablet).
GT: gt/render.json = instance scale (synthetic only). The title is read by OCR (verifiers.measure.ocr).

Content identity (issue 21): a segment is a clip *playing*: its source must advance at least
MIN_PLAY_SHARE of the segment's length (a held frame of clip 1 for 16 s carried the title, 1/4 of
the preset and the export size: 46 of 100). export_spec rewards only the render settings, so it
pays in proportion to the four clips present in the export (rule 3).
"""

from __future__ import annotations

import numpy as np

from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.measure.colour import mean_lab
from verifiers.measure.ocr import OCRUnavailable, frame_text, normalise
from verifiers.paramtypes.shortform import ClipsTrimmed, ColorPreset, ShortSide, Title
from verifiers.synth import InstanceWriter
from verifiers.synthkit.shortform_video import burn_text, clip_frames, resize, warm, write_video
from verifiers.tasks.shortform._shared.cases import (
    AT_2997,
    CHEAP_BASELINES,
    CHEAP_EXPORTS,
    register_video_cases,
)
from verifiers.tasks.shortform._shared.clips import ClipMatcher, Labelled, Run, segments, sources_in
from verifiers.tasks.shortform._shared.export import Export, instance_scale, open_export, short_side

TASK = "R06.04.01.04-T10"
N = check_names(TASK)
OUTPUT = "device/Downloads/market.mp4"
FPS = 24.0
SCALE = 1 / 6
MIN_PLAY_SHARE = 0.25  # a segment's clip must advance this share of the segment's length (as T02)


class RushMarket(CheckedTask):
    task_id = TASK

    @provides
    def matcher(self) -> ClipMatcher:
        return ClipMatcher(sources_in(self.ctx.input("fixtures/market")))

    @provides
    def export(self) -> Export:
        self.matcher  # noqa: B018 - bad source clips are reported before the export is looked at
        return open_export(self.ctx, OUTPUT)

    @property
    def fps(self) -> float:
        return self.export.facts["fps"] or FPS

    @provides
    def edit(self) -> tuple[list[Labelled], list[Run]]:
        """Every output frame labelled (160-px frames kept) and the edit's segments: the runs whose
        source clip plays (a frozen run is no segment)."""
        labelled, segs = segments(self.matcher, self.export.path, self.fps)
        return labelled, [r for r in segs if r.label is not None
                          and r.src_end_s - r.src_start_s >= MIN_PLAY_SHARE * (r.end_s - r.start_s)]

    @property
    def segment_count(self) -> int:
        return self.task.check(N.clips_trimmed_ordered).typed.segment_count

    @check(N.clips_trimmed_ordered)
    def clips_trimmed_ordered(self, p: ClipsTrimmed, curve: Curve) -> Result:
        facts, segs = self.export.facts, self.edit[1]
        tol_s = p.tolerance_frames * (1.0 / self.fps)
        per, good = [], 0
        for k in range(p.segment_count):
            want = f"clip{k + 1}"
            seg = segs[k] if k < len(segs) else None
            dur = (seg.end_s - seg.start_s) if seg else None
            # 1e-6: a length of exactly tolerance_frames frames is inside (frame times are float sums)
            ok = bool(seg and seg.label == want and abs(dur - p.segment_s) <= tol_s + 1e-6)
            good += ok
            per.append({"segment": k + 1, "shows": seg.label if seg else None, "duration_s": dur, "ok": ok})
        total_ok = abs(facts["duration_s"] - p.duration_s) <= tol_s + 1e-6 and len(segs) == p.segment_count
        return Result(curve.count(good, p.segment_count) * (1.0 if total_ok else 0.5),
                      {"segments": per, "found": len(segs), "duration_s": facts["duration_s"]},
                      f"{good}/{p.segment_count} segments right; total {facts['duration_s']:.2f} s, {len(segs)} segments")

    @check(N.color_preset)
    def color_preset(self, p: ColorPreset, curve: Curve) -> Result:
        labelled, segs = self.edit
        gains = []  # Warm preset: b* of each segment's frames above the same source frames' b*
        for seg in segs[: self.segment_count]:
            frames = [x for x in labelled if seg.start_s <= x.t_s < seg.end_s and x.label == seg.label][::6]
            if not frames:
                continue
            out_b = np.mean([mean_lab(x.rgb)[2] for x in frames])
            src_b = np.mean([mean_lab(self.matcher.source_frame(x.src_index))[2] for x in frames])
            gains.append(float(out_b - src_b))
        need = p.min_b_gain_lab
        warm_n = sum(g >= need for g in gains)
        return Result(curve.count(warm_n, self.segment_count), {"b_gain_per_segment": gains, "min_b_gain": need},
                      f"{warm_n}/{self.segment_count} clips warmer by ≥ {need:g} b*")

    @check(N.title)
    def title(self, p: Title, curve: Curve) -> Result:
        labelled, segs = self.edit
        first = segs[0] if segs else None
        if first is None or first.label != "clip1":
            return Result.fail("no first clip to carry the title")
        want = normalise(p.text)
        inside = [x for x in labelled if first.start_s <= x.t_s < first.end_s][:: max(1, round(self.fps / 2))]
        # read in time order up to the first frame that shows the title: the verdict is "any frame
        # shows it", and OCR of the later frames was most of T10's scoring (a title shows from the start)
        seen: list[str] = []
        try:
            for x in inside:
                seen.append(normalise(frame_text(x.rgb)))
                if want in seen[-1]:
                    break
        except OCRUnavailable as exc:
            return Result.cannot_judge(str(exc))
        hit = bool(seen) and want in seen[-1]
        return Result(curve.passes(hit), {"ocr": seen}, "" if hit else f"'{p.text}' not read in the first clip")

    @check(N.export_spec)
    def export_spec(self, p: ShortSide, curve: Curve) -> Result:
        score, evidence, message = short_side(self.export.facts, p.height_px, instance_scale(self.ctx), curve)
        present = {r.label for r in self.edit[1]} & {f"clip{k + 1}" for k in range(self.segment_count)}
        share = len(present) / self.segment_count
        return Result(score * share, {**evidence, "clips_playing": sorted(present)},
                      f"{message}; {len(present)}/{self.segment_count} clips play in the export")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        w, h = 320, 180
        src_n, seg_n = int(6 * FPS), int(4 * FPS)
        clips = {f"clip{k}": clip_frames(int(rng.integers(1 << 30)), src_n, w, h, FPS) for k in range(1, 5)}
        for name, frames in clips.items():
            write_video(inst.workdir / "fixtures/market" / f"{name}.mp4", frames, FPS)
        inst.write_json(inst.gt / "render.json", {"scale": SCALE})
        ins = {name: int(rng.integers(0, src_n - seg_n - 8)) for name in clips}

        def render(order=(1, 2, 3, 4), lengths=(seg_n,) * 4, title=True, tint=True, size=(w, h)):
            out = []
            for k, n in zip(order, lengths, strict=True):
                name = f"clip{k}"
                for i, f in enumerate(clips[name][ins[name]: ins[name] + n]):
                    g = warm(f) if tint else f
                    if title and k == order[0] and len(out) < 2 * FPS and i < 2 * FPS:
                        g = burn_text(g, "Night Market", y_px=150, scale=0.8)
                    out.append(resize(g, *size))
            return out

        write_video(inst.oracle / OUTPUT, render(), FPS)
        register_video_cases(inst, OUTPUT, "fixtures/market/clip1.mp4", profiles=CHEAP_EXPORTS + AT_2997, baselines=CHEAP_BASELINES)
        write_video(inst.mutant("clips_swapped", [N.clips_trimmed_ordered], "clips 2 and 3 in the wrong order") / OUTPUT,
                    render(order=(1, 3, 2, 4)), FPS)
        write_video(inst.mutant("untrimmed_clip", [N.clips_trimmed_ordered], "clip 3 left 5 s long") / OUTPUT,
                    render(lengths=(seg_n, seg_n, seg_n + 24, seg_n)), FPS)
        # near misses at the seed's ± 2 frames: clip 3 two frames long (inside: segment and total),
        # three frames long (outside: segment 3 and the total fail)
        write_video(inst.mutant("near_miss_clip_inside", [], "clip 3 two frames long: within ± 2 frames") / OUTPUT,
                    render(lengths=(seg_n, seg_n, seg_n + 2, seg_n)), FPS)
        write_video(inst.mutant("near_miss_clip_outside", [N.clips_trimmed_ordered],
                                "clip 3 three frames long: outside ± 2 frames") / OUTPUT,
                    render(lengths=(seg_n, seg_n, seg_n + 3, seg_n)), FPS)
        write_video(inst.mutant("no_title", [N.title], "title never added") / OUTPUT, render(title=False), FPS)
        write_video(inst.mutant("no_preset", [N.color_preset], "Warm preset not applied") / OUTPUT,
                    render(tint=False), FPS)
        write_video(inst.mutant("exported_720p", [N.export_spec], "exported at 720p") / OUTPUT,
                    render(size=(214, 120)), FPS)
