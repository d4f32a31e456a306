"""R06.04.01.04-T01: reframe a 16:9 cooking clip into a 30-s 9:16 short that keeps the hands in frame,
built from the listed selects, with captions from the transcript.

Work dir: fixtures/cooking_16x9.mp4, input/selects.txt (one "start_s end_s" per line, in play order),
input/transcript.txt (one caption per line). Output: out/cooking_short.mp4.
GT: gt/subject.json = {"fps", "boxes": [[x, y, w, h] per source frame]} (hands, source pixels);
gt/render.json = instance scale (synthetic only).

A reframe is a full-height vertical strip of the source, so each sampled output frame is located by
normalised template matching of the (downscaled) output against every (downscaled) source frame:
that yields both the source moment and the strip's x position. Captions are read by OCR.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from verifiers.base import AgentOutputError, GTError
from verifiers.checks import Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.errors import MediaError
from verifiers.measure.frames import iter_frames
from verifiers.measure.memo import content_key, file_key, memo
from verifiers.measure.ocr import OCRUnavailable, error_rate, frame_text, normalise, resplit
from verifiers.params import NoParams
from verifiers.paramtypes.shortform import FormatDuration, MaxWer, MinFramesPct
from verifiers.synth import InstanceWriter
from verifiers.synthkit.shortform_video import burn_text, clip_frames, resize, write_video
from verifiers.tasks.shortform._shared.cases import (
    AT_2997,
    CHEAP_BASELINES,
    CHEAP_EXPORTS,
    register_video_cases,
)
from verifiers.tasks.shortform._shared.export import ExportTask, instance_scale, size_ok

TASK = "R06.04.01.04-T01"
N = check_names(TASK)


class SubjectFile(GTFile, file="subject.json", task=TASK):
    """gt/subject.json: where the subject (the cook's hands) is on every source frame."""

    boxes_px: list[list[float]] = gt_field("boxes", "per source frame: x, y, w, h in source pixels")
    fps: float | None = gt_field(doc="the source's frame rate (informative)", default=None)

    def validate(self) -> None:
        self.expect(bool(self.boxes_px) and all(len(b) == 4 for b in self.boxes_px), "boxes_px",
                    "must hold one [x, y, w, h] per source frame")
OUTPUT = "out/cooking_short.mp4"
FPS = 24.0
SCALE = 1 / 6
SEARCH_H_PX = 45  # coarse search height (80x45 for 16:9)
FINE_H_PX = 90  # fine re-match height
CANDIDATES = 8
# the coarse search bounds every source frame's OpenCV coarse NCC from above by a float64 FFT estimate
# and runs OpenCV only on the frames whose bound reaches the CANDIDATES-th best OpenCV score. OpenCV
# correlates in float32 and subtracts window sum x template mean, so its error grows with
# (1 + mean/std) of window and template: measured <= 3.7e-7 per unit of that gain (clip_frames
# sources, 10-40 px templates); the bound allows 27 times it
RANK_ERR_PER_GAIN = 1e-5
RANK_MIN_STD_GREY = 0.5  # a flatter window or template is OpenCV's degenerate branch: never estimated
SAMPLE_S = 1.0
OCR_EVERY_S = 1.25
MAX_SRC_ERR_S = 0.25
# content identity: an output frame is a strip of the source when its best fine match has NCC above
# this (measured: an honest crop with burned captions 0.90-0.96, the source letterboxed with text 0.42)
MIN_STRIP_NCC = 0.7
FLAT_GREY_SPREAD = 2  # grey levels: a flat frame (black) matches any flat patch with NCC 1 in OpenCV
# a reframe is a strip narrower than the source: 9:16 from 16:9 is 0.32 of its width, 1:1 0.56.
# subject_in_frame rewards keeping the hands inside a *reframe* (rule 3): the whole 16:9 frame
# handed back "frames" them trivially
MAX_STRIP_SHARE = 0.75
TEX_SIGMA_PX = 4.0  # synth: blob size of the scrolling band (3 px/frame: 4 frames apart uncorrelated)
TEX_STD_GREY = 64.0  # synth: its contrast


def read_selects(text: str) -> list[tuple[float, float]]:
    out = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            a, b = (float(v) for v in line.replace(",", " ").split()[:2])
        except ValueError:
            raise GTError(f"input/selects.txt: bad line {line!r}") from None
        out.append((a, b))
    if not out:
        raise GTError("input/selects.txt lists no segments")
    return out


class StripLocator:
    """Where in which source frame does a vertical reframe come from.

    Coarse: template-match the output (as grey, 45 px high) in every source frame (OpenCV runs only
    where an FFT upper bound can reach the best few: `_coarse_scores`); fine: re-match the best few
    candidates at 90 px height, where the moving details that tell neighbouring frames apart are visible.
    """

    def __init__(self, source) -> None:
        self.small, self.fine, self.times = [], [], []
        try:
            for fr in iter_frames(source, height=FINE_H_PX):
                g = cv2.cvtColor(fr.rgb, cv2.COLOR_RGB2GRAY)
                self.fine.append(g)
                self.small.append(cv2.resize(g, (round(g.shape[1] * SEARCH_H_PX / FINE_H_PX), SEARCH_H_PX),
                                             interpolation=cv2.INTER_AREA))
                self.times.append(fr.t_s)
        except MediaError as exc:
            raise GTError(f"source clip: {exc}") from None
        #: the source frames' content: `locate` is remembered under it (the small frames derive from these)
        self.content = content_key(self.fine, self.times)
        stack = np.stack(self.small).astype(np.float64)  # (frames, rows, cols)
        self._nfft = 1 << int(np.ceil(np.log2(stack.shape[2])))
        self._spec = np.fft.rfft(stack, n=self._nfft, axis=2)  # per row: correlation by FFT
        zero = np.zeros((len(stack), 1))
        self._col_sum = np.hstack([zero, np.cumsum(stack.sum(axis=1), axis=1)])  # window sums by differences
        self._col_sq = np.hstack([zero, np.cumsum((stack ** 2).sum(axis=1), axis=1)])

    @property
    def nbytes(self) -> int:
        """What the memo (`strip_locator`) counts against its bound."""
        arrays = [*self.small, *self.fine, self._spec, self._col_sum, self._col_sq]
        return sum(a.nbytes for a in arrays)

    def _template(self, grey: np.ndarray, height: int, width: int) -> np.ndarray:
        h, w = grey.shape[:2]
        tw = max(4, min(width, round(height * w / h)))
        return cv2.resize(grey, (tw, height), interpolation=cv2.INTER_AREA)

    def locate(self, rgb: np.ndarray, src_w_px: int) -> tuple[float, float, float, int, float]:
        """(source time, strip x in source px, strip width in source px, source frame index, NCC).

        Remembered by content (verifiers.measure.memo: the source frames, this frame's pixels): the
        self-test's oracle, mutants and exports show many of the same decoded frames, and the search
        over every source frame is ~45 % of T01's scoring."""
        return memo("t01_strip_locate", (self.content, rgb, int(src_w_px)), lambda: self._locate(rgb, src_w_px))

    def _locate(self, rgb: np.ndarray, src_w_px: int) -> tuple[float, float, float, int, float]:
        """locate, computed."""
        grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
        fine_t = self._template(grey, FINE_H_PX, self.fine[0].shape[1])
        if int(fine_t.max()) - int(fine_t.min()) < FLAT_GREY_SPREAD:  # nothing to match: no strip
            return 0.0, 0.0, fine_t.shape[1] * src_w_px / self.fine[0].shape[1], 0, 0.0
        scores = self._coarse_scores(self._template(grey, SEARCH_H_PX, self.small[0].shape[1]))
        best = (-2.0, 0, 0)
        for i in np.argsort(scores)[::-1][:CANDIDATES]:
            _, mx, _, loc = cv2.minMaxLoc(cv2.matchTemplate(self.fine[i], fine_t, cv2.TM_CCOEFF_NORMED))
            if mx > best[0]:
                best = (mx, int(i), loc[0])
        ncc, i, x = best
        k = src_w_px / self.fine[0].shape[1]
        return self.times[i], x * k, fine_t.shape[1] * k, i, float(ncc)

    def _upper_bounds(self, tmpl: np.ndarray) -> np.ndarray:
        """Per source frame: an upper bound of OpenCV's coarse NCC (best over x), from the NCC in
        float64 by FFT plus OpenCV's float32 error (RANK_ERR_PER_GAIN); inf where a window or the
        template is too flat to bound (RANK_MIN_STD_GREY)."""
        t = tmpl.astype(np.float64)
        t_mean, t_std = float(t.mean()), float(t.std())
        if t_std < RANK_MIN_STD_GREY:
            return np.full(len(self.small), np.inf)
        t -= t_mean
        n_px, tw = t.size, t.shape[1]
        num = np.fft.irfft(np.einsum("frk,rk->fk", self._spec, np.conj(np.fft.rfft(t, n=self._nfft, axis=1))),
                           n=self._nfft, axis=1)[:, : self._col_sum.shape[1] - tw]
        w_sum = self._col_sum[:, tw:] - self._col_sum[:, :-tw]
        w_std = np.sqrt(np.maximum(self._col_sq[:, tw:] - self._col_sq[:, :-tw] - w_sum ** 2 / n_px, 0.0) / n_px)
        flat = w_std < RANK_MIN_STD_GREY
        w_std = np.where(flat, 1.0, w_std)
        ncc = num / (n_px * w_std * t_std)
        err = RANK_ERR_PER_GAIN * (1 + np.abs(w_sum / n_px) / w_std) * (1 + abs(t_mean) / t_std)
        return np.where(flat, np.inf, ncc + err).max(axis=1)

    def _coarse_scores(self, tmpl: np.ndarray) -> np.ndarray:
        """OpenCV's coarse NCC of every source frame that can be among the best CANDIDATES; -inf for
        the others. Frames are scored highest bound first (`_upper_bounds`); once CANDIDATES are
        scored and the next bound is below the CANDIDATES-th best score, no frame left can enter the
        top. The same top CANDIDATES as scoring every source frame with OpenCV, with a few dozen
        OpenCV calls instead of one per source frame."""
        upper = self._upper_bounds(tmpl)
        scores = np.full(len(self.small), -np.inf)
        best: list[float] = []  # the scores so far, highest first, at most CANDIDATES
        for i in np.argsort(upper)[::-1]:
            if len(best) == CANDIDATES and upper[i] < best[-1]:
                break
            scores[i] = cv2.minMaxLoc(cv2.matchTemplate(self.small[i], tmpl, cv2.TM_CCOEFF_NORMED))[1]
            best = sorted([*best, float(scores[i])], reverse=True)[:CANDIDATES]
        return scores


def strip_locator(source: Path) -> StripLocator:
    """The StripLocator of a source clip, built once per content of the file (verifiers.measure.memo):
    every solution of a self-test scores against the same source bytes, and building it (grey
    thumbnails of every source frame, their spectra) was ~5 % of T01's self-test."""
    return memo("t01_strip_locator", (file_key(source),), lambda: StripLocator(source))


@dataclass(frozen=True)
class Samples:
    """Every SAMPLE_S of the export: on the right select, hands inside the strip; frames for OCR."""

    n: int
    on_select: int
    inside: int
    playing: int  # samples that are a strip of the source played in step (any select)
    ocr_frames: list[np.ndarray]


def sample_export(path: Path, locator: StripLocator, src_w: int, selects: list[tuple[float, float]],
                  boxes: list) -> Samples:
    """Per sample (SAMPLE_S): the source moment and strip it shows. Content identity: a sample
    counts only when it is a strip of the source (NCC ≥ MIN_STRIP_NCC); the hands are judged only
    on samples that play the source in step with a neighbouring sample (a frame held for the whole
    length shows one moment) and on a strip narrower than the source (rule 3)."""
    starts = np.cumsum([0.0] + [b - a for a, b in selects])
    seg_ok = 0
    judged = []  # (t_out, t_src, hands inside the strip, strip narrower than the source, a strip at all)
    ocr_frames = []
    next_ocr = 0.0
    for fr in iter_frames(path, every_s=SAMPLE_S):
        t_src, x, w, idx, ncc = locator.locate(fr.rgb, src_w)
        k = int(np.searchsorted(starts, fr.t_s, side="right") - 1)
        near_cut = np.min(np.abs(starts - fr.t_s)) < 1.5 / FPS and fr.t_s > 0.1
        if near_cut:  # a sample on a select boundary may show either side: not judged at all
            pass
        elif ncc >= MIN_STRIP_NCC:  # not a strip of the source: neither on its select nor framing the hands
            if 0 <= k < len(selects):
                expect = selects[k][0] + fr.t_s - starts[k]
                seg_ok += abs(t_src - expect) <= MAX_SRC_ERR_S
            bx, _by, bw, _bh = boxes[min(idx, len(boxes) - 1)]
            judged.append((fr.t_s, t_src, bx >= x - 2 and bx + bw <= x + w + 2, w <= MAX_STRIP_SHARE * src_w, True))
        else:
            judged.append((fr.t_s, t_src, False, False, False))
        if fr.t_s >= next_ocr - 1e-6:
            ocr_frames.append(fr.rgb)
            next_ocr = fr.t_s + OCR_EVERY_S
    inside = playing = 0
    for j, (t, ts, hands_in, narrow, strip) in enumerate(judged):
        in_step = strip and any(s2 and abs((ts2 - ts) - (t2 - t)) <= MAX_SRC_ERR_S
                                for t2, ts2, _h, _n, s2 in judged[max(0, j - 1):j] + judged[j + 1:j + 2])
        inside += hands_in and narrow and in_step
        playing += in_step
    return Samples(len(judged), seg_ok, inside, playing, ocr_frames)


def caption_lines(frames: list[np.ndarray], max_chars: int) -> tuple[list[str], int]:
    """OCR text of each frame, consecutive repeats dropped, and how many frames showed a wall of
    text (more than `max_chars` letters: not a caption but the script at once; those frames add
    nothing, so burning every line on every frame reads as no captions)."""
    lines: list[str] = []
    walls = 0
    for rgb in frames:
        txt = frame_text(rgb).strip()
        if len(normalise(txt).replace(" ", "")) > max_chars:
            walls += 1
            continue
        if txt and (not lines or normalise(lines[-1]) != normalise(txt)):
            lines.append(txt)
    return lines, walls


def wall_chars(transcript_lines: list[str]) -> int:
    """Most letters one caption frame may show: its two longest transcript lines together, 25 %
    over for OCR noise (a caption may carry two lines; the whole script at once is not a caption)."""
    sizes = sorted(len(normalise(ln).replace(" ", "")) for ln in transcript_lines if ln.strip())
    return int(1.25 * sum(sizes[-2:])) + 2


class ReframeShort(ExportTask, output=OUTPUT):
    task_id = TASK

    @provides
    def samples(self) -> Samples:
        src = self.ctx.input("fixtures/cooking_16x9.mp4")
        selects = read_selects(self.ctx.input("input/selects.txt").read_text(encoding="utf-8"))
        boxes = self.ctx.gt_typed(SubjectFile).boxes_px
        locator = strip_locator(src)
        src_w = next(iter_frames(src, max_frames=1)).rgb.shape[1]
        try:
            return sample_export(self.export.path, locator, src_w, selects, boxes)
        except MediaError as exc:
            raise AgentOutputError(str(exc)) from None

    @check(N.format_duration)
    def format_duration(self, p: FormatDuration, curve: Curve) -> Result:
        facts = self.export.facts
        dur_ok = p.min_duration_s <= facts["duration_s"] <= p.max_duration_s
        sm = self.samples
        playing = sm.playing / sm.n if sm.n else 0.0  # rule 3: the format pays with the source playing
        return Result(curve.passes(dur_ok and size_ok(facts, list(p.size_px), instance_scale(self.ctx))) * playing,
                      {**facts, "playing_share": playing},
                      f"{facts['width_px']}x{facts['height_px']}, {facts['duration_s']:.2f} s; "
                      f"{sm.playing}/{sm.n} samples play the source in step")

    @check(N.correct_segments)
    def correct_segments(self, p: NoParams, curve: Curve) -> Result:
        sm = self.samples
        return Result(curve.count(sm.on_select, sm.n), {"samples": sm.n, "on_select": sm.on_select},
                      f"{sm.on_select}/{sm.n} samples show the select that belongs there")

    @check(N.subject_in_frame)
    def subject_in_frame(self, p: MinFramesPct, curve: Curve) -> Result:
        sm = self.samples
        pct = 100 * sm.inside / sm.n if sm.n else 0.0
        return Result(curve.passes(pct >= p.min_frames_pct), {"inside_pct": pct},
                      f"hands inside the frame in {pct:.1f}% of samples (need {p.min_frames_pct}%)")

    @check(N.captions)
    def captions(self, p: MaxWer, curve: Curve) -> Result:
        transcript = self.ctx.input("input/transcript.txt").read_text(encoding="utf-8")
        frames = self.samples.ocr_frames
        try:
            lines, walls = caption_lines(frames, wall_chars(transcript.splitlines()))
        except OCRUnavailable as exc:
            return Result.cannot_judge(str(exc))
        ref = [normalise(wd) for wd in transcript.split() if normalise(wd)]
        hyp = resplit([normalise(wd) for wd in " ".join(lines).split() if normalise(wd)], set(ref))
        wer = 100 * error_rate(hyp, ref)
        wall = f"; {walls} frame(s) showed the script at once (not captions)" if walls else ""
        return Result(curve.passes(wer <= p.max_wer_pct), {"wer_pct": wer, "ocr_lines": lines, "wall_frames": walls},
                      f"caption WER {wer:.1f}% (max {p.max_wer_pct}%){wall}")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        w, h = 320, 180
        src_s = 40.0
        n = int(src_s * FPS)
        frames = clip_frames(int(rng.integers(1 << 30)), n, w, h, FPS)
        # a scrolling textured band: every vertical strip changes with time, so a narrow reframe of
        # this mostly static kitchen still tells its source moment. Grey blobs of TEX_SIGMA_PX at
        # high contrast: they survive StripLocator's 45-px search (a 2-px colour noise averaged to
        # a flat band there, std 16 grey levels, and a caption box outweighed it: seed 5 located 3
        # of 28 samples 5 s off), and a strip 4 frames away no longer correlates with it
        noise = rng.integers(0, 255, (24, 4096, 3)).astype(np.float32).mean(axis=2)
        z = cv2.GaussianBlur(noise, (0, 0), TEX_SIGMA_PX)
        grey = np.clip(128 + TEX_STD_GREY * (z - z.mean()) / z.std(), 0, 255).astype(np.uint8)
        tex = np.repeat(grey[..., None], 3, axis=2)
        boxes = []
        for i in range(n):
            off = 3 * i
            frames[i][36:60] = tex[:, off:off + w]
            t = i / FPS
            cx = 160 + 125 * np.sin(2 * np.pi * t / 11.0)
            x0 = int(cx - 15)
            boxes.append([x0, 100, 30, 30])
            cv2.rectangle(frames[i], (x0, 100), (x0 + 30, 130), (250, 200, 160), -1)  # the hands
            cv2.circle(frames[i], (x0 + 15, 115), 8, (120, 60, 40), -1)
        write_video(inst.workdir / "fixtures/cooking_16x9.mp4", frames, FPS)
        inst.write_json(inst.gt / "subject.json", {"fps": FPS, "boxes": boxes})
        inst.write_json(inst.gt / "render.json", {"scale": SCALE})
        selects = [(2.0, 12.0), (15.0, 25.0), (28.0, 38.0)]
        (inst.workdir / "input").mkdir(parents=True, exist_ok=True)
        (inst.workdir / "input/selects.txt").write_text("".join(f"{a:.2f} {b:.2f}\n" for a, b in selects))
        captions = ["HEAT THE PAN", "ADD SOME OIL", "SLICE THE GARLIC", "STIR IT GENTLY", "ADD THE HERBS",
                    "SERVE IT HOT"]
        (inst.workdir / "input/transcript.txt").write_text("".join(c + "\n" for c in captions))
        cap_s = 30.0 / len(captions)

        def render(sel=selects, follow=True, size=(180, 320), drop_caption=None, hands_out_s=(), texts=captions):
            """`hands_out_s`: output times (s) whose frames (± 0.2 s, one 1-s sample) crop the source
            with the hands just outside the strip; `texts`: the captions burned in, in order."""
            out = []
            crop_w = round(h * 9 / 16)
            for a, b in sel:
                for i in range(round(a * FPS), round(b * FPS)):
                    f = frames[i]
                    if size[0] > size[1]:
                        g = f
                    elif any(abs(len(out) / FPS - t) <= 0.2 for t in hands_out_s):
                        bx = boxes[i][0]  # the strip beside the hands, 4 px clear of them
                        x0 = bx + 34 if bx + 34 + crop_w <= w else bx - 4 - crop_w
                        g = f[:, x0:x0 + crop_w]
                    else:
                        cx = boxes[i][0] + 15 if follow else w // 2
                        x0 = int(np.clip(cx - crop_w // 2, 0, w - crop_w))
                        g = f[:, x0:x0 + crop_w]
                    g = resize(g, *size)
                    c = int(len(out) / FPS // cap_s)
                    if c != drop_caption and c < len(texts):
                        g = burn_text(g, texts[c], y_px=size[1] - 60, scale=0.45, thickness=1)
                    out.append(g)
            return out

        write_video(inst.oracle / OUTPUT, render(), FPS)
        register_video_cases(inst, OUTPUT, "fixtures/cooking_16x9.mp4", profiles=CHEAP_EXPORTS + AT_2997, baselines=CHEAP_BASELINES)
        write_video(inst.mutant("landscape_export", [N.format_duration, N.subject_in_frame],
                                "exported 16:9 instead of 9:16 (no reframe: the hands are not kept in one)") / OUTPUT,
                    render(size=(320, 180)), FPS)
        wrong = [selects[0], (5.0, 15.0), selects[2]]
        write_video(inst.mutant("wrong_select", [N.correct_segments], "second segment cut from 5-15 s") / OUTPUT,
                    render(sel=wrong), FPS)
        write_video(inst.mutant("static_centre_crop", [N.subject_in_frame], "centre crop, hands leave the frame")
                    / OUTPUT, render(follow=False), FPS)
        write_video(inst.mutant("caption_missing", [N.captions], "the fourth caption never appears") / OUTPUT,
                    render(drop_caption=3), FPS)
        # near misses at the seed's pass lines (issue 21): 28-32 s, hands in >= 95 % of the samples
        # (27 judged 1-s samples at 28.2 s, 28 at 30 s: one sample off is 96 %, two 93 %), WER <= 5 %
        # (18 words: one wrong word is 5.6 %, so the inside side of captions is the oracle itself)
        short_s = {k: [*selects[:2], (selects[2][0], selects[2][0] + k - 20.0)] for k in (28.2, 27.8)}  # 2 x 10 s + the rest
        write_video(inst.mutant("near_miss_inside", [], "28.2 s long (28-32) with the hands off the strip on one "
                                "1-s sample of 27 (96 % >= 95 %)") / OUTPUT,
                    render(sel=short_s[28.2], hands_out_s=(5.0,)), FPS)
        write_video(inst.mutant("near_miss_27_8_s", [N.format_duration], "27.8 s long: under the 28 s line") / OUTPUT,
                    render(sel=short_s[27.8]), FPS)
        write_video(inst.mutant("near_miss_hands_two_samples", [N.subject_in_frame],
                                "hands off the strip on two 1-s samples of 28 (93 % < 95 %)") / OUTPUT,
                    render(hands_out_s=(5.0, 15.0)), FPS)
        write_video(inst.mutant("near_miss_one_word", [N.captions], "one caption word wrong (HEAT THE POT): "
                                "WER 1/18 = 5.6 % > 5 %") / OUTPUT,
                    render(texts=["HEAT THE POT", *captions[1:]]), FPS)
