"""R06.04.01.04-T10: Premiere Rush (Android) — 'Night Market' title, four 4-s clips, Warm preset, 1080p.

Work dir: fixtures/market/clip1..4.mp4. Output: device/Downloads/market.mp4 (pulled from the tablet).
GT: gt/render.json = instance scale (synthetic only). The title is read by OCR (verifiers.measure.ocr).
"""

from __future__ import annotations

import numpy as np

from verifiers.base import Checks, ScoreContext, TaskVerifier
from verifiers.measure.colour import mean_lab
from verifiers.measure.ocr import OCRUnavailable, frame_text, normalise
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.synthkit.shortform_video import burn_text, clip_frames, resize, warm, write_video
from verifiers.tasks.shortform._shared.clips import ClipMatcher, segments, sources_in
from verifiers.tasks.shortform._shared.export import check_short_side, instance_scale, open_output

OUTPUT = "device/Downloads/market.mp4"
FPS = 24.0
SCALE = 1 / 6


@register
class RushMarket(TaskVerifier):
    task_id = "R06.04.01.04-T10"

    def score(self, ctx: ScoreContext, checks: Checks) -> None:
        matcher = ClipMatcher(sources_in(ctx.input("fixtures/market")))
        scale = instance_scale(ctx)
        opened = open_output(ctx, checks, OUTPUT)
        if opened is None:
            return
        path, facts = opened
        check_short_side(checks, "export_spec", facts, scale)

        p = checks.params("clips_trimmed_ordered")
        fps = facts["fps"] or FPS
        frame_s = 1.0 / fps
        tol_s = p["tolerance_frames"] * frame_s
        labelled, segs = segments(matcher, path, fps)
        per = []
        good = 0
        for k in range(p["segments"]):
            want = f"clip{k + 1}"
            seg = segs[k] if k < len(segs) else None
            dur = (seg.end_s - seg.start_s) if seg else None
            ok = bool(seg and seg.label == want and abs(dur - p["segment_s"]) <= tol_s)
            good += ok
            per.append({"segment": k + 1, "shows": seg.label if seg else None, "duration_s": dur, "ok": ok})
        total_ok = abs(facts["duration_s"] - p["duration_s"]) <= tol_s and len(segs) == p["segments"]
        checks.set("clips_trimmed_ordered", good / p["segments"] * (1.0 if total_ok else 0.5),
                   {"segments": per, "found": len(segs), "duration_s": facts["duration_s"]},
                   f"{good}/{p['segments']} segments right; total {facts['duration_s']:.2f} s, {len(segs)} segments")

        # Warm preset: b* of each segment's frames above the same source frames' b*
        gains = []
        for seg in segs[: p["segments"]]:
            frames = [x for x in labelled if seg.start_s <= x.t_s < seg.end_s and x.label == seg.label][::6]
            if not frames:
                continue
            out_b = np.mean([mean_lab(x.rgb)[2] for x in frames])
            src_b = np.mean([mean_lab(matcher.source_frame(x.src_index))[2] for x in frames])
            gains.append(float(out_b - src_b))
        need = checks.params("color_preset")["min_b_gain"]
        warm_share = sum(g >= need for g in gains) / p["segments"]
        checks.set("color_preset", warm_share, {"b_gain_per_segment": gains, "min_b_gain": need},
                   f"{sum(g >= need for g in gains)}/{p['segments']} clips warmer by ≥ {need} b*")

        title = checks.params("title")["text"]
        first = segs[0] if segs else None
        if first is None or first.label != "clip1":
            checks.fail("title", "no first clip to carry the title")
            return
        try:
            inside = [x for x in labelled if first.start_s <= x.t_s < first.end_s][:: max(1, round(fps / 2))]
            seen = [normalise(frame_text(x.rgb)) for x in inside]
        except OCRUnavailable as exc:
            checks.error("title", str(exc))
            return
        hit = any(normalise(title) in s for s in seen)
        checks.set("title", float(hit), {"ocr": seen}, "" if hit else f"'{title}' not read in the first clip")

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
        write_video(inst.mutant("clips_swapped", ["clips_trimmed_ordered"], "clips 2 and 3 in the wrong order") / OUTPUT,
                    render(order=(1, 3, 2, 4)), FPS)
        write_video(inst.mutant("untrimmed_clip", ["clips_trimmed_ordered"], "clip 3 left 5 s long") / OUTPUT,
                    render(lengths=(seg_n, seg_n, seg_n + 24, seg_n)), FPS)
        write_video(inst.mutant("no_title", ["title"], "title never added") / OUTPUT, render(title=False), FPS)
        write_video(inst.mutant("no_preset", ["color_preset"], "Warm preset not applied") / OUTPUT,
                    render(tint=False), FPS)
        write_video(inst.mutant("exported_720p", ["export_spec"], "exported at 720p") / OUTPUT,
                    render(size=(214, 120)), FPS)
