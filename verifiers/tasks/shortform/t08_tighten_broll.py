"""R06.04.01.04-T08: tighten a talking head (no pause > 0.4 s) and overlay four B-roll clips, full
frame, for 2 s from the moment each keyword is spoken.

Work dir: fixtures/coach_raw.mp4 (talking head with speech), fixtures/broll/<name>.mp4,
input/keywords.csv (keyword, broll = clip file name in fixtures/broll/, in B-roll order).
Output: out/coach_tight.mp4.
GT: gt/words.json = {"words": [{"word", "start_s", "end_s"}] in spoken order (source time),
"silences": [[start_s, end_s]] = the source's pauses longer than 0.4 s}.

How it measures (no ASR model can ship here, so "word recall" is measured on the audio itself):
- no_words_lost: each GT word's source audio span is searched for in the export's audio, in order,
  by NCC (verifiers.measure.identify.match_at); a word counts as kept when NCC ≥ 0.8. Recall =
  kept / words. The same matches give each keyword's onset in the *tightened* timeline.
- silences_removed: Silero VAD (verifiers.measure.vad) on the export; every gap between speech
  segments longer than max_pause_s is a pause left. Score = 1 − pauses left / source long pauses,
  and 0 when the export holds less than 80 % of the source's speech (a silent export has no pauses).
- broll_k: every export frame is fingerprinted against the talking head and the B-roll clips
  (ClipMatcher); the B-roll's run must start within ±tolerance_frames of its keyword's onset in the
  export and last duration_s ± duration_tolerance_s. A picture-in-picture overlay shows mostly the
  talking head, so its frames are not identified as the B-roll (full frame is required).
- export: decodable video with an audio stream; an export the audit saw written by ffmpeg/ffprobe
  is not CapCut's and fails every check (the seed: ffmpeg-only renders fail).

Issue 21. Content identity (rule 2): the talk's sound over a held or black picture is not the
talk tightened, so silences_removed is multiplied by the share of export frames that play a given
source (`clips.playing_share`: runs of the talking head or a B-roll whose moment advances).
Leave-alone shares (rule 3): keeping every word and a clean export are what the raw talk handed
back already has, so no_words_lost and export pay in proportion to the primary change present =
the share of the source's long pauses removed, on a playing picture (silences_removed's measure).
Measured (seed 0): black + silence 10 → 0, the oracle's first frame held with its sound 45 → 0,
the raw talk handed back 25 → 0; the pause_left mutant (2 of 3 pauses cut) now also keeps 2/3 of
no_words_lost and export.
"""

from __future__ import annotations

import csv
import io
import itertools
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from verifiers.base import AgentOutputError, GTError
from verifiers.checks import CheckedTask, Result, check, check_names, provides, unit_checks
from verifiers.curves import Curve
from verifiers.evidence import AuditWrite
from verifiers.evidence.base import Payload
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.audio_io import load_audio
from verifiers.measure.errors import MediaError
from verifiers.measure.identify import match_at
from verifiers.measure.vad import speech_segments
from verifiers.params import NoParams
from verifiers.paramtypes.shortform import Broll, NoWordsLost, SilencesRemoved
from verifiers.provenance import outside_writes, writer_name
from verifiers.synth import InstanceWriter
from verifiers.synthkit.shortform_video import clip_frames, resize, write_video
from verifiers.synthkit.t08_speech import word as speech_word
from verifiers.tasks.shortform._shared.cases import (
    AT_2997,
    CHEAP_BASELINES,
    CHEAP_EXPORTS,
    register_video_cases,
)
from verifiers.tasks.shortform._shared.clips import ClipMatcher, Labelled, clean_runs, playing_share, runs
from verifiers.tasks.shortform._shared.export import Export, probe_artifact, video_facts

TASK = "R06.04.01.04-T08"
N = check_names(TASK)
OUTPUT = "out/coach_tight.mp4"
SOURCE = "fixtures/coach_raw.mp4"
BROLL_DIR = "fixtures/broll"
FPS = 25.0
SR_HZ = 16_000  # synthetic audio rate: AAC encoding dominates synth time, and 16 kHz is what VAD uses
MATCH_SR_HZ = 16_000
MIN_WORD_NCC = 0.8  # a kept word scores 0.95+ after the AAC round trip; a cut one < 0.5
MIN_SPEECH_FRACTION = 0.8


def read_keywords(text: str) -> list[tuple[str, str]]:
    """[(keyword, broll clip stem)] in file order."""
    try:
        rows = [(r["keyword"].strip(), r["broll"].strip().removesuffix(".mp4"))
                for r in csv.DictReader(io.StringIO(text))]
    except (KeyError, AttributeError) as exc:
        raise GTError(f"input/keywords.csv: needs keyword,broll columns ({exc})") from None
    if not rows:
        raise GTError("input/keywords.csv lists no keywords")
    return rows


@dataclass(frozen=True)
class SpokenWord(Payload):
    """One spoken word and when the source says it."""

    word: str = gt_field(doc="the word")
    start_s: float = gt_field(doc="its start in source time")
    end_s: float = gt_field(doc="its end in source time")


class WordsFile(GTFile, file="words.json", task=TASK):
    """gt/words.json: the talk's words in spoken order and its silences (source time)."""

    words: list[SpokenWord] = gt_field(doc="every word, in spoken order")
    silences_s: list[list[float]] = gt_field("silences", "[start, end] of each silence")

    def validate(self) -> None:
        self.expect(bool(self.words) and all(w.start_s < w.end_s for w in self.words), "words",
                    "must be non-empty, each ending after it starts")
        self.expect(all(len(s) == 2 for s in self.silences_s), "silences_s", "every silence is [start, end]")


def read_words(gt: WordsFile) -> tuple[list[dict], list[list[float]]]:
    return [w.to_payload() for w in gt.words], gt.silences_s


def find_words(export: np.ndarray, source: np.ndarray, sr: int, words: list[dict],
               min_ncc: float = MIN_WORD_NCC) -> list[dict]:
    """Each GT word's source audio searched for in the export after the previous word found.

    Returns per word {word, ncc, at_s (export time of its start, None when not found)}.
    """
    out = []
    cursor_s = 0.0
    end_s = len(export) / sr
    for w in words:
        tmpl = source[round(w["start_s"] * sr): round(w["end_s"] * sr)]
        dur_s = len(tmpl) / sr
        span_s = end_s - cursor_s - dur_s
        if span_s <= 0 or len(tmpl) == 0:
            out.append({"word": w["word"], "ncc": 0.0, "at_s": None})
            continue
        m = match_at(export, sr, {w["word"]: tmpl}, cursor_s + span_s / 2, search_s=span_s / 2,
                     length_s=dur_s)[0]
        found = m.ncc >= min_ncc
        out.append({"word": w["word"], "ncc": m.ncc, "at_s": m.offset_s if found else None})
        if found:
            cursor_s = m.offset_s + dur_s / 2
    return out


def long_pauses(segments: list, max_pause_s: float) -> list[list[float]]:
    """[start, end] of gaps between consecutive speech segments longer than max_pause_s."""
    return [[a.end_s, b.start_s] for a, b in itertools.pairwise(segments)
            if b.start_s - a.end_s > max_pause_s]


def _mkparent(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@dataclass(frozen=True)
class Script:
    """The task's inputs: keywords (with their B-roll), GT words and long silences, source audio."""

    keywords: list[tuple[str, str]]
    words: list[dict]
    silences: list[list[float]]
    by_word: dict[str, int]  # a keyword spoken twice: its first occurrence
    broll_paths: dict[str, Path]
    source: np.ndarray  # source audio at MATCH_SR_HZ


@dataclass(frozen=True)
class Pauses:
    """What silences_removed measures, and the primary change the leave-alone shares pay with."""

    left_s: list[list[float]]  # long pauses left in the export
    source_pauses: int
    speech_s: float
    words_s: float  # the source's word time
    enough: bool  # the export holds ≥ MIN_SPEECH_FRACTION of the source's word time as speech
    plays: float  # share of export frames playing a given source in step
    primary: float  # share of the source's long pauses removed × plays


class TightenBroll(CheckedTask):
    task_id = TASK

    @provides
    def script(self) -> Script:
        ctx = self.ctx
        keywords = read_keywords(ctx.input("input/keywords.csv").read_text(encoding="utf-8"))
        words, silences = read_words(ctx.gt_typed(WordsFile))
        by_word: dict[str, int] = {}
        for i, w in enumerate(words):
            by_word.setdefault(w["word"], i)
        missing = [k for k, _ in keywords if k not in by_word]
        if missing:
            raise GTError(f"gt/words.json has no timing for keyword(s) {missing}")
        broll_paths = {stem: ctx.input(f"{BROLL_DIR}/{stem}.mp4") for _, stem in keywords}
        try:
            source = load_audio(ctx.input(SOURCE), sample_rate_hz=MATCH_SR_HZ).mono
        except MediaError as exc:
            raise GTError(f"{SOURCE}: {exc}") from None
        return Script(keywords, words, silences, by_word, broll_paths, source)

    @provides
    def export(self) -> Export:
        """The export, refused when the audit saw a forbidden program write it (not CapCut's)."""
        self.script  # noqa: B018 - bad inputs are reported before the export is looked at
        path, pr = probe_artifact(self.ctx, OUTPUT)
        bad = outside_writes(self.ctx, OUTPUT, self.ctx.task.forbidden_writers)
        if bad:
            raise AgentOutputError(f"{OUTPUT} was written by {writer_name(bad[-1])}, not exported by CapCut (audit)")
        return Export(path, video_facts(pr))

    @provides
    def audio(self) -> np.ndarray:
        try:
            return load_audio(self.export.path, sample_rate_hz=MATCH_SR_HZ).mono
        except MediaError as exc:
            raise AgentOutputError(f"{OUTPUT}: no usable audio ({exc})") from None

    @provides
    def labelled(self) -> list[Labelled]:
        self.audio  # noqa: B018 - without usable audio no check is judged
        matcher = ClipMatcher({"head": self.ctx.input(SOURCE), **self.script.broll_paths})
        return matcher.label_video(self.export.path)

    @provides
    def found(self) -> list[dict]:
        """Each GT word, in order, located in the export by its audio."""
        return find_words(self.audio, self.script.source, MATCH_SR_HZ, self.script.words)

    @provides
    def pauses(self) -> Pauses:
        """The export's speech (VAD), the long pauses left in it, and the share of frames playing."""
        p = self.task.check(N.silences_removed).typed
        words, silences = self.script.words, self.script.silences
        segs = speech_segments(self.audio, MATCH_SR_HZ)
        speech_s = sum(s.duration_s for s in segs)
        words_s = sum(w["end_s"] - w["start_s"] for w in words)
        left = long_pauses(segs, p.max_pause_s)
        enough = speech_s >= MIN_SPEECH_FRACTION * words_s
        removed = max(0.0, 1 - len(left) / max(1, len(silences))) if enough else 0.0
        plays = playing_share(self.labelled)
        return Pauses(left, len(silences), speech_s, words_s, enough, plays, removed * plays)

    def _with_primary(self, result: Result) -> Result:
        """Rule 3: a leave-alone share scaled by the primary change present (pauses cut, picture playing)."""
        pz = self.pauses
        why = f"; paid x{pz.primary:.2f}: pauses removed on a playing picture" if pz.primary < 1 else ""
        return Result(result.score * pz.primary, {**result.evidence, "primary_change": pz.primary,
                                                  "playing_share": pz.plays}, result.message + why)

    @property
    def fps(self) -> float:
        return self.export.facts["fps"] or FPS

    @check(N.export)
    def export_ok(self, p: NoParams, curve: Curve) -> Result:
        facts = self.export.facts
        try:
            self.audio  # noqa: B018
        except AgentOutputError as exc:
            return Result.fail(f"video decodes but the audio does not: {exc}", facts)
        n_frames = len(self.labelled)
        ok_export = n_frames > 0 and abs(n_frames / self.fps - facts["duration_s"]) < 0.5
        return self._with_primary(Result(curve.passes(ok_export), {**facts, "decoded_frames": n_frames, "audio": True,
                                                "audit_writers": "none forbidden" if self.ctx.events else "no audit"},
                      f"{facts['width_px']}x{facts['height_px']} {facts['fps']} fps, {n_frames} frames decoded, audio present"))

    @check(N.no_words_lost)
    def no_words_lost(self, p: NoWordsLost, curve: Curve) -> Result:
        self.labelled  # noqa: B018 - judged only on an export whose frames decode
        found, words = self.found, self.script.words
        kept = sum(f["at_s"] is not None for f in found)
        recall = kept / len(words)
        need = p.min_word_recall_ratio
        lost = [f["word"] for f in found if f["at_s"] is None]
        return self._with_primary(Result(
            curve.passes(recall >= need),
            {"word_recall": recall, "lost": lost, "method": "NCC of each GT word's source audio, in order",
             "ncc": {f["word"]: f["ncc"] for f in found}},
            f"{kept}/{len(words)} words found in the export (recall {recall:.3f}, need {need})"))

    @check(N.silences_removed)
    def silences_removed(self, p: SilencesRemoved, curve: Curve) -> Result:
        pz = self.pauses
        score = max(0.0, 1 - curve.count(len(pz.left_s), max(1, pz.source_pauses))) if pz.enough else 0.0
        return Result(score * pz.plays, {"pauses_left_s": pz.left_s, "source_long_pauses": pz.source_pauses,
                                         "speech_s": pz.speech_s, "source_words_s": pz.words_s,
                                         "playing_share": pz.plays},
                      f"{len(pz.left_s)} pause(s) > {p.max_pause_s} s left of {pz.source_pauses} in the source"
                      + ("" if pz.enough else f"; only {pz.speech_s:.1f} s of speech (source words: {pz.words_s:.1f} s)")
                      + ("" if pz.plays >= 1 else f"; the picture plays the talk or a B-roll on {pz.plays:.0%} of frames"))

    def _broll(self, k: int, p: Broll, curve: Curve) -> Result:
        fps = self.fps
        rs = clean_runs(runs(self.labelled, 1 / fps))
        kw, stem = self.script.keywords[k - 1]
        at = self.found[self.script.by_word[kw]]["at_s"]
        mine = [r for r in rs if r.label == stem]
        if at is None:
            return Result.fail(f"keyword {kw!r} is not in the export, so {stem} has no onset to land on")
        if not mine:
            return Result.fail(f"{stem} never fills the frame (missing or picture-in-picture)", {"keyword_onset_s": at})
        r = max(mine, key=lambda r: r.frames)
        off_frames = (r.start_s - at) * fps
        dur = r.end_s - r.start_s
        ok = abs(off_frames) <= p.tolerance_frames + 0.5 and abs(dur - p.duration_s) <= p.duration_tolerance_s + 1e-6
        return Result(curve.passes(ok), {"keyword": kw, "keyword_onset_s": at, "start_s": r.start_s,
                                         "offset_frames": off_frames, "duration_s": dur, "runs": len(mine)},
                      f"{stem} from {r.start_s:.3f} s ({off_frames:+.1f} frames from {kw!r}) for {dur:.2f} s")

    broll_1, broll_2, broll_3, broll_4 = unit_checks(_broll, N.broll_1, N.broll_2, N.broll_3, N.broll_4)

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        w, h = 320, 180
        spf = int(SR_HZ / FPS)  # audio samples per video frame
        texts = [["today", "strength", "is", "built"], ["first", "power", "from", "hips"],
                 ["then", "balance", "on", "one"], ["keep", "speed", "steady", "then", "rest"]]
        keywords = [("strength", "lift"), ("power", "jump"), ("balance", "beam"), ("speed", "sprint")]
        # source timeline: 0.3 s lead, words with 0.1-0.2 s gaps, 1.0-1.4 s silences between phrases
        audio_parts, words, silences = [np.zeros(int(0.3 * SR_HZ))], [], []
        t = 0.3
        for p, phrase in enumerate(texts):
            for i, txt in enumerate(phrase):
                wd = speech_word(rng, int(rng.integers(2, 4)), SR_HZ, f0_hz=float(rng.uniform(105, 135)))
                words.append({"word": txt, "start_s": round(t, 6), "end_s": round(t + len(wd) / SR_HZ, 6)})
                audio_parts.append(wd)
                t += len(wd) / SR_HZ
                last = i == len(phrase) - 1
                gap = (0.3 if p == len(texts) - 1 else float(rng.uniform(1.0, 1.4))) if last else float(rng.uniform(0.1, 0.2))
                if last and p < len(texts) - 1:
                    silences.append([round(t, 6), round(t + gap, 6)])
                audio_parts.append(np.zeros(int(gap * SR_HZ)))
                t += int(gap * SR_HZ) / SR_HZ
        audio = np.concatenate(audio_parts)
        n = int(np.ceil(len(audio) / spf))
        audio = np.pad(audio, (0, n * spf - len(audio)))
        head = clip_frames(int(rng.integers(1 << 30)), n, w, h, FPS)
        write_video(inst.workdir / SOURCE, head, FPS, audio=audio, sample_rate_hz=SR_HZ)
        brolls = {}
        for _kw, stem in keywords:
            brolls[stem] = clip_frames(int(rng.integers(1 << 30)), int(3.5 * FPS), w, h, FPS)
            write_video(inst.workdir / BROLL_DIR / f"{stem}.mp4", brolls[stem], FPS)
        (inst.workdir / "input").mkdir(parents=True, exist_ok=True)
        (inst.workdir / "input/keywords.csv").write_text(
            "keyword,broll\n" + "".join(f"{k},{s}.mp4\n" for k, s in keywords))
        inst.write_json(inst.gt / "words.json", {"words": words, "silences": silences})

        def keep_segments(leave_s: dict[int, float] | None = None, cut_word: int | None = None) -> list[tuple[int, int]]:
            """Source frame ranges kept: each long silence shortened to ~0.2 s (or leave_s[k])."""
            cuts = []
            for k, (a, b) in enumerate(silences):
                keep = (leave_s or {}).get(k, 0.2)
                cuts.append((int(np.ceil((a + keep / 2) * FPS)), int(np.floor((b - keep / 2) * FPS))))
            if cut_word is not None:
                wd, nxt = words[cut_word], words[cut_word + 1]
                cuts.append((int(np.floor(wd["start_s"] * FPS)), int(np.floor(nxt["start_s"] * FPS))))
            cuts.sort()
            segs, at = [], 0
            for a, b in cuts:
                segs.append((at, a))
                at = b
            segs.append((at, n))
            return segs

        def render(segs, late=0, long_s=None, pip=None):
            frames, pieces, starts = [], [], []
            for a, b in segs:
                starts.append((a, len(frames)))
                frames.extend(head[a:b])
                pieces.append(audio[a * spf:b * spf])
            for k, (kw, stem) in enumerate(keywords):
                ws = next(x["start_s"] for x in words if x["word"] == kw)
                fs = int(np.floor(ws * FPS))
                a, o = next((a, o) for a, o in reversed(starts) if a <= fs)
                first = round(o + (ws * FPS - a)) + (late if k == 1 else 0)
                length = round((long_s if (long_s and k == 2) else 2.0) * FPS)
                for j in range(length):
                    src = brolls[stem][j]
                    if pip is not None and k == pip:
                        f = frames[first + j].copy()
                        f[8:8 + h * 2 // 5, w - 8 - w * 2 // 5:w - 8] = resize(src, w * 2 // 5, h * 2 // 5)
                        frames[first + j] = f
                    else:
                        frames[first + j] = src
            return frames, np.concatenate(pieces)

        def emit(folder, segs, **kw):
            fr, au = render(segs, **kw)
            write_video(folder / OUTPUT, fr, FPS, audio=au, sample_rate_hz=SR_HZ)

        emit(inst.oracle, keep_segments())
        register_video_cases(inst, OUTPUT, SOURCE, profiles=CHEAP_EXPORTS + AT_2997, baselines=CHEAP_BASELINES)
        emit(inst.mutant("pause_left", [N.silences_removed, N.no_words_lost, N.export],
                         "one 1.2 s pause cut only to 0.8 s (the leave-alone shares pay 2/3: rule 3)"),
             keep_segments(leave_s={1: 0.8}))
        emit(inst.mutant("word_cut", [N.no_words_lost], "the first word is cut with the lead-in"),
             keep_segments(cut_word=0))
        emit(inst.mutant("broll_late", [N.broll_2], "the second B-roll starts 10 frames after its keyword"),
             keep_segments(), late=10)
        emit(inst.mutant("broll_long", [N.broll_3], "the third B-roll held 3 s (until the fourth covers it)"), keep_segments(), long_s=3.0)
        emit(inst.mutant("broll_pip", [N.broll_4], "the fourth B-roll as a 40% picture-in-picture"),
             keep_segments(), pip=3)
        raw = inst.mutant("ffmpeg_render", list(N),
                          "the oracle's export, but the audit saw ffmpeg write it")
        shutil.copyfile(inst.oracle / OUTPUT, _mkparent(raw / OUTPUT))
        inst.write_events(raw, [AuditWrite(OUTPUT, process="ffmpeg", pid=4242).event()])
