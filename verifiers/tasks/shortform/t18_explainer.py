"""R06.04.01.04-T18: a 60-s 9:16 explainer from an 8-scene script (CapCut desktop).

Work dir: input/script.md (8 scenes, one VO line each, and the CTA), fixtures/vo.wav (the VO,
one line per scene), fixtures/music.wav (the music bed), fixtures/stock/*.mp4. Output: the one .mp4
in out/ (the instruction names no path; with several, the first by name).

GT: gt/scenes.json = {"lines": [{"text", "vo_s": [a, b] (fixtures/vo.wav time), "acceptable":
[stock clip stems]}] x 8, "cta": text}; gt/render.json = {"scale": s, "time_scale": k} for a
miniature (synthetic only): every catalog duration (59-61 s, the 3-s CTA window, the boundary
tolerance) is multiplied by k, so a 15-s instance with k = 0.25 proves the 60-s scorer. Loudness
targets are never scaled. Where the VO sits in the export is measured (cross-correlation with
fixtures/vo.wav), and every VO-line time is shifted by it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from verifiers.base import AgentOutputError, GTError, ScoreContext
from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.evidence.base import Payload
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.audio_io import load_audio
from verifiers.measure.errors import MediaError
from verifiers.measure.fingerprint import thumbnail
from verifiers.measure.frames import iter_frames
from verifiers.measure.ocr import error_rate, normalise, resplit
from verifiers.paramtypes.shortform import AudioCta, DurationTransitions, MaxWer, SceneVisuals
from verifiers.synth import InstanceWriter
from verifiers.synthkit import shortform_ad_explainer as A
from verifiers.synthkit.shortform_video import clip_frames, write_video
from verifiers.tasks.shortform._shared.ad_measure import (
    StemLevels,
    fuzzy_cer,
    read_text_tiled,
    stem_levels,
    time_scale,
    window_mask,
)
from verifiers.tasks.shortform._shared.cases import AT_2997, CHEAP_BASELINES, ONE_EXPORT, register_video_cases
from verifiers.tasks.shortform._shared.check_guards import needs_ocr
from verifiers.tasks.shortform._shared.clips import Labelled, playing_flags, sources_in
from verifiers.tasks.shortform._shared.export import Export, open_export
from verifiers.tasks.shortform._shared.stock_footage import StockMatcher, placements

TASK = "R06.04.01.04-T18"
N = check_names(TASK)
SR_HZ = 24_000
MIN_RUN = 3  # frames: shorter label runs are transition or glitch frames, not shots
BLEND_SPAN = 6  # frames either side of a shot change searched for blended frames
BLEND_MIN = 0.25  # both sides' least-squares weights at least this: the frame mixes two pictures
MAX_DIP_S = 1.0  # a non-stock run between two shots up to this long is a dip/flash transition
SCENE_SHARE = 0.8  # share of a line's matched frames that must show an acceptable shot
EDGE_S = 0.15  # windows this close to VO edges are neither "under VO" nor "gap" (duck ramps)
MAX_CTA_CER = 0.2
FPS = 12.0
SCALE = 1 / 4
TIME_SCALE = 0.25


def _time_marker(rgb: np.ndarray, at: float) -> np.ndarray:
    """A white square crossing the middle of a stock frame's top, left to right over the clip
    (`at` 0..1): clip_frames' own time bar sweeps the whole width and its discs may sit outside a
    9:16 centre crop, so a filled shot could hold still for seconds and no moment could be told
    from another (seed 7: battery and thermostat never "played", scene_visuals 6/8)."""
    f = rgb.copy()
    w = f.shape[1]
    x = round(w / 2 - 60 + at * 110)  # inside the 9:16 centre crop (152 of 480 px)
    cv2.rectangle(f, (x, 20), (x + 10, 30), (255, 255, 255), -1)
    return f


@dataclass(frozen=True)
class ScriptLine(Payload):
    """One line of the script: its words, where the VO says it, and the stock clips that fit it."""

    text: str = gt_field(doc="the line as the script writes it")
    vo_s: list[float] = gt_field(doc="[start, end] of the line in fixtures/vo.wav")
    acceptable: list[str] = gt_field(doc="stock clip names that illustrate it")


class ScenesFile(GTFile, file="scenes.json", task=TASK):
    """gt/scenes.json: the explainer's script lines and its call to action."""

    lines: list[ScriptLine] = gt_field(doc="one per scene, in order")
    cta: str = gt_field(doc="the call-to-action text")

    def validate(self) -> None:
        self.expect(all(len(x.vo_s) == 2 and x.vo_s[0] < x.vo_s[1] for x in self.lines), "lines",
                    "every line's vo_s is [start, end] with start < end")


def read_scenes(ctx: ScoreContext, scenes: int) -> tuple[list[dict], str]:
    g = ctx.gt_typed(ScenesFile)  # a missing key, a wrong type or a broken rule: GTError naming it
    lines, cta = [x.to_payload() for x in g.lines], g.cta
    if len(lines) != scenes:
        raise GTError(f"gt/scenes.json: {len(lines)} lines, the catalog says {scenes} scenes")
    return lines, cta


def _label_runs(labelled: list[Labelled]) -> list[tuple[int, int, str | None]]:
    """[first, last] frame indices of runs of >= MIN_RUN frames with one label (None included)."""
    out, i = [], 0
    while i < len(labelled):
        j = i
        while j + 1 < len(labelled) and labelled[j + 1].label == labelled[i].label:
            j += 1
        if j - i + 1 >= MIN_RUN:
            out.append((i, j, labelled[i].label))
        i = j + 1
    return out


def _side_ref(labelled: list[Labelled], matcher: StockMatcher, run: tuple[int, int, str | None],
              at_end: bool, region: str) -> tuple[Callable[[int], np.ndarray], int]:
    """Thumbnail reference (in `region`) for one side of a shot change, by output frame index.

    A stock shot is followed in its source (anchor = its best-matching frame near the change, source
    time advancing with output time, same placement); other content (a card, a title) is taken as
    still: the run's frame farthest from the change within BLEND_SPAN.
    """
    first, last, label = run
    span = range(max(first, last - BLEND_SPAN), last + 1) if at_end else range(first, min(last, first + BLEND_SPAN) + 1)
    if label is None:
        still = thumbnail(matcher.crop(labelled[span[0] if at_end else span[-1]].rgb, region))
        return (lambda j: still), -1
    anchor = max(span, key=lambda i: labelled[i].ncc)
    idx = matcher.entries(label, matcher.placement[labelled[anchor].src_index])
    src_t = matcher.index[region].times_s[idx]
    thumbs = matcher.index[region].thumbs
    t0, s0 = labelled[anchor].t_s, labelled[anchor].src_t_s

    def ref(j: int) -> np.ndarray:
        want = s0 + labelled[j].t_s - t0
        return thumbs[idx[int(np.argmin(np.abs(src_t - want)))]]
    return ref, anchor


def transitions(labelled: list[Labelled], matcher: StockMatcher, max_still_s: float) -> list[tuple[float, float, str]]:
    """Transition effects: (start_s, end_s, kind).

    "blend": at a change between two runs of frames, >= 2 frames are a mix of both sides (least
    squares of the frame's NCC thumbnail on the two sides' references, both weights >= BLEND_MIN,
    in the region most frames around the change matched in): dissolves, wipes and most animated transitions.
    "dip": a short run (<= max_still_s) matching no stock shot between two stock shots (a dip to
    black or a flash). Hard cuts are not transitions.
    """
    rs = _label_runs(labelled)
    regions = getattr(matcher, "region_of", ["full"] * len(labelled))
    out = []
    for r1, r2 in itertools.pairwise(rs):
        if r1[2] == r2[2]:
            continue
        window = range(max(r1[0], r1[1] - BLEND_SPAN), min(r2[1], r2[0] + BLEND_SPAN) + 1)
        near = [regions[j] for j in window]
        region = max(sorted(set(near)), key=near.count)  # where the frames around the change matched
        ref1, _ = _side_ref(labelled, matcher, r1, True, region)
        ref2, _ = _side_ref(labelled, matcher, r2, False, region)
        blended = []
        for j in window:
            a, b = ref1(j), ref2(j)
            if not a.any() or not b.any():
                continue
            q = thumbnail(matcher.crop(labelled[j].rgb, region))
            coef, *_ = np.linalg.lstsq(np.stack([a, b], axis=1), q, rcond=None)
            if min(coef) >= BLEND_MIN:
                blended.append(j)
        if len(blended) >= 2:
            out.append((labelled[blended[0]].t_s, labelled[blended[-1]].t_s, "blend"))
    for r0, r1, r2 in zip(rs, rs[1:], rs[2:], strict=False):
        dur = labelled[r1[1]].t_s - labelled[r1[0]].t_s
        if r1[2] is None and r0[2] is not None and r2[2] is not None and dur <= max_still_s:
            out.append((labelled[r1[0]].t_s, labelled[r1[1]].t_s, "dip"))
    return sorted(out)


def frames_at(path: Path, times_s: list[float]) -> list[np.ndarray]:
    """Full-size frames nearest each time, in one decoding pass."""
    want = np.asarray(times_s)
    best: list[tuple[float, np.ndarray | None]] = [(np.inf, None)] * len(want)
    for fr in iter_frames(path):
        d = np.abs(want - fr.t_s)
        for i in np.nonzero(d < [b[0] for b in best])[0]:
            best[i] = (float(d[i]), fr.rgb)
    return [b[1] for b in best]


@dataclass(frozen=True)
class Levels:
    """The mix projected on the VO and music references, the VO offset and the lines' VO spans in
    the export (the script's own times when the VO is not in the mix)."""

    lv: StemLevels | None
    audio_err: str
    lag_s: float
    spans: list[tuple[float, float]]
    vo_in: bool


def mix_levels(path: Path, refs: list[np.ndarray], lines: list[dict]) -> Levels:
    lv, audio_err = None, ""
    try:
        mix = load_audio(path, sample_rate_hz=SR_HZ).samples
        lv = stem_levels(mix, refs, SR_HZ, max_lag_s=10.0)
    except MediaError as exc:
        audio_err = f"no usable audio: {exc}"
    lag = lv.lags_s[0] if lv is not None else 0.0
    spans = [(x["vo_s"][0] + lag, x["vo_s"][1] + lag) for x in lines]
    vo_in = lv is not None and lv.lufs(0, window_mask(lv.t_s, spans)) > -50
    if not vo_in:  # no VO to align on: judge the pictures at the script's own times
        lag, spans = 0.0, [(x["vo_s"][0], x["vo_s"][1]) for x in lines]
    return Levels(lv, audio_err, lag, spans, vo_in)


def music_parts(lev: Levels, p: AudioCta) -> tuple[bool, bool, dict]:
    """Music at its level in the VO gaps, and ducked under the VO (with evidence)."""
    if lev.lv is None or not lev.vo_in:
        return False, False, {"audio": lev.audio_err if lev.lv is None else "the voice-over is not in the mix"}
    lv, spans = lev.lv, lev.spans
    under = window_mask(lv.t_s, spans, EDGE_S)
    gaps = ~window_mask(lv.t_s, [(a - EDGE_S, b + EDGE_S) for a, b in spans])
    gap_lufs, under_lufs = lv.lufs(1, gaps), lv.lufs(1, under)
    level_ok = abs(gap_lufs - p.music_lufs) <= p.tolerance_lu
    duck_ok = bool(np.isfinite(gap_lufs)) and under_lufs <= gap_lufs - p.min_duck_db
    return level_ok, duck_ok, {"music_gap_lufs": gap_lufs, "music_under_vo_lufs": under_lufs,
                               "vo_lufs": lv.lufs(0, under), "lags_s": lv.lags_s}


class Explainer(CheckedTask):
    task_id = TASK

    @provides
    def script(self) -> tuple[list[dict], str]:
        return read_scenes(self.ctx, self.task.check(N.scene_visuals).typed.scene_count)

    @provides
    def k(self) -> float:
        return time_scale(self.ctx)

    @provides
    def refs(self) -> list[np.ndarray]:
        try:
            vo = load_audio(self.ctx.input("fixtures/vo.wav"), sample_rate_hz=SR_HZ).mono
            music = load_audio(self.ctx.input("fixtures/music.wav"), sample_rate_hz=SR_HZ).mono
        except MediaError as exc:
            raise GTError(f"audio fixture: {exc}") from None
        return [vo, music]

    @provides
    def export(self) -> Export:
        self.script, self.k, self.refs  # noqa: B018 - bad inputs are reported before the export is looked at
        return open_export(self.ctx, None)

    @provides
    def stock(self) -> StockMatcher:
        """The stock clips indexed at the export's size (every placement a 9:16 edit may use)."""
        facts = self.export.facts
        return StockMatcher(sources_in(self.ctx.input("fixtures/stock")), facts["width_px"] or 9, facts["height_px"] or 16)

    @provides
    def labelled(self) -> list[Labelled]:
        return self.stock.label_video(self.export.path)

    @provides
    def levels(self) -> Levels:
        self.labelled  # noqa: B018 - the pictures are judged first: an export that does not decode fails
        return mix_levels(self.export.path, self.refs, self.script[0])

    @provides
    def ocr(self) -> tuple[list[str], list[str]]:
        """OCR of each line's midpoint frame, and of two frames in the CTA window."""
        spans, dur = self.levels.spans, self.export.facts["duration_s"]
        cw = self.task.check(N.audio_cta).typed.cta_window_s * self.k
        want = [(a + b) / 2 for a, b in spans] + [dur - f * cw for f in (0.75, 0.25)]
        try:
            texts = [" ".join(b.text for b in boxes) for boxes in read_text_tiled(frames_at(self.export.path, want))]
        except MediaError as exc:
            raise AgentOutputError(str(exc)) from None
        return texts[: len(spans)], texts[len(spans):]

    @check(N.duration_transitions)
    def duration_transitions(self, p: DurationTransitions, curve: Curve) -> Result:
        k, dur, lev = self.k, self.export.facts["duration_s"], self.levels
        spans = lev.spans
        tol = p.boundary_tolerance_s * k
        dur_ok = p.min_duration_s * k <= dur <= p.max_duration_s * k
        windows = [(0.0, spans[0][0] + tol)]
        windows += [(spans[i - 1][1] - tol, spans[i][0] + tol) for i in range(1, len(spans))]
        windows.append((spans[-1][1] - tol, dur + 1))
        runs = transitions(self.labelled, self.stock, MAX_DIP_S * k)
        mid = [r for r in runs if not any(r[0] <= b and r[1] >= a for a, b in windows)]
        scenes = self.scenes_ok_share  # rule 3: length and "no transition inside a scene" pay with the scenes shown
        return Result(curve.count([dur_ok, not mid]) * scenes,
                      {"duration_s": dur, "scenes_ok_share": scenes, "limits_s": [p.min_duration_s * k, p.max_duration_s * k],
                       "transitions_s": runs, "mid_scene_s": mid, "vo_offset_s": lev.lag_s},
                      "; ".join(m for m in (("" if dur_ok else f"duration {dur:.2f} s"),
                                            (f"{len(mid)} transition(s) inside a scene" if mid else ""),
                                            (f"paid x{scenes:.2f}: {scenes:.0%} of the scenes show an acceptable shot"
                                             if scenes < 1 else "")) if m))

    @provides
    def scenes(self) -> tuple[list[dict], int]:
        """Per VO line: the shot shown under it, the share of its (matched) frames that show an
        acceptable shot, and whether that shot plays there (rule 2: a held frame of the right shot
        is not the shot; the first frame held for the whole export kept 1/8 of scene_visuals)."""
        lines, lev = self.script[0], self.levels
        playing = playing_flags(self.labelled, self.stock.frame_s)  # in seconds: a 29.97 export repeats frames
        per, good = [], 0
        for x, (a, b) in zip(lines, lev.spans, strict=True):
            inside = [(f.label, ok) for f, ok in zip(self.labelled, playing, strict=True)
                      if a <= f.t_s < b and f.label is not None]
            shown = [label for label, _ok in inside]
            share = sum(label in x["acceptable"] for label in shown) / len(shown) if shown else 0.0
            # the acceptable shot must play somewhere under the line (a dissolve's blended frames
            # need not, so the share itself stays a share of labelled frames)
            plays = any(label in x["acceptable"] and ok for label, ok in inside)
            top = max(set(shown), key=shown.count) if shown else None
            ok = share >= SCENE_SHARE and plays
            good += ok
            per.append({"line": x["text"], "shot": top, "acceptable_share": share, "plays": plays, "ok": ok})
        return per, good

    @property
    def scenes_ok_share(self) -> float:
        per, good = self.scenes
        return good / len(per) if per else 0.0

    @check(N.scene_visuals)
    def scene_visuals(self, p: SceneVisuals, curve: Curve) -> Result:
        per, good = self.scenes
        return Result(curve.count(good, len(per)), {"scenes": per, "vo_offset_s": self.levels.lag_s},
                      f"{good}/{len(per)} scenes show an acceptable shot (playing)")

    @check(N.captions)
    @needs_ocr
    def captions(self, p: MaxWer, curve: Curve) -> Result:
        ocr = self.ocr[0]
        ref = [w for x in self.script[0] for w in (normalise(t) for t in x["text"].split()) if w]
        hyp = resplit([w for t in ocr for w in (normalise(s) for s in t.split()) if w], set(ref))
        wer = 100 * error_rate(hyp, ref)
        return Result(curve.passes(wer <= p.max_wer_pct), {"wer_pct": wer, "ocr": ocr},
                      f"caption WER {wer:.1f}% (max {p.max_wer_pct:g}%)")

    @check(N.audio_cta)
    @needs_ocr
    def audio_cta(self, p: AudioCta, curve: Curve) -> Result:
        cta_ocr = self.ocr[1]
        cta_ok = any(fuzzy_cer(normalise(t), normalise(self.script[1])) <= MAX_CTA_CER for t in cta_ocr)
        level_ok, duck_ok, audio_ev = music_parts(self.levels, p)
        parts = {"music_level": level_ok, "ducked": duck_ok, "cta": cta_ok}
        return Result(curve.count(parts.values()), {"cta_ocr": cta_ocr, "cta_found": cta_ok, **audio_ev, "parts": parts},
                      "; ".join(f"no {n}" for n, v in parts.items() if not v))

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        w, h = 270, 480
        texts = ["Solar panels catch sunlight", "Batteries store spare power", "Heat pumps warm your home",
                 "Insulation keeps heat inside", "LED bulbs use less energy", "Smart thermostats learn your day",
                 "Chargers fill your car at night", "Small steps cut your bills"]
        shots = [["solar_a", "solar_b"], ["battery"], ["heatpump_a", "heatpump_b"], ["insulation"], ["led"],
                 ["thermostat"], ["ev_charger"], ["savings"]]
        distractors = ["coal_plant", "wind_turbine"]
        cta = "Follow for more tips"
        n_clip = int(4 * FPS)
        fit_scene = 4  # the LED shot is fitted (bars above and below); the others fill the canvas
        stock = {}
        for name in [s for group in shots for s in group] + distractors:
            src = clip_frames(int(rng.integers(1 << 30)), n_clip, h, w, FPS)  # landscape 480x270 stock
            src = [_time_marker(f, i / (n_clip - 1)) for i, f in enumerate(src)]
            write_video(inst.workdir / f"fixtures/stock/{name}.mp4", src, FPS)
            how = "fit" if name in shots[fit_scene] else "fill"
            stock[name] = [placements(f, w, h)[how] for f in src]
        gap = 0.5
        place_s = 0.25  # the VO file starts this late in the export: the scorer must measure it
        file_s = [[round(0.15 + 1.55 * i, 3), round(0.15 + 1.55 * i + 1.05, 3)] for i in range(8)]
        vo_s = [[a + place_s, b + place_s] for a, b in file_s]  # export time
        scenes = {"lines": [{"text": t, "vo_s": v, "acceptable": s} for t, v, s in zip(texts, file_s, shots, strict=True)],
                  "cta": cta}
        inst.write_json(inst.gt / "scenes.json", scenes)
        inst.write_json(inst.gt / "render.json", {"scale": SCALE, "time_scale": TIME_SCALE})
        md = ["# Clean energy at home (60 s explainer)", ""]
        for i, t in enumerate(texts, 1):
            md += [f"## Scene {i}", f"VO: {t}", ""]
        md += ["## End card", f"CTA: {cta}", ""]
        (inst.workdir / "input").mkdir(parents=True, exist_ok=True)
        (inst.workdir / "input/script.md").write_text("\n".join(md), encoding="utf-8")
        import soundfile as sf

        vo = A.voice_over(rng, 13.0, file_s, SR_HZ)
        bed = A.level_to_lufs(A.music_bed(rng, 20.0, SR_HZ), SR_HZ, -20.0)
        sf.write(str(inst.workdir / "fixtures/vo.wav"), vo, SR_HZ, subtype="PCM_16")
        sf.write(str(inst.workdir / "fixtures/music.wav"), bed, SR_HZ, subtype="PCM_16")
        card = np.full((h, w, 3), (30, 60, 140), np.uint8)
        card = A.draw_text(card, "Follow for", x_px=None, y_px=int(0.40 * h), size_px=26, colour=(255, 255, 255))
        card = A.draw_text(card, "more tips", x_px=None, y_px=int(0.40 * h) + 36, size_px=26, colour=(255, 255, 255))
        bounds = [0.0] + [(vo_s[i - 1][1] + vo_s[i][0]) / 2 for i in range(1, 8)] + [vo_s[7][1] + gap / 2, 99.0]
        xfade = 6  # frames of a cross-dissolve (0.5 s, CapCut's default length)

        def caption(f: np.ndarray, text: str) -> np.ndarray:
            words = text.split()
            half = (len(words) + 1) // 2
            f = A.draw_text(f, " ".join(words[:half]), x_px=None, y_px=int(0.62 * h), size_px=17, colour=(255, 255, 255))
            return A.draw_text(f, " ".join(words[half:]), x_px=None, y_px=int(0.62 * h) + 26, size_px=17,
                               colour=(255, 255, 255))

        def render(folder: Path, *, scene3: str = "heatpump_a", mid_dissolve: bool = False,
                   captions: list[str] = texts, music_lufs: float = -20.0, with_cta: bool = True) -> None:
            picks = [g[0] for g in shots] + ["savings"]
            picks[2] = scene3

            def base(s: int, t: float) -> np.ndarray:
                """Scene s's picture at output time t: its clip runs from 0.5 s in at the scene start."""
                if s == 8 and with_cta:
                    return card
                start = bounds[min(s, 7)]
                return stock[picks[s]][min(n_clip - 1, max(0, int((t - start + 0.5) * FPS)))]

            def mix(f0: np.ndarray, f1: np.ndarray, a: float) -> np.ndarray:
                return (f0 * (1 - a) + f1 * a).astype(np.uint8)

            n = round(15.0 * FPS)
            frames = []
            for i in range(n):
                t = i / FPS
                s = next(j for j in range(9) if bounds[j] <= t < bounds[j + 1])
                f = base(s, t)
                for d in (2, 5, 8):  # cross-dissolves at these scene changes, hard cuts elsewhere
                    a = (t - bounds[d]) * FPS / xfade + 0.5
                    if 0 < a < 1:
                        f = mix(base(d - 1, t), base(d, t), a)
                if s == 0 and mid_dissolve:  # solar_a dissolves into solar_b in the middle of line 1
                    a = float(np.clip((t - sum(vo_s[0]) / 2) * FPS / xfade + 0.5, 0, 1))
                    f = mix(f, stock["solar_b"][min(n_clip - 1, int((t + 0.5) * FPS))], a)
                if s < 8 and vo_s[s][0] <= t < vo_s[s][1]:
                    f = caption(f, captions[s])
                frames.append(f)
            ns = round(15.0 * SR_HZ)
            v = np.zeros(ns, np.float32)
            lag = round(place_s * SR_HZ)
            v[lag:lag + len(vo)] = vo[: ns - lag]
            m = bed[:ns] * A.gain_curve(ns, vo_s, -12.0, SR_HZ) * 10 ** ((music_lufs + 20.0) / 20)
            write_video(folder / "out/explainer_60s.mp4", frames, FPS, audio=v + m, sample_rate_hz=SR_HZ)

        render(inst.oracle)
        register_video_cases(inst, "out/explainer_60s.mp4", "fixtures/stock/solar_a.mp4", profiles=ONE_EXPORT + AT_2997,
                             baselines=CHEAP_BASELINES, keeps={
                                 # 2/3 of 25 as the report rounds it (16.67): the exact 16.666... failed it
                                 "still_with_sound": (round(25 * 2 / 3, 2), "the oracle's own mix under a frozen picture: the music "
                                                      "bed's level and its ducking under the VO (2/3 of audio_cta) are the "
                                                      "mix's work, judged on the given vo.wav and music.wav"),
                                 "unedited_input": (35 / 8 + 20 / 2 / 8, "the stock shot handed back is scene 1's acceptable "
                                                    "shot, playing: 1/8 of scene_visuals, and 1/8 of the no-mid-scene-"
                                                    "transition half of duration_transitions (rule 3)")})
        render(inst.mutant("wrong_shot_scene3", [N.scene_visuals, N.duration_transitions],
                           "scene 3 (heat pumps) shows the coal plant (duration_transitions pays 7/8: rule 3)"),
               scene3="coal_plant")
        render(inst.mutant("transition_mid_scene", [N.duration_transitions], "a dissolve in the middle of scene 1"),
               mid_dissolve=True)
        typos = list(texts)
        typos[0], typos[2], typos[4] = "Solr panals catch sunlite", "Heat pumsp worm your home", "LED bulps use les energy"
        render(inst.mutant("caption_typos", [N.captions], "seven misspelt caption words"), captions=typos)
        render(inst.mutant("music_minus12", [N.audio_cta], "music bed at -12 LUFS"), music_lufs=-12.0)
        render(inst.mutant("no_cta", [N.audio_cta], "no CTA end card: stock footage to the end"), with_cta=False)
