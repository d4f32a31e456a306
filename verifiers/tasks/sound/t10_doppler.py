"""R06.07.01.03-T10: automate a Doppler pass-by (pitch, level, low-pass) from a static engine loop.

Work dir: fixtures/engine_loop.wav (static engine, clear fundamental), fixtures/passby_shot.RPP
(track ENGINE with the loop; the shot is referenced by the project). Output: output/doppler_passby.wav.
GT: gt/passby.json {fps, closest_frame, speed_m_s, distance_m}.

Measures: YIN f0 (verifiers.measure.yin) per video frame of the render and of the loop.
doppler_pitch: median f0 over the first and the last 20 % of the pitched span against the loop's f0:
approach +7.9 %, recede -6.8 % (± 1.5 points; half each). pass_timing: the frame where f0 crosses
the midpoint of the approach and recede pitches, within 3 frames of the GT closest-approach frame.
level_envelope: the frame of the RMS maximum (per-frame RMS, 5-frame median smoothing) within 3
frames. air_absorption: Pearson r of the per-frame power centroid (verifiers.measure.spectral) with
-log10(distance) from the GT geometry, >= 0.7.

Content identity first (issue 21): the render must be the given loop. The second difference over k of
the harmonic phases (verifiers.measure.derived.harmonic_phase_match) is the loop's fingerprint at any
pitch, delay, level or low-pass; a sawtooth or another engine swept the same way fails every check.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import median_filter

from verifiers.apps.reaper import Item, Track, write_rpp
from verifiers.base import AgentOutputError, GTError, ScoreContext
from verifiers.checks import CheckedTask, Result, check, check_names, loads, provides
from verifiers.curves import Curve
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.audio_io import load_audio
from verifiers.measure.derived import Derivation, harmonic_phase_match
from verifiers.measure.errors import MediaError
from verifiers.measure.levels import frame_rms
from verifiers.measure.spectral import spectral_centroid_hz
from verifiers.measure.yin import yin
from verifiers.paramtypes.sound import AirAbsorption, DopplerPitch, FrameTolerance
from verifiers.synth import InstanceWriter
from verifiers.synthcases import audio_cases
from verifiers.synthkit import sfx
from verifiers.synthkit.doppler import distance_m, emission_times, read_loop, varying_lowpass
from verifiers.tasks.sound._shared.render_files import RATE_HZ, load_output, truncate_file, write_wav

TASK = "R06.07.01.03-T10"
N = check_names(TASK)
OUTPUT = "output/doppler_passby.wav"
LOOP = "fixtures/engine_loop.wav"
FPS = 24
F0_RANGE_HZ = (50.0, 400.0)
EDGE_SHARE = 0.2
#: at least half the pitched 2-frame blocks must carry the loop's harmonic phases (measured: the oracle
#: and its exports ≥ 0.95 of blocks, a swept sawtooth 0)
MIN_DERIVED_SHARE = 0.5


def f0_per_frame(mono: np.ndarray, fps: float) -> np.ndarray:
    """Median f0 per video frame (nan where unpitched)."""
    tr = yin(mono, RATE_HZ, fmin_hz=F0_RANGE_HZ[0], fmax_hz=F0_RANGE_HZ[1], hop_length=480)
    n = int(len(mono) / RATE_HZ * fps)
    fr = np.floor(tr.times_s * fps).astype(int)
    out = np.full(n, np.nan)
    for f in range(n):
        sel = (fr == f) & tr.voiced()
        if sel.sum():
            out[f] = float(np.median(tr.f0_hz[sel]))
    return out


class PassbyGT(GTFile, file="passby.json", task=TASK):
    """gt/passby.json: the car's pass-by as the picture shows it."""

    fps: float = gt_field(doc="picture frame rate")
    closest_frame: float = gt_field(doc="frame of the car's closest approach")
    speed_m_s: float = gt_field(doc="the car's speed")
    distance_m: float = gt_field(doc="closest distance to the camera")

    def validate(self) -> None:
        for name in ("fps", "speed_m_s", "distance_m"):
            self.expect(getattr(self, name) > 0, name, "must be > 0")


@dataclass(frozen=True)
class PitchSweep:
    f0: np.ndarray  # median f0 per video frame (nan unpitched)
    f_src: float  # the engine loop's fundamental
    up_pct: float  # shift over the first EDGE_SHARE of the pitched span
    dn_pct: float  # ... and over the last


def load_passby_gt(ctx: ScoreContext) -> PassbyGT:
    return ctx.gt_typed(PassbyGT)  # a missing key, a wrong type or a broken rule: GTError naming it


@dataclass(frozen=True)
class EngineLoop:
    samples: np.ndarray  # mono at RATE_HZ
    f0_hz: float


def load_loop(ctx: ScoreContext) -> EngineLoop:
    try:
        loop = load_audio(ctx.input(LOOP), sample_rate_hz=RATE_HZ).mono
    except MediaError as exc:
        raise GTError(f"engine loop unreadable: {exc}") from None
    src = yin(loop, RATE_HZ, fmin_hz=F0_RANGE_HZ[0], fmax_hz=F0_RANGE_HZ[1])
    if src.voiced().sum() < 10:
        raise GTError("engine loop has no measurable fundamental")
    return EngineLoop(loop, float(np.median(src.f0_hz[src.voiced()])))


def loop_derivation(mono: np.ndarray, f0: np.ndarray, fps: float, loop: EngineLoop) -> Derivation:
    """Harmonic phase fingerprint of the render against the loop, in 2-frame blocks at their own f0."""
    frames = np.arange(0, len(f0), 2)
    return harmonic_phase_match(mono, RATE_HZ, starts_s=frames / fps, f0_hz=f0[frames], block_s=2 / fps,
                                loop=loop.samples, loop_f0_hz=loop.f0_hz)


def pitch_sweep(f0: np.ndarray, f_src: float) -> PitchSweep:
    pitched = np.nonzero(np.isfinite(f0))[0]
    if len(pitched) < 10:
        raise AgentOutputError("no engine pitch found in the render")
    span = pitched[-1] - pitched[0]
    first = pitched[pitched <= pitched[0] + EDGE_SHARE * span]
    last = pitched[pitched >= pitched[-1] - EDGE_SHARE * span]
    up = (float(np.median(f0[first])) / f_src - 1) * 100
    dn = (float(np.median(f0[last])) / f_src - 1) * 100
    return PitchSweep(f0, f_src, up, dn)


class DopplerPassby(CheckedTask):
    task_id = TASK

    gt = loads(load_passby_gt)
    loop = loads(load_loop)

    @provides
    def f_src(self) -> float:
        return self.loop.f0_hz

    @provides
    def f0(self) -> np.ndarray:
        return f0_per_frame(self.rendered, self.gt.fps)

    @provides
    def rendered(self) -> np.ndarray:
        _audio, x = load_output(self.ctx, OUTPUT, RATE_HZ)
        return x.mean(axis=1)

    @provides
    def mono(self) -> np.ndarray:
        """The render's mono sum, once it is proven to be the engine loop (every check reads this)."""
        d = loop_derivation(self.rendered, self.f0, self.gt.fps, self.loop)
        if d.share < MIN_DERIVED_SHARE:
            raise AgentOutputError(f"{OUTPUT} is not derived from {LOOP}: {d.share:.0%} of its pitched blocks carry "
                                   f"the loop's harmonic phase pattern (need {MIN_DERIVED_SHARE:.0%}); a Doppler "
                                   "sweep of another sound is not a Doppler of the given loop")
        return self.rendered

    @provides
    def sweep(self) -> PitchSweep:
        self.mono  # noqa: B018  (identity first)
        return pitch_sweep(self.f0, self.f_src)

    @provides
    def rms(self) -> np.ndarray:
        return median_filter(frame_rms(self.mono, RATE_HZ, self.gt.fps), size=5, mode="nearest")

    @check(N.doppler_pitch)
    def doppler_pitch(self, p: DopplerPitch, curve: Curve) -> Result:
        up, dn, want_up, want_dn, tol = self.sweep.up_pct, self.sweep.dn_pct, p.approach_pct, p.recede_pct, p.tolerance_pct
        return Result(curve.count([abs(up - want_up) <= tol, abs(dn - want_dn) <= tol]),
                      {"source_f0_hz": round(self.f_src, 2), "approach_pct": round(up, 2), "recede_pct": round(dn, 2),
                       "want": [want_up, want_dn]},
                      f"approach {up:+.1f}%, recede {dn:+.1f}% (want {want_up:+g}% / {want_dn:+g}% ± {tol:g})")

    @check(N.pass_timing)
    def pass_timing(self, p: FrameTolerance, curve: Curve) -> Result:
        f0, sw, closest = self.sweep.f0, self.sweep, self.gt.closest_frame
        mid = sw.f_src * (1 + (sw.up_pct + sw.dn_pct) / 200)
        cross = [f + (f0[f] - mid) / (f0[f] - f0[f + 1]) for f in range(len(f0) - 1)
                 if np.isfinite(f0[f]) and np.isfinite(f0[f + 1]) and f0[f] >= mid > f0[f + 1]]
        if not cross or abs(sw.up_pct - sw.dn_pct) <= 1.0:
            return Result.fail("pitch never falls through its midpoint (no Doppler sweep)")
        c = min(cross, key=lambda v: abs(v - closest))
        return Result(curve.score(c - closest, p.tolerance_frames),
                      {"pitch_midpoint_frame": round(c, 2), "closest_frame": closest},
                      f"pitch midpoint {c - closest:+.1f} frames from closest approach")

    @check(N.level_envelope)
    def level_envelope(self, p: FrameTolerance, curve: Curve) -> Result:
        peak, closest = int(np.argmax(self.rms)), self.gt.closest_frame
        return Result(curve.score(peak - closest, p.tolerance_frames), {"level_peak_frame": peak, "closest_frame": closest},
                      f"level peak {peak - closest:+.0f} frames from closest approach")

    @check(N.air_absorption)
    def air_absorption(self, p: AirAbsorption, curve: Curve) -> Result:
        gt, mono, rms = self.gt, self.mono, self.rms
        tc, cen = spectral_centroid_hz(mono, RATE_HZ, frame_s=1 / gt.fps, hop_s=1 / gt.fps)
        loud = np.interp(tc, (np.arange(len(rms)) + 0.5) / gt.fps, 20 * np.log10(np.maximum(rms, 1e-12)))
        ok = np.isfinite(cen) & (loud >= loud.max() - 40)
        r_m = distance_m(tc[ok], gt.closest_frame / gt.fps, gt.speed_m_s, gt.distance_m)
        r = float(np.corrcoef(cen[ok], -np.log10(r_m))[0, 1]) if ok.sum() > 5 and np.std(cen[ok]) > 0 else 0.0
        need = p.min_correlation_ratio
        # max(nan, 0.0) stays nan (scored 0), as r / need did
        return Result(curve.score(max(need - r, 0.0)), {"pearson_r": round(r, 3)},
                      f"centroid vs closeness r = {r:.2f} (need {need:g})")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        f_src = float(rng.uniform(90, 120))
        n_loop = 2 * RATE_HZ
        cycles = round(f_src * 2)  # whole cycles, so the loop is seamless
        f_src = cycles / 2.0
        t = np.arange(n_loop) / RATE_HZ
        loop = sum(np.sin(2 * np.pi * k * f_src * t + rng.uniform(0, 6)) / k ** 0.7 for k in range(1, 40)
                   if k * f_src < 12000)
        loop = 0.5 * loop / np.max(np.abs(loop)) + 0.02 * sfx.band_noise(rng, n_loop, 100, 8000)
        write_wav(inst.workdir / LOOP, loop)
        dur_s = 8.0
        closest_s = 4.0 + float(rng.uniform(-0.3, 0.3))
        closest_frame = round(closest_s * FPS)
        closest_s = closest_frame / FPS
        write_rpp(inst.workdir / "fixtures/passby_shot.RPP",
                  [Track("ENGINE", items=[Item(0.0, dur_s, 0.0, "engine loop", "engine_loop.wav")])])
        (inst.workdir / "output").mkdir(parents=True, exist_ok=True)
        speed, dist = 25.0, 2.0
        inst.write_json(inst.gt / "passby.json", {"fps": FPS, "closest_frame": closest_frame, "speed_m_s": speed,
                                                  "distance_m": dist})
        n = round(dur_s * RATE_HZ)
        tt = np.arange(n) / RATE_HZ

        def render(pitch_speed: float = speed, pitch_shift_s: float = 0.0, level_shift_s: float = 0.0,
                   lowpass: bool = True) -> np.ndarray:
            if pitch_speed > 0:
                tau = emission_times(tt, closest_s + pitch_shift_s, pitch_speed, dist)
            else:
                tau = tt
            y = read_loop(loop, tau, RATE_HZ)
            r_lvl = distance_m(tt, closest_s + level_shift_s, speed, dist)
            y = y * (dist / r_lvl)
            if lowpass:
                r = distance_m(tt, closest_s, speed, dist)
                y = varying_lowpass(y, np.clip(16000 * (dist / r) ** 0.7, 600, 16000), RATE_HZ)
            y = 0.8 * y / np.max(np.abs(y))
            return np.stack([y, y], axis=1)

        write_wav(inst.oracle / OUTPUT, render())
        audio_cases(inst, OUTPUT, unedited=f"workdir/{LOOP}", other=("R06.07.01.03-T02", "output/passby.wav"))
        # gaming: a sawtooth at the loop's pitch, swept, levelled and filtered exactly like the oracle
        tau = emission_times(tt, closest_s, speed, dist)
        saw = sum(np.sin(2 * np.pi * k * f_src * tau) / k for k in range(1, 40) if k * f_src < 12000)
        saw = varying_lowpass(saw * dist / distance_m(tt, closest_s, speed, dist),
                              np.clip(16000 * (dist / distance_m(tt, closest_s, speed, dist)) ** 0.7, 600, 16000), RATE_HZ)
        write_wav(inst.root / "baselines/swept_sawtooth.wav", 0.8 * saw / np.max(np.abs(saw)))
        inst.baseline_case("swept_sawtooth", [(OUTPUT, "copy:baselines/swept_sawtooth.wav")],
                           why="a sawtooth at the loop's pitch with the oracle's Doppler, level and low-pass")
        write_wav(inst.mutant("pitch_1_frame_late", [], "near miss inside the 3-frame line: lowers nothing") / OUTPUT,
                  render(pitch_shift_s=1 / FPS))
        write_wav(inst.mutant("pitch_5_frames_late", [N.pass_timing], "near miss outside the 3-frame line")
                  / OUTPUT, render(pitch_shift_s=5 / FPS))
        write_wav(inst.mutant("doppler_for_15ms", [N.doppler_pitch], "pitch automated for 15 m/s") / OUTPUT,
                  render(pitch_speed=15.0))
        write_wav(inst.mutant("no_doppler", [N.doppler_pitch, N.pass_timing], "level and filter only, no pitch")
                  / OUTPUT, render(pitch_speed=0.0))
        write_wav(inst.mutant("pitch_8_frames_late", [N.pass_timing], "pitch drop 8 frames after the pass")
                  / OUTPUT, render(pitch_shift_s=8 / FPS))
        write_wav(inst.mutant("level_peak_8_frames_early", [N.level_envelope], "level swell peaks 8 frames early")
                  / OUTPUT, render(level_shift_s=-8 / FPS))
        write_wav(inst.mutant("no_air_absorption", [N.air_absorption], "no distance low-pass") / OUTPUT,
                  render(lowpass=False))
        truncate_file(write_wav(inst.mutant("truncated_wav", list(N), "render cut off") / OUTPUT, render()))
        # near misses (issue 21): pitch for 28 m/s (+8.9 % / -7.5 %, within 1.5 points of the seed's 25 m/s
        # shifts) and 32 m/s (+10.3 % / -8.5 %: both outside); the level peak 1 and 5 frames early (±3; the
        # median-filtered level peak reads ±1 frame: 2 frames early read 4 on seed 11)
        for v, lowers in ((28.0, []), (32.0, [N.doppler_pitch])):
            write_wav(inst.mutant(f"doppler_for_{v:g}ms", lowers, f"pitch automated for {v:g} m/s (seed 25 m/s, "
                                  "shifts ±1.5 points)") / OUTPUT, render(pitch_speed=v))
        for fr, lowers in ((1, []), (5, [N.level_envelope])):
            write_wav(inst.mutant(f"level_peak_{fr}_frames_early", lowers, f"level swell peaks {fr} frames early "
                                  "(seed ±3)") / OUTPUT, render(level_shift_s=-fr / FPS))
