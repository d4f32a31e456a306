"""R06.07.01.03-T17: render 8 footstep variations for a game from a Foley session.

Work dir: fixtures/foley_steps.RPP (track STEPS, items over fixtures/media/concrete_take.wav).
Output: output/steps/fs_concrete_01.wav … _08.wav, 48 kHz mono.
GT: gt/steps.json {take_onsets_s: [...]} documents the raw take; the checks need only the catalog
params, since any 8 distinct steps of the take are a valid answer.

Loudness: the seed asks for "-18 LUFS short-term (max)". A short-term window is 3 s; a footstep
file is a fraction of that, and padding it with silence to 3 s would make -18 LUFS unreachable
without clipping. For a file shorter than 3 s the window is BS.1770's momentary 400 ms (silence after
the end), its loudest position: the step is inside it whatever tail the file keeps, so a longer
natural tail does not change the reading. Files of 3 s or more use the meter's short-term max.
Every file must be a step of the given take (peak normalised correlation >= 0.6 with it, at its own
speed: a varispeeded step, pitched as game variations often are, is still a step of the take): a
silent file or another sound fails all four checks for its unit. "Distinct takes": a pair is not
distinct when its correlation exceeds the seed's 0.9, or when both files are the same moment of the
take at any speed (issue 21: one take varispeeded eight ways correlated < 0.9 pairwise and scored 100). Off-spec files (stereo, 44.1 kHz) fail files_format; the other checks still measure their
content (mono downmix), so one mistake costs one check.
"""

from __future__ import annotations

import math
from itertools import combinations
from pathlib import Path

import numpy as np
from scipy.signal import fftconvolve, resample_poly, sosfilt

from verifiers.base import AgentOutputError, GTError
from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.audio_io import Audio, load_audio
from verifiers.measure.clicks import detect_clicks
from verifiers.measure.derived import VarispeedMatch, varispeed_match
from verifiers.measure.errors import MediaError
from verifiers.measure.loudness import k_weighting_sos, measure_loudness
from verifiers.paramtypes.sound import DistinctClean, FilesFormat, StepLoudness, Trims
from verifiers.synth import InstanceWriter
from verifiers.synthkit import sfx
from verifiers.tasks.sound._shared.render_files import RATE_HZ, load_named_audio, write_wav

TASK = "R06.07.01.03-T17"
N = check_names(TASK)
OUT_DIR = "output/steps"
NAMES = [f"fs_concrete_{k:02d}.wav" for k in range(1, 9)]
TAIL_MS = 10.0
TAIL_MAX_DBFS = -50.0
SHORT_TERM_S = 3.0
#: a step's loudness window (BS.1770's momentary 400 ms, silence after the file's end): the window
#: holds the step whatever tail the file keeps (issue 21: "the window is the file" cost takes with a
#: longer natural tail the loudness share)
STEP_WINDOW_S = 0.4
ONSET_RE_PEAK_DB = -30.0
TAKE = "fixtures/media/concrete_take.wav"
#: a file cut from the take (trimmed, faded, gained) correlates ≈ 1 with it; 0.6 is identify.py's
#: confident match on real material (resampled, lossy), silence or another sound stays far below
MIN_TAKE_NCC = 0.6
#: two files whose first sounds come from take times this close are the same step: the located
#: times are sample-exact for a cut (±0.25 ms for a varispeed, 0.02 % speed grid over a 0.1 s attack),
#: and steps on a take are ≥ 0.25 s apart even running
SAME_STEP_S = 0.02


def short_term_max_lufs(mono: np.ndarray, rate_hz: int) -> float:
    """Short-term max; for a file shorter than 3 s, the loudest 400 ms window (see module doc)."""
    if len(mono) >= SHORT_TERM_S * rate_hz:
        return float(measure_loudness(mono, rate_hz).max_short_term_lufs)
    win = round(STEP_WINDOW_S * rate_hz)
    kw = sosfilt(k_weighting_sos(rate_hz), np.concatenate([mono, np.zeros(win)])) ** 2
    c = np.concatenate([[0.0], np.cumsum(kw)])
    ends = np.arange(win, len(c), max(1, rate_hz // 100))  # 10 ms hop
    ms = float(np.max(c[ends] - c[ends - win]) / win)
    return -0.691 + 10 * math.log10(ms) if ms > 0 else -math.inf


def first_sound_ms(mono: np.ndarray, rate_hz: int) -> float | None:
    """Where the step starts: first sample within ONSET_RE_PEAK_DB of the file's peak.

    The onset detector needs a floor before the rise; a well-trimmed file has none, so the
    start is taken from the level instead (room tone sits far below -30 dB re peak).
    """
    peak = float(np.max(np.abs(mono)))
    if peak <= 0:
        return None
    k = int(np.argmax(np.abs(mono) >= peak * 10 ** (ONSET_RE_PEAK_DB / 20)))
    return k / rate_hz * 1000


def max_xcorr(a: np.ndarray, b: np.ndarray) -> float:
    """Peak of the normalised cross-correlation over all lags (1.0: the same take)."""
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0 or nb == 0:
        return 0.0
    return float(np.max(np.abs(fftconvolve(a, b[::-1], mode="full"))) / (na * nb))


def load_steps(folder: Path) -> tuple[dict[str, Audio | None], dict[str, str]]:
    """(each expected file as read or None, why it could not be read)."""
    files: dict[str, Audio | None] = {}
    problems: dict[str, str] = {}
    for name in NAMES:
        try:
            files[name] = load_named_audio(folder / name)
        except MediaError as exc:
            files[name] = None
            problems[name] = str(exc)
    return files, problems


def trim_of(mono: np.ndarray, rate_hz: int, max_onset_ms: float) -> dict:
    """Onset near the file start and a tail faded below TAIL_MAX_DBFS."""
    onset_ms = first_sound_ms(mono, rate_hz)
    tail = mono[-max(1, round(TAIL_MS / 1000 * rate_hz)):]
    tail_db = 10 * math.log10(max(float(np.mean(tail ** 2)), 1e-20))
    ok = onset_ms is not None and onset_ms <= max_onset_ms and tail_db <= TAIL_MAX_DBFS
    return {"onset_ms": None if onset_ms is None else round(onset_ms, 2), "tail_dbfs": round(tail_db, 1), "ok": ok}


class StepsFile(GTFile, file="steps.json", task=TASK):
    """gt/steps.json: where the raw take's steps start. Documentation of the instance: the checks need
    only the take and the catalog's params (each delivered file is found in the take by itself)."""

    take_onsets_s: list[float] = gt_field(doc="onset of each step in fixtures/media/concrete_take.wav")


class FootstepVariations(CheckedTask):
    task_id = TASK

    @provides
    def files(self) -> tuple[dict[str, Audio | None], dict[str, str]]:
        folder = self.ctx.workdir / OUT_DIR
        if not folder.is_dir():
            raise AgentOutputError(f"artifact missing: {OUT_DIR}/")
        return load_steps(folder)

    @provides
    def take(self) -> np.ndarray:
        try:
            return load_audio(self.ctx.input(TAKE), sample_rate_hz=RATE_HZ).mono
        except MediaError as exc:
            raise GTError(f"the concrete take is unreadable: {exc}") from None

    @provides
    def at48(self) -> dict[str, np.ndarray]:
        """Each readable file's mono samples at 48 kHz (the take's rate)."""
        folder = self.ctx.workdir / OUT_DIR
        return {n: (load_named_audio(folder / n, sample_rate_hz=RATE_HZ).mono if a.sample_rate_hz != RATE_HZ else a.mono)
                for n, a in self.files[0].items() if a is not None}

    @provides
    def take_match(self) -> dict[str, VarispeedMatch]:
        """Per readable file, where (and at what speed) it is in the given take, with its peak
        normalised correlation (1: cut from it)."""
        out = {}
        for n, mono in self.at48.items():
            ok = 0 < len(mono) <= len(self.take) and np.any(mono)
            out[n] = (varispeed_match(mono, self.take, RATE_HZ, enough_at_unity=MIN_TAKE_NCC) if ok
                      else VarispeedMatch(0.0, 1.0, 0.0))
        return out

    @provides
    def present(self) -> dict[str, Audio]:
        """Readable files that are steps of the given take (issue 21: eight silent files earned the
        format and 'distinct' shares); a file that is not judged fails every check for its unit."""
        present = {n: a for n, a in self.files[0].items() if a is not None and self.take_match[n].ncc >= MIN_TAKE_NCC}
        if not present:
            raise AgentOutputError(f"no file in {OUT_DIR}/ is a step of {TAKE} (silent or other sounds)")
        return present

    @check(N.files_format)
    def files_format(self, p: FilesFormat, curve: Curve) -> Result:
        files, problems = self.files
        want_rate, want_ch, count = p.sample_rate_hz, p.channels, len(NAMES)
        fmt = {}
        for name, a in files.items():
            if a is None:
                fmt[name] = problems[name]
            elif name not in self.present:
                fmt[name] = f"not a step of the take (correlation {self.take_match[name].ncc:.2f} < {MIN_TAKE_NCC:g})"
            elif a.sample_rate_hz != want_rate or a.channels != want_ch:
                fmt[name] = f"{a.sample_rate_hz} Hz, {a.channels} ch (want {want_rate} Hz, {want_ch} ch)"
        return Result(curve.count(count - len(fmt), count), {"problems": fmt},
                      f"{count - len(fmt)}/{count} files present as {want_ch} ch {want_rate} Hz")

    @check(N.trims)
    def trims(self, p: Trims, curve: Curve) -> Result:
        trims = {n: trim_of(a.mono, a.sample_rate_hz, p.max_onset_ms) for n, a in self.present.items()}
        good = sum(t["ok"] for t in trims.values())
        return Result(curve.count(good, len(NAMES)), {"files": trims, "tail_ms": TAIL_MS, "tail_max_dbfs": TAIL_MAX_DBFS},
                      f"{good}/{len(NAMES)} files start within {p.max_onset_ms:g} ms and fade to silence")

    @check(N.loudness)
    def loudness(self, p: StepLoudness, curve: Curve) -> Result:
        target, tol = p.target_lufs, p.tolerance_lu
        loud = {n: short_term_max_lufs(a.mono, a.sample_rate_hz) for n, a in self.present.items()}
        ok_l = sum(abs(v - target) <= tol + 1e-9 for v in loud.values())
        return Result(curve.count(ok_l, len(NAMES)), {"short_term_max_lufs": {n: round(v, 2) for n, v in loud.items()},
                                                     "target_lufs": target, "tolerance_lu": tol},
                      f"{ok_l}/{len(NAMES)} files at {target:g} ± {tol:g} LUFS")

    @check(N.distinct_clean)
    def distinct_clean(self, p: DistinctClean, curve: Curve) -> Result:
        present, count, max_corr = self.present, len(NAMES), p.max_pairwise_correlation_ratio
        at48 = {n: self.at48[n] for n in present}
        # the take moment each file's step starts at (its first sound, varispeed compensated; not its
        # loudest sample: a file with a long natural tail may run into the next, louder step)
        moment = {n: self.take_match[n].source_time_s((first_sound_ms(x, RATE_HZ) or 0.0) / 1000) for n, x in at48.items()}
        pairs = list(combinations(sorted(at48), 2))
        similar = [(a, b, round(c, 3)) for a, b in pairs if (c := max_xcorr(at48[a], at48[b])) > max_corr]
        same_step = [(a, b, round(moment[a], 3)) for a, b in pairs
                     if abs(moment[a] - moment[b]) <= SAME_STEP_S and not any(s[:2] == (a, b) for s in similar)]
        clicks = {n: [round(c.time_s, 4) for c in detect_clicks(a.mono, a.sample_rate_hz)] for n, a in present.items()}
        clicky = [n for n, c in clicks.items() if c]
        all_pairs = count * (count - 1) // 2
        distinct = curve.part("distinct").count(all_pairs - len(similar) - len(same_step) - (all_pairs - len(pairs)), all_pairs)
        clean = curve.part("clean").count(len(present) - len(clicky), count)
        speeds = {n: round(self.take_match[n].speed, 4) for n in present if self.take_match[n].speed != 1.0}
        return Result(0.5 * distinct + 0.5 * clean, {"too_similar": similar, "same_take_step": same_step,
                                                     "varispeed": speeds, "clicks_s": {n: c for n, c in clicks.items() if c}},
                      f"{len(similar)} pair(s) above {max_corr:g} correlation, {len(same_step)} more the same step of the "
                      f"take at another speed; {len(clicky)} file(s) with clicks")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        from verifiers.apps.reaper import Item, Track, write_rpp

        steps = [sfx.footstep(rng, "concrete", dur_s=0.3, peak=float(rng.uniform(0.2, 0.6))) for _ in range(10)]
        gap = int(0.5 * RATE_HZ)
        take = np.zeros(gap * (len(steps) + 1))
        onsets = []
        for k, s in enumerate(steps):
            at = gap // 2 + k * gap
            take[at: at + len(s)] += s
            onsets.append(at / RATE_HZ)
        take += 10 ** (-70 / 20) * rng.standard_normal(len(take))  # room tone under the raw take
        write_wav(inst.workdir / TAKE, take)
        items = [Item(0.0, len(take) / RATE_HZ, 0.0, "concrete take", "media/concrete_take.wav")]
        write_rpp(inst.workdir / "fixtures/foley_steps.RPP", [Track("STEPS", items=items)])
        (inst.workdir / "output").mkdir(parents=True, exist_ok=True)
        inst.write_json(inst.gt / StepsFile.FILE, StepsFile(take_onsets_s=[round(t, 6) for t in onsets]).to_json())

        def cut(k: int, lead_ms: float = 1.0, fade_ms: float = 20.0, gain_db: float = 0.0,
                length_s: float = 0.3) -> np.ndarray:
            a = round(onsets[k] * RATE_HZ - lead_ms / 1000 * RATE_HZ)
            x = take[a: a + int(length_s * RATE_HZ)].copy()
            nf = round(fade_ms / 1000 * RATE_HZ)
            if nf:
                x[-nf:] *= np.linspace(1, 0, nf) ** 2
            lufs = short_term_max_lufs(x, RATE_HZ)
            return x * 10 ** ((-18.0 + gain_db - lufs) / 20)

        oracle = [cut(k) for k in range(8)]
        for name, x in zip(NAMES, oracle, strict=True):
            write_wav(inst.oracle / OUT_DIR / name, x)

        def mutant(tag: str, lowers: list[str], why: str, change: dict[int, np.ndarray | None],
                   rates: dict[int, int] | None = None) -> None:
            root = inst.mutant(tag, lowers, why)
            for k, name in enumerate(NAMES):
                x = change.get(k, oracle[k])
                if x is not None:
                    write_wav(root / OUT_DIR / name, x, rate=(rates or {}).get(k, RATE_HZ))

        mutant("natural_tails", [], "every take kept 0.8 s long, its natural decay into the room tone then a "
               "20 ms fade: lowers nothing", {k: cut(k, length_s=0.8) for k in range(8)})
        mutant("one_file_silent", list(N), "file 8 is digital silence: not a step of the take, fails each check's unit",
               {7: np.zeros(int(0.3 * RATE_HZ))})
        per_file = [(f"{OUT_DIR}/{n}", f"oracle/{OUT_DIR}/{n}") for n in NAMES]
        for profile in ("daw_48k",):
            inst.export_case(f"wav_{profile}", [(a, f"audio_export:{profile}:{b}") for a, b in per_file],
                             why=f"the eight oracle files re-exported by ffmpeg ({profile})")
        inst.baseline_case("silence", [(a, f"audio_silence:{b}") for a, b in per_file], why="eight silent files")
        inst.baseline_case("white_noise", [(a, f"audio_noise:{b}") for a, b in per_file], why="eight noise files")
        inst.baseline_case("envelope_noise", [(a, f"audio_envelope_noise:{b}") for a, b in per_file],
                           why="eight noise files with the oracle files' envelopes")
        mutant("rate_44k1", [N.files_format], "file 3 rendered at 44.1 kHz", {}, {2: 44_100})
        mutant("late_onset", [N.trims], "file 2 starts 40 ms before its step", {1: cut(1, lead_ms=40)})
        mutant("no_tail_fade", [N.trims], "file 5 cut mid-decay with no fade",
               {4: cut(4, fade_ms=0, length_s=0.06)})
        mutant("too_loud", [N.loudness], "file 7 at -14 LUFS", {6: cut(6, gain_db=4)})
        # near misses at the seed's lines: onset 5 ms (the step's first sound ≈ 0.1 ms after the cut's lead),
        # loudness -18 ± 1 LUFS (the cut is levelled by the very meter the check reads)
        mutant("onset_4ms", [], "file 2 starts 4 ms before its step (seed 5 ms): lowers nothing", {1: cut(1, lead_ms=4)})
        mutant("onset_6ms", [N.trims], "file 2 starts 6 ms before its step", {1: cut(1, lead_ms=6)})
        mutant("loudness_plus_0_8", [], "file 7 at -17.2 LUFS (seed ± 1): lowers nothing", {6: cut(6, gain_db=0.8)})
        mutant("loudness_plus_1_2", [N.loudness], "file 7 at -16.8 LUFS", {6: cut(6, gain_db=1.2)})
        mutant("duplicate_take", [N.distinct_clean], "file 6 is file 5 again", {5: oracle[4]})
        clicked = oracle[3].copy()
        clicked[int(0.2 * RATE_HZ)] += 0.1
        mutant("click_in_tail", [N.distinct_clean], "file 4 has a one-sample spike in its tail", {3: clicked})
        def varispeed(x: np.ndarray, speed: float) -> np.ndarray:
            """x played `speed` times as fast (pitch with it), levelled back to -18 LUFS."""
            y = resample_poly(x, 1000, round(1000 * speed))
            return y * 10 ** ((-18.0 - short_term_max_lufs(y, RATE_HZ)) / 20)

        speeds = (0.89, 0.93, 0.97, 1.0, 1.03, 1.07, 1.11, 1.15)  # ± 2 semitones, as a game would vary one step
        mutant("one_take_varispeeded", [N.distinct_clean], "issue 21 (scored 100, fair 90): eight variations of "
               "take 1 at eight speeds, pairwise correlation < 0.9 but one step: the 'distinct' half is lost",
               {k: varispeed(oracle[0], sp) for k, sp in enumerate(speeds)})
        mutant("distinct_takes_varispeeded", [], "eight different steps, each at its own speed (± 2 semitones): "
               "a legitimate way to vary a game's footsteps, lowers nothing",
               {k: varispeed(oracle[k], sp) for k, sp in enumerate(speeds)})
        mutant("missing_file", list(N), "file 8 never rendered",
               {7: None})
