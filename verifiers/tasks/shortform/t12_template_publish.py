"""R06.04.01.04-T12: publish 'Promo5', a reusable five-slot CapCut template, privately.

Work dir: fixtures/promo_base/ (base.mp4 — the base edit with its music), input/sample_media/
(slot1..5.mp4 and sample_text.txt: the product name and price, one per line).
Outputs: the preview export (the one .mp4 in out/) and state/capcut_templates.json, exported by the
harness from the test account (never by the agent):
  {"templates": [{"name", "visibility": "private"|"public", "media_slots": [{"replaceable": bool}],
   "text_fields": [{"label", "editable": bool}], "music_locked": bool, "transitions_locked": bool}]}
Without that listing, every check that needs it is an error (could not judge), never a pass.
GT: gt/slots.json = {"slots": [{"start_s", "end_s"}]} (where the preview shows each slot).
"""

from __future__ import annotations

import json

import numpy as np

from verifiers.base import AgentOutputError, Checks, ScoreContext, TaskVerifier
from verifiers.measure.audio_io import load_audio
from verifiers.measure.errors import MediaError
from verifiers.measure.ocr import OCRUnavailable, frame_text, normalise
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.synthkit.shortform_video import burn_text, clip_frames, write_video
from verifiers.tasks.shortform._shared.audio_match import best_corr
from verifiers.tasks.shortform._shared.clips import ClipMatcher
from verifiers.tasks.shortform._shared.export import probe_artifact

LISTING = "state/capcut_templates.json"
FPS = 24.0
SR_HZ = 48_000
MIN_MUSIC_CORR = 0.9


def _listing(ctx: ScoreContext, name: str) -> dict | str:
    """The template's entry, or a reason it cannot be judged."""
    path = ctx.workdir / LISTING
    if not path.exists():
        return f"{LISTING} not available: the harness did not export the template list"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        found = [t for t in data["templates"] if t.get("name") == name]
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, AttributeError) as exc:
        return f"{LISTING} unreadable: {exc}"
    return found[0] if found else {}


@register
class TemplatePublish(TaskVerifier):
    task_id = "R06.04.01.04-T12"

    def score(self, ctx: ScoreContext, checks: Checks) -> None:
        name = self.task.params.get("template", "Promo5")
        slots = ctx.gt_json("slots.json")["slots"]
        media = ctx.input("input/sample_media")
        texts = [t.strip() for t in (media / "sample_text.txt").read_text(encoding="utf-8").splitlines() if t.strip()]
        matcher = ClipMatcher({p.stem: p for p in sorted(media.glob("slot*.mp4"))})
        base = ctx.input("fixtures/promo_base/base.mp4")
        entry = _listing(ctx, name)

        # preview facts (judgeable without the listing)
        preview_ok, music_ok, ev = False, False, {}
        out = sorted((ctx.workdir / "out").glob("*.mp4")) if (ctx.workdir / "out").is_dir() else []
        if out:
            try:
                path, _pr = probe_artifact(ctx, str(out[0].relative_to(ctx.workdir)))
                labelled = matcher.label_video(path, keep=True)
                shown = []
                for k, s in enumerate(slots, start=1):
                    mid = [x for x in labelled if s["start_s"] <= x.t_s < s["end_s"]]
                    labs = [x.label for x in mid]
                    shown.append(labs.count(f"slot{k}") >= 0.8 * len(labs) if labs else False)
                read = normalise(" ".join(frame_text(x.rgb) for x in labelled[:: round(FPS)]))
                text_ok = all(normalise(t) in read for t in texts)
                preview_ok = all(shown) and text_ok
                pm = load_audio(path, sample_rate_hz=SR_HZ).mono
                bm = load_audio(base, sample_rate_hz=SR_HZ).mono
                corr = best_corr(pm, bm, 0.0, SR_HZ)
                music_ok = corr >= MIN_MUSIC_CORR
                ev = {"slots_shown": shown, "text_read": text_ok, "music_corr": corr}
            except (AgentOutputError, MediaError) as exc:
                ev = {"preview": str(exc)}
            except OCRUnavailable as exc:
                checks.error("private_preview", str(exc))
        else:
            ev = {"preview": "no .mp4 preview in out/"}

        if isinstance(entry, str):
            for c in ("media_slots", "text_fields", "locked_music_transitions", "private_preview"):
                if c in checks.results:
                    continue
                # a preview that already fails decides the check; otherwise it cannot be judged
                if c == "locked_music_transitions" and not music_ok:
                    checks.fail(c, "preview music differs from the base (and " + entry + ")", ev)
                elif c == "private_preview" and not preview_ok:
                    checks.fail(c, "preview does not show the sample media and text (and " + entry + ")", ev)
                else:
                    checks.error(c, entry, ev)
            return
        if not entry:
            checks.fail_rest(f"no template named {name!r} in the account's list")
            return
        slots_n = sum(bool(s.get("replaceable")) for s in entry.get("media_slots", []))
        want = checks.params("media_slots")["slots"]
        checks.set("media_slots", float(slots_n == want), {"replaceable_slots": slots_n},
                   f"{slots_n} replaceable media slots (want {want})")
        fields = sum(bool(f.get("editable")) for f in entry.get("text_fields", []))
        wantf = checks.params("text_fields")["fields"]
        checks.set("text_fields", float(fields == wantf), {"editable_fields": fields},
                   f"{fields} editable text fields (want {wantf})")
        locked = bool(entry.get("music_locked")) and bool(entry.get("transitions_locked"))
        checks.set("locked_music_transitions", float(locked and music_ok), {**ev, "locked": locked},
                   f"music/transitions locked: {locked}; preview music matches base: {music_ok}")
        if "private_preview" not in checks.results:
            private = entry.get("visibility") == "private"
            checks.set("private_preview", float(private and preview_ok), {**ev, "visibility": entry.get("visibility")},
                       f"visibility {entry.get('visibility')}; preview shows sample media and text: {preview_ok}")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        w, h = 320, 180
        per = int(1.2 * FPS)
        media = {f"slot{k}": clip_frames(int(rng.integers(1 << 30)), per + 12, w, h, FPS) for k in range(1, 6)}
        for k, fr in media.items():
            write_video(inst.workdir / "input/sample_media" / f"{k}.mp4", fr, FPS)
        texts = ["AERO BOTTLE", "PRICE 19"]
        (inst.workdir / "input/sample_media/sample_text.txt").write_text("\n".join(texts) + "\n")
        total_s = 5 * per / FPS
        t = np.arange(int(total_s * SR_HZ)) / SR_HZ
        music = (0.2 * np.sin(2 * np.pi * 330 * t) * (0.5 + 0.5 * np.sin(2 * np.pi * 1.5 * t))
                 + 0.03 * np.random.default_rng(int(rng.integers(1 << 30))).standard_normal(len(t))).astype(np.float32)
        base_frames = [f for k in range(1, 6) for f in clip_frames(int(rng.integers(1 << 30)), per, w, h, FPS)]
        write_video(inst.workdir / "fixtures/promo_base/base.mp4", base_frames, FPS, audio=music, sample_rate_hz=SR_HZ)
        inst.write_json(inst.gt / "slots.json", {"slots": [{"start_s": round(k * per / FPS + 0.1, 3),
                                                            "end_s": round((k + 1) * per / FPS - 0.1, 3)} for k in range(5)]})

        def listing(visibility="private", slots=5, music_locked=True):
            return {"templates": [{"name": "Promo5", "visibility": visibility,
                                   "media_slots": [{"replaceable": i < slots} for i in range(5)],
                                   "text_fields": [{"label": "product name", "editable": True},
                                                   {"label": "price", "editable": True}],
                                   "music_locked": music_locked, "transitions_locked": True}]}

        def solve(folder, order=(1, 2, 3, 4, 5), audio_ok=True, **kw):
            frames = []
            for k in order:
                for f in media[f"slot{k}"][:per]:
                    frames.append(burn_text(f, texts[0] if k % 2 else texts[1], y_px=160, scale=0.6))
            a = music if audio_ok else (0.2 * np.sin(2 * np.pi * 500 * t)).astype(np.float32)
            write_video(folder / "out/promo5_preview.mp4", frames, FPS, audio=a, sample_rate_hz=SR_HZ)
            inst.write_json(folder / LISTING, listing(**kw))

        solve(inst.oracle)
        solve(inst.mutant("four_slots", ["media_slots"], "one slot left fixed"), slots=4)
        solve(inst.mutant("music_unlocked", ["locked_music_transitions"], "music left editable"), music_locked=False)
        solve(inst.mutant("music_replaced", ["locked_music_transitions"], "preview carries other music"),
              audio_ok=False)
        solve(inst.mutant("published_public", ["private_preview"], "template published publicly"), visibility="public")
        solve(inst.mutant("slots_swapped", ["private_preview"], "preview shows slots 2 and 3 swapped"),
              order=(1, 3, 2, 4, 5))
