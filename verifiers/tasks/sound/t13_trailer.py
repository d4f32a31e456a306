"""R06.07.01.03-T13: spot and design sound for a trailer: hits on the red cuts, risers into hits,
a braam on the title card, a 1 s silence beat before the final hit.

Work dir: fixtures/trailer_60s.mov (placeholder), notes/trailer_notes.txt. Outputs:
output/trailer_sfx.wav and output/session/ (the DAW session; no check reads it, its presence is
reported). GT: gt/trailer.json {fps, cut_frames, riser_targets (indices into cut_frames),
title_frame, final_hit_frame}.

The sounds are the agent's own design (no library), so timing comes from onsets (12 dB over the local floor),
read in the full band and below/above 2 kHz (a hit lands on the top of its riser, which masks it in
the band the riser fills). hit_sync: an onset within ±1 frame of each red cut (per hit).
risers: per target, the per-frame RMS over the 3 s before the hit peaks within 2 frames of it (half)
and rises over the last 2 s (Spearman >= 0.8 and >= 10 dB; half). braam_silence: an onset within ±1
frame of the title frame followed by low-frequency sound (power centroid of the next 0.5 s < 500 Hz)
(half); the 1 s before the final hit stays <= -50 dBFS (every 50 ms RMS; half). peaks: true peak
(verifiers.measure.truepeak) <= -1 dBTP. design_rubric: recorded human judgments only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import spearmanr

from verifiers.base import ScoreContext
from verifiers.checks import CheckedTask, Result, check, check_names, loads, provides
from verifiers.curves import Curve
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.audio_io import Audio
from verifiers.measure.levels import frame_rms
from verifiers.measure.onsets import detect_onsets_by_band
from verifiers.measure.spectral import long_term_centroid_hz
from verifiers.measure.truepeak import true_peak_dbtp
from verifiers.params import NoParams
from verifiers.paramtypes.sound import BraamSilence, HitSync, Risers, TruePeak
from verifiers.rubric import rubric_result
from verifiers.synth import InstanceWriter
from verifiers.synthcases import audio_cases
from verifiers.synthkit import sfx
from verifiers.tasks.sound._shared.render_files import (
    RATE_HZ,
    load_output,
    rubric_event,
    truncate_file,
    write_wav,
)

TASK = "R06.07.01.03-T13"
N = check_names(TASK)
OUTPUT = "output/trailer_sfx.wav"
SESSION = "output/session"
FPS = 24
#: an onset rises this far over its band's local floor. It was 6 dB so that a hit on the top of its riser
#: fired in the full band, and then the drone bed's own 10 ms wiggles fired too (110-160 onsets in a
#: 24 s oracle; seed 5's hit 2 frames late read in sync on one). With the bands split every hit rises
#: >= 12 dB in a band of its own and the drone no longer fires (25-36 onsets on seeds 0-13)
ONSET_DB = 12.0
#: onsets are read in the full band and below/above this split: a hit's low thump landing on the top of
#: a riser swept to 8 kHz rises 4.6 dB in the full band (seed 0, hit 3) and 14 dB below the split
ONSET_SPLIT_HZ = 2000.0
BRAAM_MAX_CENTROID_HZ = 500.0


@dataclass(frozen=True)
class TrailerGT:
    fps: float
    cuts: list[int]  # the red cut frames
    targets: list[int]  # indices into cuts a riser lands on
    title: int
    final: int


class TrailerFile(GTFile, file="trailer.json", task=TASK):
    """gt/trailer.json: the trailer's cuts, where risers land, the title and the final hit."""

    fps: float = gt_field(doc="picture frame rate")
    cut_frames: list[int] = gt_field(doc="the red cut frames")
    riser_targets: list[int] = gt_field(doc="indices into cut_frames a riser lands on")
    title_frame: int = gt_field(doc="frame of the title card (the braam's silence)")
    final_hit_frame: int = gt_field(doc="frame of the final hit")

    def validate(self) -> None:
        self.expect(self.fps > 0, "fps", "must be > 0")
        self.expect(all(0 <= i < len(self.cut_frames) for i in self.riser_targets), "riser_targets",
                    "every target must index cut_frames")


@dataclass(frozen=True)
class TrailerRender:
    audio: Audio
    x: np.ndarray  # at RATE_HZ
    onsets_s: np.ndarray
    session: bool  # output/session/ delivered (evidence only)

    @property
    def mono(self) -> np.ndarray:
        return self.x.mean(axis=1)


def load_trailer_gt(ctx: ScoreContext) -> TrailerGT:
    gt = ctx.gt_typed(TrailerFile)  # a missing key, a wrong type or a broken rule: GTError naming it
    return TrailerGT(gt.fps, gt.cut_frames, gt.riser_targets, gt.title_frame, gt.final_hit_frame)


def load_trailer(ctx: ScoreContext) -> TrailerRender:
    audio, x = load_output(ctx, OUTPUT, RATE_HZ)
    onsets = np.array([o.time_s for o in detect_onsets_by_band(x.mean(axis=1), RATE_HZ, split_hz=ONSET_SPLIT_HZ,
                                                               threshold_db=ONSET_DB)])
    return TrailerRender(audio, x, onsets, (ctx.workdir / SESSION).is_dir() and any((ctx.workdir / SESSION).iterdir()))


def nearest_err(onsets_s: np.ndarray, frame: int, fps: float) -> float | None:
    """Frames from `frame` to the nearest onset (signed), None without onsets."""
    if not len(onsets_s):
        return None
    e = (onsets_s - frame / fps) * fps
    return float(e[int(np.argmin(np.abs(e)))])


PEAK_FLAT_DB = 1.0


def riser_score(env: np.ndarray, c: int, fps: float, p: Risers) -> tuple[float, dict]:
    """Half for the level peak within tolerance before hit frame c, half for a >= 10 dB monotonic rise."""
    lo = max(0, c - round(3 * fps))
    pre = env[lo:c]
    if len(pre) < p.min_rise_s * fps:
        return 0.0, {"target_frame": c, "ok": False}
    # the riser's top is its last frame within PEAK_FLAT_DB of the loudest: a swell is flat near its top
    # (the last 3 frames of a (t/T)² envelope within 0.5 dB) and a frame's RMS of band noise varies by
    # ±0.25 dB, so the loudest frame alone wandered 2 frames early on the oracle (seed 5); a flat window
    # (silence, steady noise: every frame "on top") has no peak, the top must stand above the level
    # min_rise_s earlier by more than that margin
    peak_f = lo + int(np.nonzero(pre >= pre.max() - PEAK_FLAT_DB)[0][-1])
    last = env[c - round(p.min_rise_s * fps): c]
    rho = float(spearmanr(np.arange(len(last)), last).statistic) if np.std(last) > 0 else 0.0
    gain = float(last[-3:].mean() - last[:3].mean())
    peak_ok = c - peak_f <= p.tolerance_frames and gain > PEAK_FLAT_DB
    rising = rho >= 0.8 and gain >= 10
    return 0.5 * peak_ok + 0.5 * rising, {"target_frame": c, "peak_frame": peak_f, "spearman": round(rho, 3),
                                          "rise_db": round(gain, 1)}


BEAT_GUARD_S = 0.01
#: a hit is "there" (for the shares that reward restraint: silence beat, true peak) within this many
#: frames of its cut; the seed's ±1 frame stays hit_sync's line
HIT_PRESENT_FRAMES = 6


def beat_max_dbfs(mono: np.ndarray, final: int, fps: float, silence_s: float) -> float:
    """Loudest 50 ms window in the silence beat before the final hit, BEAT_GUARD_S in from each end
    (a DAW's 2 ms plugin latency or a 5 ms fade at the beat's edges is not sound in the beat)."""
    beat = mono[max(0, round((final / fps - silence_s + BEAT_GUARD_S) * RATE_HZ)):
                round((final / fps - BEAT_GUARD_S) * RATE_HZ)]
    w = RATE_HZ // 20
    k = len(beat) // w
    rms_db = 10 * np.log10(np.maximum((beat[: k * w].reshape(k, w) ** 2).mean(axis=1), 1e-20)) if k else np.array([0.0])
    return float(rms_db.max())


class TrailerDesign(CheckedTask):
    task_id = TASK

    gt = loads(load_trailer_gt)
    render = loads(load_trailer, after=("gt",))  # a malformed GT is reported before the render

    @check(N.hit_sync)
    def hit_sync(self, p: HitSync, curve: Curve) -> Result:
        gt, r, tol = self.gt, self.render, p.tolerance_frames
        errs = [nearest_err(r.onsets_s, c, gt.fps) for c in gt.cuts]
        ok = sum(e is not None and abs(e) <= tol + 1e-9 for e in errs)
        return Result(curve.count(ok, len(gt.cuts)), {"error_frames": [None if e is None else round(e, 2) for e in errs],
                                                      "session_delivered": r.session},
                      f"{ok}/{len(gt.cuts)} hits within ±{tol:g} frame of the red cuts")

    @check(N.risers)
    def risers(self, p: Risers, curve: Curve) -> Result:
        gt = self.gt
        env = 20 * np.log10(np.maximum(frame_rms(self.render.mono, RATE_HZ, gt.fps), 1e-10))
        scores, per = [], []
        for i in gt.targets:  # each an index of gt.cuts (TrailerFile.validate)
            sc, ev = riser_score(env, gt.cuts[i], gt.fps, p)
            scores.append(sc)
            per.append(ev)
        total = sum(scores)
        return Result(curve.count(scores, max(len(gt.targets), 1)), {"risers": per},
                      f"{total:.1f}/{len(gt.targets)} risers peak on their hit and rise for {p.min_rise_s:g} s")

    @check(N.braam_silence)
    def braam_silence(self, p: BraamSilence, curve: Curve) -> Result:
        gt, mono = self.gt, self.render.mono
        tol = self.task.check(N.hit_sync).typed.tolerance_frames
        e = nearest_err(self.render.onsets_s, gt.title, gt.fps)
        a = round(gt.title / gt.fps * RATE_HZ)
        cen = long_term_centroid_hz(mono[a: a + RATE_HZ // 2], RATE_HZ) if a + 1000 < len(mono) else float("inf")
        braam_ok = e is not None and abs(e) <= tol + 1e-9 and cen < BRAAM_MAX_CENTROID_HZ
        beat_db, lim = beat_max_dbfs(mono, gt.final, gt.fps, p.silence_s), p.silence_max_dbfs
        # the silence half pays in proportion to the hits present (issue 21: a silent file kept it)
        return Result(0.5 * curve.count([braam_ok]) + 0.5 * self.hits_present * curve.count([beat_db <= lim]),
                      {"title_onset_error_frames": None if e is None else round(e, 2), "braam_centroid_hz": round(cen, 1),
                       "beat_max_dbfs": round(beat_db, 1)},
                      f"braam {'on' if braam_ok else 'not on'} the title; beat max {beat_db:.1f} dBFS (<= {lim:g})")

    @check(N.peaks)
    def peaks(self, p: TruePeak, curve: Curve) -> Result:
        audio, x = self.render.audio, self.render.x
        tp = max(true_peak_dbtp(x, RATE_HZ)) if audio.sample_rate_hz == RATE_HZ else max(
            true_peak_dbtp(audio.samples, audio.sample_rate_hz))
        mx = p.max_true_peak_dbtp
        # headroom pays in proportion to the hits present (issue 21: silence or quiet noise kept it)
        return Result(self.hits_present * curve.passes(tp <= mx),
                      {"true_peak_dbtp": round(tp, 2), "hits_present_share": round(self.hits_present, 3)},
                      f"true peak {tp:.2f} dBTP (max {mx:g}); {self.hits_present:.0%} of the hits present")

    @provides
    def hits_present(self) -> float:
        """Share of the cuts with an onset within HIT_PRESENT_FRAMES: the trailer design is there at all."""
        gt = self.gt
        errs = [nearest_err(self.render.onsets_s, c, gt.fps) for c in gt.cuts]
        return sum(e is not None and abs(e) <= HIT_PRESENT_FRAMES for e in errs) / max(len(gt.cuts), 1)

    @check(N.design_rubric)
    def design_rubric(self, p: NoParams, curve: Curve) -> Result:
        self.render  # noqa: B018  an unusable render fails the rubric too, as before
        return rubric_result(self.ctx, N.design_rubric)

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        cuts, f = [], 24
        for k in range(8):
            f += int(rng.integers(30, 44)) + (60 if k in (2, 4, 5) else 0) + (36 if k == 7 else 0)
            cuts.append(f)
        targets = [2, 4, 5]  # risers into hits 3, 5 and 6 (the final hit follows the silence beat)
        title = cuts[6] + 14
        final = cuts[7]
        inst.write_json(inst.gt / "trailer.json", {"fps": FPS, "cut_frames": cuts, "riser_targets": targets,
                                                   "title_frame": title, "final_hit_frame": final})
        (inst.workdir / "fixtures").mkdir(parents=True, exist_ok=True)
        (inst.workdir / "fixtures" / "trailer_60s.mov").write_bytes(b"placeholder: trailer picture, red-flagged cuts\n")
        (inst.workdir / "notes").mkdir(parents=True, exist_ok=True)
        (inst.workdir / "notes" / "trailer_notes.txt").write_text(
            "Impacts on every hard cut flagged red. Three risers, each landing exactly on a hit.\n"
            "A braam on the title card. A 1 s silence beat before the final hit. Deliver the session too.\n")
        (inst.workdir / "output").mkdir(parents=True, exist_ok=True)
        total = round((final / FPS + 3.0) * RATE_HZ)
        hits = [sfx.impact(rng, dur_s=0.9, body_hz=45 + 5 * k, peak=0.5) for k in range(len(cuts))]
        # risers 3 dB under the hits: at peak 0.25 the bed masked the start of their last 2 s (rise 9.7 dB
        # of the 10 dB line on seed 13's oracle)
        risers = [sfx.riser(rng, 3.0, peak=0.35) for _ in targets]
        boom = sfx.braam(rng, 2.0)
        drone = sfx.bed(rng, total, 40, 600, -36, tilt_db_oct=-6)

        def render(folder, *, late: dict[int, float] | None = None, riser_early: int = 0, beat: bool = True,
                   gain_db: float = 0.0, run: bool = True) -> None:
            items = [(round((c + (late or {}).get(k, 0)) / FPS * RATE_HZ), h) for k, (c, h) in enumerate(zip(cuts, hits,
                                                                                                        strict=True))]
            for j, (i, r) in enumerate(zip(targets, risers, strict=True)):
                end = round((cuts[i] - (riser_early if j == 0 else 0)) / FPS * RATE_HZ)
                items.append((end - len(r), r))
            items.append((round(title / FPS * RATE_HZ), boom))
            mix = sfx.place(total, 1, items)[:, 0]
            d = drone.copy()
            if beat:  # the beat: everything stops 1 s before the final hit
                a, b = round((final / FPS - 1.0) * RATE_HZ), round(final / FPS * RATE_HZ)
                d[a:b] = 0.0
                mix[a:b] = 0.0
            mix = mix + d
            peak = np.max(np.abs(mix))
            mix = mix * (10 ** (-3 / 20) / peak) * 10 ** (gain_db / 20)
            write_wav(folder / OUTPUT, np.stack([mix, mix], axis=1), subtype="FLOAT")
            (folder / SESSION).mkdir(parents=True, exist_ok=True)
            (folder / SESSION / "trailer.RPP").write_text("<REAPER_PROJECT 0.1\n>\n")
            if run:
                inst.write_events(folder, [rubric_event(N.design_rubric, 1.0)])

        render(inst.oracle)
        audio_cases(inst, OUTPUT, envelope=False, other=("R06.07.01.03-T02", "output/passby.wav"))
        render(inst.mutant("two_hits_2_frames_late", [N.hit_sync], "two hits 2 frames after their cuts"),
               late={0: 2, 4: 2})
        # near misses at the seed's ±1 frame: the same 2 hits 0.75 frame off (inside: lowers nothing) and 1.25
        # (outside); a quarter frame is ~10 ms, ten times the onset detector's refinement
        for d, lowers in ((0.75, []), (1.25, [N.hit_sync])):
            render(inst.mutant(f"two_hits_{d:g}_frames_late".replace(".", "_"), lowers,
                               f"two hits {d:g} frame after their cuts (seed ±1)"), late={0: d, 4: d})
        render(inst.mutant("riser_lands_early", [N.risers], "first riser ends 8 frames before its hit"),
               riser_early=8)
        render(inst.mutant("no_silence_beat", [N.braam_silence], "drone and tail run through the beat"), beat=False)
        render(inst.mutant("hot_master", [N.peaks], "normalised to -0.1 dBFS sample peak"), gain_db=2.9)
        render(inst.mutant("no_rubric_judgment", [N.design_rubric], "no human rubric recorded: cannot judge"),
               run=False)
        m = inst.mutant("truncated_wav", list(N),
                        "render cut off (an unusable render earns no rubric credit either)")
        render(m)
        truncate_file(m / OUTPUT)
