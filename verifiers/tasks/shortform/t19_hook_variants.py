"""R06.04.01.04-T19: five hook variants of one ad (3-s hook + the same 12-s body) for A/B tests.

Work dir: fixtures/ad_body/body.mp4 and hook clips fixtures/ad_body/<clip>.mp4, input/hooks.csv
(hook, clip, text). Outputs: out/ad_hook1..5.mp4. GT: gt/render.json = instance scale (synthetic only).

Issue 21. Rule 2: a hook is its clip *playing* (`clips.playing_share` over the hook's samples: the
listed clip, its moment advancing with the output's), not the clip's first frame held with the
text on it. Rule 3: export_spec_naming rewards render settings any file has, so a file counts only
when it carries the ad (its hook clip plays or its body matches). Measured (seed 0): black files 20 → 0, each oracle's
first frame held 70 → 0.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from verifiers.base import AgentOutputError, GTError
from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.measure.errors import MediaError
from verifiers.measure.fingerprint import hamming, phash
from verifiers.measure.frames import iter_frames
from verifiers.measure.ocr import OCRUnavailable, frame_text, normalise
from verifiers.paramtypes.shortform import BodyIdentical, ExportSpecNaming, Hook
from verifiers.synth import InstanceWriter
from verifiers.synthkit.shortform_video import burn_text, clip_frames, resize, write_video
from verifiers.tasks.shortform._shared.cases import CHEAP_BASELINES, ONE_EXPORT, register_video_cases
from verifiers.tasks.shortform._shared.clips import ClipMatcher, Labelled, playing_share
from verifiers.tasks.shortform._shared.export import instance_scale, probe_artifact, size_ok, video_facts

TASK = "R06.04.01.04-T19"
N = check_names(TASK)
FPS = 30.0
SCALE = 1 / 6  # 180x320 miniature of 1080x1920
MIN_HOOK_SHARE = 0.8  # share of the hook's samples that must show its clip (playing)
MAX_HASH_BITS = 6  # perceptual-hash distance still called "the same frame" after re-encoding
SAMPLE_S = 0.5


def read_hooks(text: str) -> dict[int, dict[str, str]]:
    try:
        return {int(r["hook"]): {"clip": r["clip"].strip(), "text": r["text"].strip()}
                for r in csv.DictReader(io.StringIO(text))}
    except (KeyError, ValueError, AttributeError) as exc:
        raise GTError(f"input/hooks.csv: needs hook,clip,text columns ({exc})") from None


def _sampled(path, every_s: float) -> list:
    return list(iter_frames(path, every_s=every_s, width=180))


@dataclass(frozen=True)
class Variant:
    """One out/ad_hook<k>.mp4: unusable (error), or its facts, spec, body match and hook frames."""

    rel: str
    error: str | None = None
    evidence: dict = field(default_factory=dict)
    spec_ok: bool = False
    body_ok: bool = False
    head: list = field(default_factory=list)  # frames of the first hook_s seconds
    clip_ok: bool = False


def judge_variant(path: Path, pr, rel: str, spec: ExportSpecNaming, hook_s: float, body_s: float,
                  body_ref: list, matcher: ClipMatcher, want_clip: str | None, scale: float) -> Variant:
    frames = _sampled(path, SAMPLE_S)
    facts = video_facts(pr)
    ok_spec = (size_ok(facts, list(spec.size_px), scale) and abs(facts["fps"] - spec.fps) < 0.01
               and abs(facts["duration_s"] - spec.duration_s) <= 1.5 / spec.fps)
    # body: frames after the hook equal the body fixture frame at t - hook_s
    body = [f for f in frames if f.t_s >= hook_s + 0.1]
    same = 0
    for f in body:
        ref = min(body_ref, key=lambda r, t=f.t_s - hook_s: abs(r[0] - t))
        same += hamming(phash(f.rgb), ref[1]) <= MAX_HASH_BITS
    body_match = len(body) > 0 and same >= 0.95 * len(body) and facts["duration_s"] >= hook_s + body_s - 0.5
    # hook: the listed clip in the first hook_s seconds
    head = [f for f in frames if f.t_s < hook_s - 0.1]
    ids = [(f.t_s, matcher.identify(f.rgb)) for f in head]
    shown = [label for _t, (label, _src, _ncc, _i) in ids]
    # the listed clip, playing: a sample of another clip (or none) never plays (rule 2)
    plays = playing_share([Labelled(t, label if label == want_clip else None, src, ncc)
                           for t, (label, src, ncc, _i) in ids])
    clip_ok = bool(shown) and plays >= MIN_HOOK_SHARE
    ev = {**facts, "hook_clips": shown, "hook_playing_share": plays, "body_same_frames": f"{same}/{len(body)}"}
    return Variant(rel, None, ev, bool(ok_spec), bool(body_match), head, clip_ok)


class HookVariants(CheckedTask):
    task_id = TASK

    @provides
    def hooks(self) -> dict[int, dict[str, str]]:
        return read_hooks(self.ctx.input("input/hooks.csv").read_text(encoding="utf-8"))

    @provides
    def variants(self) -> dict[int, Variant]:
        ctx = self.ctx
        hooks = self.hooks
        sources = {p.stem: p for p in sorted(ctx.input("fixtures/ad_body").glob("*.mp4"))}
        if "body" not in sources:
            raise GTError("fixtures/ad_body/body.mp4 missing")
        matcher = ClipMatcher(sources)
        scale = instance_scale(ctx)
        spec = self.task.check(N.export_spec_naming).typed
        hook_s = self.task.check(N.hook_1).typed.hook_s
        body_s = self.task.check(N.body_identical).typed.body_s
        body_ref = [(f.t_s, phash(f.rgb)) for f in _sampled(sources["body"], SAMPLE_S)]
        out = {}
        for k in range(1, spec.file_count + 1):
            rel = f"out/ad_hook{k}.mp4"
            try:
                path, pr = probe_artifact(ctx, rel)
                out[k] = judge_variant(path, pr, rel, spec, hook_s, body_s, body_ref, matcher,
                                       hooks.get(k, {}).get("clip"), scale)
            except (AgentOutputError, MediaError) as exc:  # this file is unusable
                out[k] = Variant(rel, str(exc), {"error": str(exc)})
        return out

    def _hook(self, k: int, curve: Curve) -> Result:
        v = self.variants[k]
        if v.error is not None:
            return Result.fail(v.error)
        want = self.hooks.get(k, {})
        if not v.clip_ok:
            return Result.fail(f"hook shows {v.evidence['hook_clips']}, want {want.get('clip')} playing "
                               f"(plays on {v.evidence.get('hook_playing_share', 0):.0%} of samples)", v.evidence)
        try:
            texts = [normalise(frame_text(v.head[len(v.head) // 2].rgb))]
        except OCRUnavailable as exc:
            return Result.cannot_judge(str(exc), v.evidence)
        text_ok = any(normalise(want["text"]) in t for t in texts)
        return Result(curve.passes(text_ok), {**v.evidence, "ocr": texts},
                      "" if text_ok else f"hook text {want['text']!r} not read")

    @check(N.hook_1)
    def hook_1(self, p: Hook, curve: Curve) -> Result:
        return self._hook(1, curve)

    @check(N.hook_2)
    def hook_2(self, p: Hook, curve: Curve) -> Result:
        return self._hook(2, curve)

    @check(N.hook_3)
    def hook_3(self, p: Hook, curve: Curve) -> Result:
        return self._hook(3, curve)

    @check(N.hook_4)
    def hook_4(self, p: Hook, curve: Curve) -> Result:
        return self._hook(4, curve)

    @check(N.hook_5)
    def hook_5(self, p: Hook, curve: Curve) -> Result:
        return self._hook(5, curve)

    def _files(self) -> dict[str, dict]:
        return {v.rel: v.evidence for v in self.variants.values()}

    @check(N.body_identical)
    def body_identical(self, p: BodyIdentical, curve: Curve) -> Result:
        n = len(self.variants)
        ok = sum(v.body_ok for v in self.variants.values())
        return Result(curve.count(ok, n), {"files": self._files()}, f"{ok}/{n} bodies match")

    @check(N.export_spec_naming)
    def export_spec_naming(self, p: ExportSpecNaming, curve: Curve) -> Result:
        # rule 3: the render settings count on a file that carries the ad (hook clip playing or body)
        ok = sum(v.spec_ok and (v.clip_ok or v.body_ok) for v in self.variants.values())
        spec_only = sum(v.spec_ok and not (v.clip_ok or v.body_ok) for v in self.variants.values())
        return Result(curve.count(ok, p.file_count), {"files": self._files(), "to_spec_without_the_ad": spec_only},
                      f"{ok}/{p.file_count} files named and exported to spec"
                      + (f"; {spec_only} more to spec but carrying neither hook nor body" if spec_only else ""))

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        w, h = 180, 320
        body = clip_frames(int(rng.integers(1 << 30)), int(12 * FPS), w, h, FPS)
        write_video(inst.workdir / "fixtures/ad_body/body.mp4", body, FPS)
        texts = ["STOP SCROLLING", "WAIT FOR IT", "BIG NEWS", "TRY THIS", "ONLY TODAY"]
        hook_clips = {}
        for k in range(1, 6):
            hook_clips[f"hookclip{k}"] = clip_frames(int(rng.integers(1 << 30)), int(3 * FPS), w, h, FPS)
            write_video(inst.workdir / f"fixtures/ad_body/hookclip{k}.mp4", hook_clips[f"hookclip{k}"], FPS)
        order = rng.permutation(5) + 1
        rows = [{"hook": k, "clip": f"hookclip{order[k - 1]}", "text": texts[k - 1]} for k in range(1, 6)]
        buf = io.StringIO()
        wr = csv.DictWriter(buf, ["hook", "clip", "text"], lineterminator="\n")
        wr.writeheader()
        wr.writerows(rows)
        (inst.workdir / "input").mkdir(parents=True, exist_ok=True)
        (inst.workdir / "input/hooks.csv").write_text(buf.getvalue())
        inst.write_json(inst.gt / "render.json", {"scale": SCALE})

        def render(row, body_shift=0, size=(w, h)):
            head = [burn_text(f, row["text"], y_px=260, scale=0.5, thickness=1) for f in hook_clips[row["clip"]]]
            tail = body[body_shift:] + body[:body_shift]
            return [resize(f, *size) for f in head + tail]

        def write_all(folder, change=None):
            for row in rows:
                k = row["hook"]
                args = change(k, dict(row)) if change else (row, {})
                write_video(folder / f"out/ad_hook{k}.mp4", render(args[0], **args[1]), FPS)

        write_all(inst.oracle)
        register_video_cases(inst, tuple(f"out/ad_hook{k}.mp4" for k in range(1, 6)), "fixtures/ad_body/body.mp4",
                             profiles=ONE_EXPORT, baselines=CHEAP_BASELINES)
        other = rows[3]["clip"]
        write_all(inst.mutant("hook3_wrong_clip", [N.hook_3], "hook 3 uses hook 4's clip"),
                  lambda k, r: ({**r, "clip": other} if k == 3 else r, {}))
        write_all(inst.mutant("hook2_typo", [N.hook_2], "hook 2 text misspelt"),
                  lambda k, r: ({**r, "text": "WAIT FRO IT"} if k == 2 else r, {}))
        write_all(inst.mutant("body5_shifted", [N.body_identical], "file 5's body starts 1 s late"),
                  lambda k, r: (r, {"body_shift": int(FPS)} if k == 5 else {}))
        write_all(inst.mutant("file4_square", [N.export_spec_naming], "file 4 exported 1:1"),
                  lambda k, r: (r, {"size": (180, 180)} if k == 4 else {}))
