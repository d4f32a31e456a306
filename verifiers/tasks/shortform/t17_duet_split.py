"""R06.04.01.04-T17: 50/50 vertical split-screen duet (teacher top, student bottom), synced on a clap.

Work dir: fixtures/teacher.mp4, fixtures/student.mp4 (each with its own audio and one clap).
Output: device/Photos/duet.mp4 (pulled from the phone). GT: gt/claps.json = clap time in each
source ({"teacher_clap_s", "student_clap_s"}); gt/render.json = instance scale (synthetic only).
Sync is judged from the picture (which source moment each half shows), audio from cross-correlation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import signal

from verifiers.base import AgentOutputError
from verifiers.checks import Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.audio_io import load_audio
from verifiers.measure.errors import MediaError
from verifiers.measure.frames import iter_frames
from verifiers.params import NoParams
from verifiers.paramtypes.shortform import SplitLayout, SyncFrames
from verifiers.synth import InstanceWriter
from verifiers.synthkit.shortform_video import clip_frames, resize, write_video
from verifiers.tasks.shortform._shared.audio_match import best_corr
from verifiers.tasks.shortform._shared.cases import REACTION, register_video_cases
from verifiers.tasks.shortform._shared.clips import ClipMatcher
from verifiers.tasks.shortform._shared.export import ExportTask, instance_scale, size_ok

TASK = "R06.04.01.04-T17"


class ClapsFile(GTFile, file="claps.json", task=TASK):
    """gt/claps.json: the sync clap's time in each source clip."""

    teacher_clap_s: float = gt_field(doc="the clap in fixtures/teacher.mp4")
    student_clap_s: float = gt_field(doc="the clap in fixtures/student.mp4")
N = check_names(TASK)
OUTPUT = "device/Photos/duet.mp4"
FPS = 24.0
SR_HZ = 48_000
SCALE = 1 / 6
BLACK_LEVEL = 12  # mean row value at or below this is a black bar
MIN_AUDIO_CORR = 0.3


@dataclass(frozen=True)
class Halves:
    """Per sampled output frame: the source each half shows (top, bottom), each visible source's
    time offset (source time - output time, from whichever half shows it), black-row shares."""

    labels: list[tuple[str | None, str | None]]
    offsets: list[dict[str, float]]
    black_rows: list[float]

    @property
    def n(self) -> int:
        return len(self.labels)

    def consistent(self, tol_s: float) -> list[dict[str, bool]]:
        """Per frame and source: shown at that source's common offset (within tol_s of its median):
        the source plays along. A still frame repeated shows the right halves but its offsets drift
        a second per second."""
        med = {src: np.median([o[src] for o in self.offsets if src in o] or [np.nan]) for src in HALVES}
        return [{src: src in o and abs(o[src] - med[src]) <= tol_s for src in HALVES} for o in self.offsets]


HALVES = ("teacher", "student")
SAMPLE_S = 0.5
# a sample plays along when its offset is within half a sampling interval of the median: a frozen
# source's offsets step SAMPLE_S per sample, while a shrunken (letterboxed) half is matched a few
# frames off (sync itself is judged on the median, to the frame)
PLAY_TOL_S = SAMPLE_S / 2


def strip_bars(rgb: np.ndarray) -> np.ndarray:
    """The picture inside a half's black bars (outer rows and columns at or below BLACK_LEVEL): a
    half fitted with bars shows its whole source frame, smaller, and is identified on that (the bars
    are judged by split_layout's black-row share; at seed 7 the bordered half matched no source)."""
    rows, cols = rgb.mean(axis=(1, 2)) > BLACK_LEVEL, rgb.mean(axis=(0, 2)) > BLACK_LEVEL
    if not rows.any() or not cols.any():
        return rgb
    r, c = np.flatnonzero(rows), np.flatnonzero(cols)
    return rgb[r[0]:r[-1] + 1, c[0]:c[-1] + 1]


def read_halves(path: Path, matcher: ClipMatcher) -> Halves:
    labels, offsets, black_rows = [], [], []
    for fr in iter_frames(path, every_s=SAMPLE_S):
        hgt = fr.rgb.shape[0]
        rows = fr.rgb.mean(axis=(1, 2))
        black_rows.append(float(np.mean(rows <= BLACK_LEVEL)))
        top, bottom = fr.rgb[: hgt // 2], fr.rgb[hgt // 2:]
        lt, st, _, _ = matcher.identify(strip_bars(top))
        lb, sb, _, _ = matcher.identify(strip_bars(bottom))
        labels.append((lt, lb))
        offsets.append({**({lt: st - fr.t_s} if lt else {}), **({lb: sb - fr.t_s} if lb else {})})
    return Halves(labels, offsets, black_rows)


class DuetSplit(ExportTask, output=OUTPUT):
    task_id = TASK

    @provides
    def srcs(self) -> dict[str, Path]:
        return {"teacher": self.ctx.input("fixtures/teacher.mp4"), "student": self.ctx.input("fixtures/student.mp4")}

    @provides
    def halves(self) -> Halves:
        # each half is a slot of width x height/2: a source of another shape fills it cropped
        facts = self.export.facts
        half_aspect = facts["width_px"] / max(1.0, facts["height_px"] / 2)
        matcher = ClipMatcher(self.srcs, fill_aspect=half_aspect)
        return read_halves(self.export.path, matcher)

    @property
    def fps(self) -> float:
        return self.export.facts["fps"] or FPS

    @provides
    def consistent(self) -> list[dict[str, bool]]:
        return self.halves.consistent(PLAY_TOL_S)

    @provides
    def offsets_s(self) -> tuple[float, float]:
        """Median (teacher, student) offsets over the samples where each plays along; a source that
        does so in under half the samples (missing, frozen) leaves nothing to sync or mix."""
        hv, ok = self.halves, self.consistent
        out = []
        for src in HALVES:
            good = [o[src] for o, c in zip(hv.offsets, ok, strict=True) if c[src]]
            if len(good) < max(1, hv.n / 2):
                raise AgentOutputError(f"the {src} plays in only {len(good)}/{hv.n} samples (missing or frozen)")
            out.append(float(np.median(good)))
        return out[0], out[1]

    @check(N.split_layout)
    def split_layout(self, p: SplitLayout, curve: Curve) -> Result:
        hv, facts = self.halves, self.export.facts
        # the halves must play: both sources along their common offset in at least half the samples
        # (a frozen lead-in or tail-out while the other source plays is a way to align; a still
        # frame repeated is no duet); then every sample with teacher over student counts
        playing = sum(all(c.values()) for c in self.consistent) >= hv.n / 2
        right = sum(lab == HALVES for lab in hv.labels) if playing else 0
        black_pct = 100 * max(hv.black_rows) if hv.black_rows else 100.0
        layout_ok = size_ok(facts, list(p.size_px), instance_scale(self.ctx)) and black_pct <= p.max_black_rows_pct
        return Result(curve.count(right, hv.n) if layout_ok else 0.0,
                      {**facts, "halves_right": f"{right}/{hv.n}", "black_rows_pct": black_pct},
                      f"{right}/{hv.n} frames teacher-top/student-bottom" + ("" if playing else " (the halves do not play)")
                      + f"; black rows {black_pct:.1f}%")

    @check(N.sync_on_clap)
    def sync_on_clap(self, p: SyncFrames, curve: Curve) -> Result:
        claps = self.ctx.gt_typed(ClapsFile)
        fps = self.fps
        tol_s = p.tolerance_frames / fps + 1e-6
        off_t, off_s = self.offsets_s
        clap_out_t, clap_out_s = claps.teacher_clap_s - off_t, claps.student_clap_s - off_s
        err = abs(clap_out_t - clap_out_s)
        return Result(curve.passes(err <= tol_s),
                      {"teacher_clap_out_s": clap_out_t, "student_clap_out_s": clap_out_s, "error_s": err},
                      f"claps {err * fps:.1f} frames apart")

    @check(N.both_audio)
    def both_audio(self, p: NoParams, curve: Curve) -> Result:
        off_t, off_s = self.offsets_s
        try:
            out = load_audio(self.export.path, sample_rate_hz=SR_HZ).mono
            t = load_audio(self.srcs["teacher"], sample_rate_hz=SR_HZ).mono
            s = load_audio(self.srcs["student"], sample_rate_hz=SR_HZ).mono
        except MediaError as exc:
            return Result.fail(f"no usable audio: {exc}")
        ct, cs = best_corr(out, t, off_t, SR_HZ), best_corr(out, s, off_s, SR_HZ)
        return Result(curve.passes(min(ct, cs) >= MIN_AUDIO_CORR), {"corr_teacher": ct, "corr_student": cs},
                      f"correlation teacher {ct:.2f}, student {cs:.2f} (need ≥ {MIN_AUDIO_CORR})")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        w, h = 180, 160
        dur_s = 5.0
        n = int(dur_s * FPS)
        claps = {"teacher_clap_s": 1.5, "student_clap_s": 2.25}

        def voice(seed: int, clap_s: float) -> np.ndarray:
            r = np.random.default_rng(seed)
            x = r.standard_normal(int(dur_s * SR_HZ)) * 0.05
            env = np.repeat(r.uniform(0.2, 1.0, int(dur_s * 8)), SR_HZ // 8)[: len(x)]
            x = signal.lfilter(*signal.butter(2, [300 / 24000, 3000 / 24000], "band"), x) * env
            i = int(clap_s * SR_HZ)
            x[i:i + 1200] += 0.8 * np.exp(-np.arange(1200) / 150) * r.standard_normal(1200)
            return x.astype(np.float32)

        video = {"teacher": clip_frames(int(rng.integers(1 << 30)), n, w, h, FPS),
                 "student": clip_frames(int(rng.integers(1 << 30)), n, w, h, FPS)}
        audio = {"teacher": voice(int(rng.integers(1 << 30)), claps["teacher_clap_s"]),
                 "student": voice(int(rng.integers(1 << 30)), claps["student_clap_s"])}
        for k in video:
            write_video(inst.workdir / f"fixtures/{k}.mp4", video[k], FPS, audio=audio[k], sample_rate_hz=SR_HZ)
        inst.write_json(inst.gt / "claps.json", claps)
        inst.write_json(inst.gt / "render.json", {"scale": SCALE})
        lead = round((claps["student_clap_s"] - claps["teacher_clap_s"]) * FPS)  # student frames to skip

        def render(extra_frames=0, swap=False, bars=False, student_audio=True):
            skip = lead + extra_frames
            frames = []
            out_n = n - skip
            for i in range(out_n):
                top, bot = video["teacher"][i], video["student"][i + skip]
                if swap:
                    top, bot = bot, top
                if bars:
                    top = np.pad(resize(top, 150, 134), ((13, 13), (15, 15), (0, 0)))
                    bot = np.pad(resize(bot, 150, 134), ((13, 13), (15, 15), (0, 0)))
                frames.append(np.vstack([top, bot]))
            a = audio["teacher"][: int(out_n / FPS * SR_HZ)].copy()
            if student_audio:
                s = audio["student"][int(skip / FPS * SR_HZ):]
                a[: len(s)] += s[: len(a)]
            return frames, a

        def solve(folder, **kw):
            frames, a = render(**kw)
            write_video(folder / OUTPUT, frames, FPS, audio=a, sample_rate_hz=SR_HZ)

        solve(inst.oracle)
        register_video_cases(inst, OUTPUT, "fixtures/teacher.mp4", other=REACTION)
        solve(inst.mutant("halves_swapped", [N.split_layout], "student on top"), swap=True)
        solve(inst.mutant("letterboxed", [N.split_layout], "halves fit with black bars instead of filled"), bars=True)
        solve(inst.mutant("student_4_frames_late", [N.sync_on_clap], "student's clap 4 frames after the teacher's"),
              extra_frames=-4)
        solve(inst.mutant("student_muted", [N.both_audio], "student's audio track dropped"), student_audio=False)

