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
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from verifiers.base import AgentOutputError, ScoreContext
from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.audio_io import load_audio
from verifiers.measure.errors import MediaError
from verifiers.measure.ocr import OCRUnavailable, frame_text, normalise
from verifiers.params import NoParams
from verifiers.paramtypes.shortform import MediaSlots, TextFields
from verifiers.synth import InstanceWriter
from verifiers.synthkit.shortform_video import burn_text, clip_frames, write_video
from verifiers.tasks.shortform._shared.audio_match import best_corr
from verifiers.tasks.shortform._shared.cases import AT_2997, CHEAP_BASELINES, ONE_EXPORT, register_video_cases
from verifiers.tasks.shortform._shared.clips import ClipMatcher
from verifiers.tasks.shortform._shared.export import probe_artifact
from verifiers.tasks.shortform._shared.slots import TimeSlot, slots_ordered

TASK = "R06.04.01.04-T12"
N = check_names(TASK)


class PreviewSlots(GTFile, file="slots.json", task=TASK):
    """gt/slots.json: where the template's preview shows each slot."""

    slots: list[TimeSlot] = gt_field(doc="the slots in order")

    def validate(self) -> None:
        self.expect(slots_ordered(self.slots), "slots", "must be non-empty, starting in order, each ending after it starts")
LISTING = "state/capcut_templates.json"
FPS = 24.0
SR_HZ = 48_000
MIN_MUSIC_CORR = 0.9
# rule 2: the preview's music is judged on a preview of the template filled with the sample media:
# at least this share of its frames shows one of the sample clips (any slot). The oracle shows them
# on ~100 % (its slot edges included), the base edit handed back as the preview on 0 %
MIN_SAMPLE_SHARE = 0.5


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


@dataclass(frozen=True)
class Preview:
    """What the preview export shows (judgeable without the listing)."""

    ok: bool  # every slot shows its sample clip and the sample text is read
    music_ok: bool  # it shows the sample media (content identity) and its music is the base edit's
    evidence: dict
    ocr_error: str | None = None


def judge_preview(path: Path, slots: list[TimeSlot], texts: list[str], matcher: ClipMatcher, base: Path) -> Preview:
    labelled = matcher.label_video(path, keep=True)
    shown = []
    for k, s in enumerate(slots, start=1):
        mid = [x for x in labelled if s.start_s <= x.t_s < s.end_s]
        labs = [x.label for x in mid]
        shown.append(labs.count(f"slot{k}") >= 0.8 * len(labs) if labs else False)
    try:
        read = normalise(" ".join(frame_text(x.rgb) for x in labelled[:: round(FPS)]))
    except OCRUnavailable as exc:
        return Preview(False, False, {}, str(exc))
    text_ok = all(normalise(t) in read for t in texts)
    samples = sum(x.label is not None for x in labelled) / len(labelled) if labelled else 0.0
    pm = load_audio(path, sample_rate_hz=SR_HZ).mono
    bm = load_audio(base, sample_rate_hz=SR_HZ).mono
    corr = best_corr(pm, bm, 0.0, SR_HZ)
    return Preview(all(shown) and text_ok, samples >= MIN_SAMPLE_SHARE and corr >= MIN_MUSIC_CORR,
                   {"slots_shown": shown, "text_read": text_ok, "music_corr": corr, "sample_media_share": samples})


class TemplatePublish(CheckedTask):
    task_id = TASK

    @provides
    def name(self) -> str:
        return self.task.params.get("template", "Promo5")

    @provides
    def entry(self) -> dict | str:
        """The template's listing entry ({} when absent), or why it cannot be judged."""
        return _listing(self.ctx, self.name)

    @provides
    def preview(self) -> Preview:
        ctx = self.ctx
        slots = ctx.gt_typed(PreviewSlots).slots
        media = ctx.input("input/sample_media")
        texts = [t.strip() for t in (media / "sample_text.txt").read_text(encoding="utf-8").splitlines() if t.strip()]
        matcher = ClipMatcher({p.stem: p for p in sorted(media.glob("slot*.mp4"))})
        base = ctx.input("fixtures/promo_base/base.mp4")
        out = sorted((ctx.workdir / "out").glob("*.mp4")) if (ctx.workdir / "out").is_dir() else []
        if not out:
            return Preview(False, False, {"preview": "no .mp4 preview in out/"})
        try:
            path, _pr = probe_artifact(ctx, str(out[0].relative_to(ctx.workdir)))
            return judge_preview(path, slots, texts, matcher, base)
        except (AgentOutputError, MediaError) as exc:
            return Preview(False, False, {"preview": str(exc)})

    def _listed(self, preview_fails: str | None = None) -> dict | Result:
        """The entry, or the result when there is none: a preview that already fails decides the
        check (`preview_fails` says how), otherwise it cannot be judged."""
        entry, ev = self.entry, self.preview.evidence
        if isinstance(entry, str):
            if preview_fails is not None:
                return Result.fail(f"{preview_fails} (and {entry})", ev)
            return Result.cannot_judge(entry, ev)
        if not entry:
            return Result.fail(f"no template named {self.name!r} in the account's list")
        return entry

    def _flagged_count(self, curve: Curve, items: str, flag: str, want: int, key: str, what: str) -> Result:
        """A count on the listed template: how many of its `items` carry `flag`, which must be `want`
        (evidence `key`; the message says "<n> <what> (want <want>)")."""
        entry = self._listed()
        if isinstance(entry, Result):
            return entry
        n = sum(bool(x.get(flag)) for x in entry.get(items, []))
        return Result(curve.passes(n == want), {key: n}, f"{n} {what} (want {want})")

    @check(N.media_slots)
    def media_slots(self, p: MediaSlots, curve: Curve) -> Result:
        return self._flagged_count(curve, "media_slots", "replaceable", p.slot_count, "replaceable_slots",
                                   "replaceable media slots")

    @check(N.text_fields)
    def text_fields(self, p: TextFields, curve: Curve) -> Result:
        return self._flagged_count(curve, "text_fields", "editable", p.field_count, "editable_fields",
                                   "editable text fields")

    @check(N.locked_music_transitions)
    def locked_music_transitions(self, p: NoParams, curve: Curve) -> Result:
        pv = self.preview
        entry = self._listed(None if pv.music_ok else "preview music differs from the base, or the preview "
                                                      "does not show the sample media (not the template's preview)")
        if isinstance(entry, Result):
            return entry
        locked = bool(entry.get("music_locked")) and bool(entry.get("transitions_locked"))
        return Result(curve.passes(locked and pv.music_ok), {**pv.evidence, "locked": locked},
                      f"music/transitions locked: {locked}; preview music matches base: {pv.music_ok}")

    @check(N.private_preview)
    def private_preview(self, p: NoParams, curve: Curve) -> Result:
        pv = self.preview
        if pv.ocr_error is not None:
            return Result.cannot_judge(pv.ocr_error)
        entry = self._listed(None if pv.ok else "preview does not show the sample media and text")
        if isinstance(entry, Result):
            return entry
        private = entry.get("visibility") == "private"
        return Result(curve.passes(private and pv.ok), {**pv.evidence, "visibility": entry.get("visibility")},
                      f"visibility {entry.get('visibility')}; preview shows sample media and text: {pv.ok}")

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
        # baselines without a listing: nothing was published (the listing checks fail or cannot judge)
        register_video_cases(inst, "out/promo5_preview.mp4", "fixtures/promo_base/base.mp4", profiles=ONE_EXPORT + AT_2997,
                             baselines=CHEAP_BASELINES)
        # a bad preview: the template published right (the oracle's listing) with the base edit handed
        # back as its preview (not the template filled with the sample media)
        inst.baseline_case("base_as_preview", [("out/promo5_preview.mp4", "copy:workdir/fixtures/promo_base/base.mp4"),
                                               (LISTING, f"copy:oracle/{LISTING}")], max_score=50.0,
                           why="the listing is the app's own state: 5 slots (30) and 2 text fields (20) are "
                               "the seed's shares for the template itself; the preview shares need the preview")
        solve(inst.mutant("four_slots", [N.media_slots], "one slot left fixed"), slots=4)
        solve(inst.mutant("music_unlocked", [N.locked_music_transitions], "music left editable"), music_locked=False)
        solve(inst.mutant("music_replaced", [N.locked_music_transitions], "preview carries other music"),
              audio_ok=False)
        solve(inst.mutant("published_public", [N.private_preview], "template published publicly"), visibility="public")
        solve(inst.mutant("slots_swapped", [N.private_preview], "preview shows slots 2 and 3 swapped"),
              order=(1, 3, 2, 4, 5))
