"""R06.07.01.03-T17: render 8 footstep variations for a game from a Foley session.

Work dir: fixtures/foley_steps.RPP (track STEPS, items over fixtures/media/concrete_take.wav).
Output: output/steps/fs_concrete_01.wav … _08.wav, 48 kHz mono.
GT: gt/steps.json {take_onsets_s: [...]} documents the raw take; the checks need only the catalog
params, since any 8 distinct steps of the take are a valid answer.

Loudness: the seed asks for "-18 LUFS short-term (max)". A short-term window is 3 s; a footstep
file is a fraction of that, and padding it with silence to 3 s would make -18 LUFS unreachable
without clipping. For a file shorter than the window the window is the file: the K-weighted
(BS.1770) mean square over the whole file. Files of 3 s or more use the meter's short-term max.
Off-spec files (stereo, 44.1 kHz) fail files_format; the other checks still measure their
content (mono downmix), so one mistake costs one check.
"""

from __future__ import annotations

import math
from itertools import combinations
from pathlib import Path

import numpy as np
from scipy.signal import fftconvolve, sosfilt

from verifiers.base import AgentOutputError
from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.measure.audio_io import Audio
from verifiers.measure.clicks import detect_clicks
from verifiers.measure.errors import MediaError
from verifiers.measure.loudness import k_weighting_sos, measure_loudness
from verifiers.paramtypes.sound import DistinctClean, FilesFormat, StepLoudness, Trims
from verifiers.registry import register
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
ONSET_RE_PEAK_DB = -30.0


def short_term_max_lufs(mono: np.ndarray, rate_hz: int) -> float:
    """Short-term max; for a file shorter than 3 s, the loudness of the whole file (see module doc)."""
    if len(mono) >= SHORT_TERM_S * rate_hz:
        return float(measure_loudness(mono, rate_hz).max_short_term_lufs)
    ms = float(np.mean(sosfilt(k_weighting_sos(rate_hz), mono) ** 2))
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


@register
class FootstepVariations(CheckedTask):
    task_id = TASK

    @provides
    def files(self) -> tuple[dict[str, Audio | None], dict[str, str]]:
        folder = self.ctx.workdir / OUT_DIR
        if not folder.is_dir():
            raise AgentOutputError(f"artifact missing: {OUT_DIR}/")
        return load_steps(folder)

    @provides
    def present(self) -> dict[str, Audio]:
        present = {n: a for n, a in self.files[0].items() if a is not None}
        if not present:
            raise AgentOutputError(f"no readable files in {OUT_DIR}/")
        return present

    @check(N.files_format)
    def files_format(self, p: FilesFormat, curve: Curve) -> Result:
        files, problems = self.files
        want_rate, want_ch, count = p.sample_rate_hz, p.channels, len(NAMES)
        fmt = {}
        for name, a in files.items():
            if a is None:
                fmt[name] = problems[name]
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
        folder = self.ctx.workdir / OUT_DIR
        at48 = {n: (load_named_audio(folder / n, sample_rate_hz=RATE_HZ).mono if a.sample_rate_hz != RATE_HZ else a.mono)
                for n, a in present.items()}
        pairs = list(combinations(sorted(at48), 2))
        similar = [(a, b, round(c, 3)) for a, b in pairs if (c := max_xcorr(at48[a], at48[b])) > max_corr]
        clicks = {n: [round(c.time_s, 4) for c in detect_clicks(a.mono, a.sample_rate_hz)] for n, a in present.items()}
        clicky = [n for n, c in clicks.items() if c]
        all_pairs = count * (count - 1) // 2
        distinct = curve.part("distinct").count(all_pairs - len(similar) - (all_pairs - len(pairs)), all_pairs)
        clean = curve.part("clean").count(len(present) - len(clicky), count)
        return Result(0.5 * distinct + 0.5 * clean, {"too_similar": similar, "clicks_s": {n: c for n, c in clicks.items() if c}},
                      f"{len(similar)} pair(s) above {max_corr:g} correlation; {len(clicky)} file(s) with clicks")

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
        write_wav(inst.workdir / "fixtures/media/concrete_take.wav", take)
        items = [Item(0.0, len(take) / RATE_HZ, 0.0, "concrete take", "media/concrete_take.wav")]
        write_rpp(inst.workdir / "fixtures/foley_steps.RPP", [Track("STEPS", items=items)])
        (inst.workdir / "output").mkdir(parents=True, exist_ok=True)
        inst.write_json(inst.gt / "steps.json", {"take_onsets_s": [round(t, 6) for t in onsets]})

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

        mutant("rate_44k1", [N.files_format], "file 3 rendered at 44.1 kHz", {}, {2: 44_100})
        mutant("late_onset", [N.trims], "file 2 starts 40 ms before its step", {1: cut(1, lead_ms=40)})
        mutant("no_tail_fade", [N.trims], "file 5 cut mid-decay with no fade",
               {4: cut(4, fade_ms=0, length_s=0.06)})
        mutant("too_loud", [N.loudness], "file 7 at -14 LUFS", {6: cut(6, gain_db=4)})
        mutant("duplicate_take", [N.distinct_clean], "file 6 is file 5 again", {5: oracle[4]})
        clicked = oracle[3].copy()
        clicked[int(0.2 * RATE_HZ)] += 0.1
        mutant("click_in_tail", [N.distinct_clean], "file 4 has a one-sample spike in its tail", {3: clicked})
        mutant("missing_file", list(N), "file 8 never rendered",
               {7: None})
