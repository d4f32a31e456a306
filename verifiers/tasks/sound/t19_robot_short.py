"""R06.07.01.03-T19: sound-design an animated short: Foley, hard effects, backgrounds, stems.

Work dir: fixtures/robot_short.mov (placeholder). Outputs: output/robot_fx.wav (stereo mix),
output/stems/{foley,fx,bg}.wav, output/session/ (the DAW session).
GT: gt/robot.json {fps, footsteps: [frames], events: [{frame, category}], cuts: [frames]}.

The sounds are the agent's own, so timing comes from onsets, each measured on its own stem (the mix
when a stem is missing). foley_sync: footsteps with an onset within ±1 frame (full at >= 85 %, else the
share in sync; onsets far from every footstep beyond one per footstep each cancel one in sync: StemTiming). hard_fx:
action events with an onset within ±1 frame and the right category (>= 85 %); the category is read
from the session: the name or source file of the FX item nearest the event in a REAPER .RPP in
output/session/ names the category word and no other. A closed session (.ptx, .npr) gives no category: the
check is then an error, not a guess, unless too few events are in sync for any category to matter
(fail); no session at all is a missing deliverable (fail). bg_transitions: on the BG stem, the frame of largest spectral
change (distance between consecutive frames' 1/3-octave levels) within ±6 frames of each cut lies
within ±1 frame of it and is at least twice the window's median flux (a change, not chance). stems_spec: foley + fx + bg minus the mix <= -50 dB re the mix (half), true
peak <= -1 dBTP (half), in proportion to the sound design present (rule 3: the share of footsteps,
action events and cuts that got a sound, at any timing; silence or white noise earned the true-peak half).
coherence_rubric: recorded human judgments only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verifiers.apps.reaper import Item, RPPError, Track, read_rpp, write_rpp
from verifiers.base import ScoreContext
from verifiers.checks import CheckedTask, Result, check, check_names, loads, provides
from verifiers.curves import Curve
from verifiers.evidence.base import Payload
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.audio_io import Audio
from verifiers.measure.errors import MediaError
from verifiers.measure.onsets import detect_onsets
from verifiers.measure.spectral import third_octave_levels_db
from verifiers.measure.truepeak import true_peak_dbtp
from verifiers.params import NoParams
from verifiers.paramtypes.sound import BGTransitions, ShareInSync, StemsSpec
from verifiers.rubric import rubric_result
from verifiers.synth import InstanceWriter
from verifiers.synthkit import sfx
from verifiers.tasks.sound._shared.placed_events import required_of
from verifiers.tasks.sound._shared.render_files import (
    RATE_HZ,
    load_named_audio,
    load_output,
    rubric_event,
    truncate_file,
    write_wav,
)

TASK = "R06.07.01.03-T19"
N = check_names(TASK)
OUTPUT = "output/robot_fx.wav"
STEMS = "output/stems"
SESSION = "output/session"
FPS = 24
CUT_SEARCH_FRAMES = 6
#: a background change must stand out from the beds' own frame-to-frame flux: 1/3-octave levels of a
#: 42 ms frame of steady noise move 3-5 dB (RMS over bands) frame to frame, a cut between two beds
#: 35-57 dB (the oracle and its 44.1 kHz export); white noise's largest flux sat ±1 frame of a cut by
#: chance (issue 21 baseline: half the share)
MIN_CHANGE_RE_MEDIAN = 2.0
#: ... and be the one change of its ±CUT_SEARCH_FRAMES window: the frames whose flux reaches half the
#: largest lie within MAX_CHANGE_SPAN_FRAMES (a crossfade up to 4 frames: its two ends; a BG switched
#: every third frame spreads them over the whole window: issue 21's "every third frame" gamer), and the
#: change is the first frame nearer the spectrum after it than the one before (change_centre_row)
CHANGE_RE_PEAK = 0.5
MAX_CHANGE_SPAN_FRAMES = 4


def onset_frames(mono: np.ndarray, fps: float) -> np.ndarray:
    """Every onset of a stem, in frames."""
    return np.array([o.time_s * fps for o in detect_onsets(mono, RATE_HZ)])


def onset_errors(on_frames: np.ndarray, frames: list[int], fps: float) -> list[float | None]:
    """Error (frames) of the onset nearest each GT frame; None when none is within half a second."""
    out: list[float | None] = []
    for f in frames:
        if not len(on_frames):
            out.append(None)
            continue
        e = on_frames - f
        k = int(np.argmin(np.abs(e)))
        out.append(float(e[k]) if abs(e[k]) <= 0.5 * fps else None)
    return out


def extra_onsets(on_frames: np.ndarray, frames: list[int], tol_frames: float) -> int:
    """Onsets farther than the tolerance from every GT frame: sounds where the picture has no unit."""
    if not len(on_frames) or not frames:
        return len(on_frames)
    d = np.min(np.abs(on_frames[:, None] - np.asarray(frames, dtype=float)[None, :]), axis=1)
    return int(np.sum(d > tol_frames + 1e-9))


@dataclass(frozen=True)
class StemTiming:
    """One stem's onsets against its GT units (footsteps or action events). Each unit is in sync or not
    (the seed's ±1 frame is its pass line); onsets far from every unit are sounds where the picture has
    none. The seed's Foley holds "footsteps and servo moves" whose frames the GT hides, and a designed
    effect may carry a second transient, so `allowed` of them (the catalog's extra_onsets_per_unit_ratio × the
    units) pass unremarked; each one beyond that cancels one unit in sync (a sound where the picture has
    none is as wrong as a unit without its sound), so a click on every frame, which puts an onset within
    ±1 frame of every unit, nets nothing."""

    errors: list[float | None]  # per unit: the nearest onset's error in frames (None: none within 0.5 s)
    tol_frames: float
    extras: int  # onsets farther than the tolerance from every unit
    allowed: int

    @property
    def charged(self) -> int:
        return max(0, self.extras - self.allowed)

    def in_sync(self) -> list[bool]:
        return [e is not None and abs(e) <= self.tol_frames + 1e-9 for e in self.errors]

    def share_pct(self, ok: int) -> float:
        """Units right, less one per charged extra, over the units (floored at 0)."""
        n = len(self.errors)
        return 100.0 * max(0, ok - self.charged) / n if n else 0.0

    def extras_note(self) -> str:
        return (f", {self.extras} other onsets ({self.allowed} allowed: {self.charged} each cancel one in sync)"
                if self.charged else "")

    def evidence(self) -> dict:
        return {"error_frames": [None if e is None else round(e, 2) for e in self.errors],
                "extra_onsets": self.extras, "extra_onsets_allowed": self.allowed, "extras_charged": self.charged}


def session_categories(items: list[tuple[float, str]], t_s: float, cats: list[str]) -> set[str]:
    """The category words named by the session item(s) nearest an event (within half a second; items
    stacked at the same position all count, so naming every category at every event is no answer)."""
    near = [(abs(pos - t_s), name) for pos, name in items if abs(pos - t_s) <= 0.5]
    if not near:
        return set()
    first = min(d for d, _n in near)
    return {c for d, name in near if d <= first + 1e-3 for c in cats if c in name}


def band_frames(mono: np.ndarray, fps: float, lo_f: int, hi_f: int) -> np.ndarray:
    step = RATE_HZ / fps
    rows = []
    for f in range(lo_f, hi_f):
        seg = mono[round(f * step): round((f + 1) * step)]
        _c, lv = third_octave_levels_db(seg, RATE_HZ, low_hz=100, high_hz=10000, nperseg=len(seg))
        rows.append(np.maximum(lv, -120))
    return np.array(rows)


@dataclass(frozen=True)
class RobotGT:
    fps: float
    steps: list[int]  # footstep frames
    events: list[tuple[int, str]]  # (frame, category) of the action events
    cuts: list[int]


@dataclass(frozen=True)
class RobotMix:
    audio: Audio
    x: np.ndarray  # the mix at RATE_HZ
    stems: dict[str, np.ndarray | None]  # foley / fx / bg (None: missing)

    def mono_of(self, name: str) -> np.ndarray:
        """A stem in mono, or the mix when the stem is missing."""
        s = self.stems[name]
        return self.x.mean(axis=1) if s is None else s.mean(axis=1)


@dataclass(frozen=True)
class RobotEvent(Payload):
    """One action event of the short that needs a hard effect."""

    frame: int = gt_field(doc="the frame of the action (the effect's onset belongs within ±1 frame)")
    category: str = gt_field(doc="the effect's kind; the session item at the event must name it (and no other)")


class RobotGTFile(GTFile, file="robot.json", task=TASK):
    """gt/robot.json: the short's frame rate, footstep frames, action events and picture cut frames."""

    fps: float = gt_field(doc="picture frame rate")
    footsteps: list[int] = gt_field(doc="frame of every footstep (Foley onset within ±1 frame)")
    events: list[RobotEvent] = gt_field(doc="the action events, in time order")
    cuts: list[int] = gt_field(doc="frames of the scene cuts (the BG changes within ±1 frame)")

    def validate(self) -> None:
        self.expect(self.fps > 0, "fps", "must be > 0")
        self.expect(bool(self.footsteps), "footsteps", "must not be empty")


def load_robot_gt(ctx: ScoreContext) -> RobotGT:
    f = ctx.gt_typed(RobotGTFile)  # a missing key or a wrong type: GTError naming it
    return RobotGT(f.fps, f.footsteps, [(e.frame, e.category.lower()) for e in f.events], f.cuts)


def load_robot_mix(ctx: ScoreContext) -> RobotMix:
    audio, x = load_output(ctx, OUTPUT, RATE_HZ)
    stems: dict[str, np.ndarray | None] = {}
    for name in ("foley", "fx", "bg"):
        try:
            stems[name] = load_named_audio(ctx.workdir / STEMS / f"{name}.wav", sample_rate_hz=RATE_HZ).samples
        except MediaError:
            stems[name] = None
    return RobotMix(audio, x, stems)


def change_run(flux: np.ndarray) -> tuple[int, int]:
    """First and last flux of the change around the largest: the fluxes standing out from the window's
    median (MIN_CHANGE_RE_MEDIAN) within MAX_CHANGE_SPAN_FRAMES of it (a crossfade's two ends, whichever
    carries more flux)."""
    peak, floor = int(np.argmax(flux)), MIN_CHANGE_RE_MEDIAN * float(np.median(flux))
    run = [i for i in range(len(flux)) if abs(i - peak) <= MAX_CHANGE_SPAN_FRAMES and flux[i] >= floor] or [peak]
    return min(run), max(run)


def change_centre_row(lv_db: np.ndarray, first: int, last: int) -> int:
    """The first row of band levels at least half way from the spectrum before the change to the one after.

    The change runs over fluxes first..last (flux i goes from row i to row i + 1); before is the median
    of rows up to `first`, after that of rows from last + 1. Progress is measured on band amplitudes
    (projected on after − before), where a crossfade moves linearly in every band one bed dominates. Why
    not the middle of the frames of high dB flux: between beds of very different spectra a crossfade
    moves the dB levels most at one end (the leaving bed's bands fall into nothing), so on seed 13 the
    change read 2 frames early for a 4-frame fade centred on the cut.
    """
    amp = 10 ** (lv_db / 20)
    before, after = np.median(amp[: first + 1], axis=0), np.median(amp[last + 1:], axis=0)
    move = after - before
    progress = (amp[first: last + 2] - before) @ move / max(float(move @ move), 1e-30)
    return first + int(np.argmax(progress >= 0.5))


def bg_change(bg: np.ndarray, c: int, fps: float, tol_frames: float) -> dict:
    """The frame of largest 1/3-octave spectral flux within CUT_SEARCH_FRAMES of cut c."""
    lo, hi = c - CUT_SEARCH_FRAMES, c + CUT_SEARCH_FRAMES
    if lo < 1 or hi * RATE_HZ / fps > len(bg):
        return {"cut_frame": c, "ok": False}
    lv = band_frames(bg, fps, lo - 1, hi)
    flux = np.sqrt(np.mean(np.diff(lv, axis=0) ** 2, axis=1))  # flux[i]: change from frame lo-1+i to lo+i
    med = float(np.median(flux))
    high = np.flatnonzero(flux >= CHANGE_RE_PEAK * float(flux.max()))
    span = int(high[-1] - high[0])
    at = lo - 1 + change_centre_row(lv, *change_run(flux))
    stands_out = float(flux.max()) > 0 and float(flux.max()) >= MIN_CHANGE_RE_MEDIAN * med and span <= MAX_CHANGE_SPAN_FRAMES
    return {"cut_frame": c, "change_frame": at, "flux_db": round(float(flux.max()), 2), "median_flux_db": round(med, 2),
            "change_span_frames": span, "stands_out": stands_out, "ok": abs(at - c) <= tol_frames and stands_out}


def stem_residual_db(m: RobotMix) -> float:
    """Energy of (sum of stems - mix) re the mix; inf when a stem is missing."""
    x, have = m.x, [s for s in m.stems.values() if s is not None]
    if len(have) < 3:
        return float("inf")
    n = min(len(x), *(len(s) for s in have))
    summed = sum(s[:n] if s.shape[1] == x.shape[1] else np.repeat(s[:n].mean(axis=1, keepdims=True), x.shape[1], axis=1)
                 for s in have)
    r = summed - x[:n]
    return 10 * np.log10(max(float(np.sum(r ** 2)), 1e-30) / max(float(np.sum(x[:n] ** 2)), 1e-30))


def robot_cases(inst: InstanceWriter) -> None:
    """Exports of the mix and the three stems (≥ 95; the oracle's session and rubric judgment kept) and
    gaming deliveries (≤ 5), each file by the same recipe."""
    files = [OUTPUT, *(f"{STEMS}/{n}.wav" for n in ("foley", "fx", "bg"))]

    def each(recipe: str) -> list[tuple[str, str]]:
        return [(f, f"{recipe}:oracle/{f}") for f in files]

    inst.export_case("wav_daw_44k1", [(f, f"audio_export:daw_44k1:oracle/{f}") for f in files],
                     why="the mix and the stems at 44.1 kHz 16-bit TPDF, 2 ms late (ffmpeg)")
    inst.baseline_case("silence", each("audio_silence"), why="digital silence in the mix and every stem")
    inst.baseline_case("white_noise", each("audio_noise"), why="white noise in the mix and every stem")
    inst.baseline_case("mp3_named_wav", each("audio_mp3_named"), why="the oracle's mix and stems as MP3 under WAV names")
    inst.baseline_case("other_task_oracle", [(OUTPUT, "other_oracle:R06.07.01.03-T02:output/passby.wav")],
                       why="T02's oracle render as the mix, no stems")


def everything_everywhere(inst: InstanceWriter, steps: list[int], events: list[RobotEvent], beds: list[np.ndarray],
                          total_f: int, every_frames: int = 1) -> None:
    """Gaming baseline (≤ 5): a click on every frame (or every `every_frames`-th: every third frame is
    still within ±1 frame of every footstep and event, with a third of the extras) of the Foley and FX
    stems, backgrounds switching as often, a session item naming every category at every event;
    stems sum to the mix, peak -3 dBFS."""
    n = beds[0].shape[0]
    tick = np.zeros(48)
    tick[0], tick[1] = 0.5, -0.25  # 1 ms click
    clicks = sfx.place(n, 2, [(round(f / FPS * RATE_HZ), tick) for f in range(0, total_f, every_frames)])
    bg = np.zeros((n, 2))
    for k, f in enumerate(range(0, total_f, every_frames)):
        a, b = round(f / FPS * RATE_HZ), round((f + every_frames) / FPS * RATE_HZ)
        bg[a:b] = beds[k % 2][a:b]
    mix = 2 * clicks + bg
    scale = 10 ** (-3 / 20) / np.max(np.abs(mix))
    case = "everything_everywhere" if every_frames == 1 else f"everything_every_{every_frames}_frames"
    folder = inst.root / "baselines" / ("everything" if every_frames == 1 else case)
    write_wav(folder / OUTPUT, mix * scale)
    for name, x in (("foley", clicks), ("fx", clicks), ("bg", bg)):
        write_wav(folder / STEMS / f"{name}.wav", x * scale)
    every = " ".join(sorted({e.category for e in events}))
    write_rpp(folder / SESSION / "robot_short.RPP",
              [Track("FX", items=[Item(e.frame / FPS, 0.5, 0.0, every, f"sfx/{every}.wav") for e in events])])
    files = [OUTPUT, *(f"{STEMS}/{k}.wav" for k in ("foley", "fx", "bg")), f"{SESSION}/robot_short.RPP"]
    how_often = "every frame" if every_frames == 1 else f"every {every_frames} frames"
    inst.baseline_case(case, [(f, f"copy:baselines/{folder.name}/{f}") for f in files],
                       why=f"a click on {how_often} of the Foley and FX stems, BG switching {how_often}, every "
                           "category named at every event (issue 21: the ±1 frame line alone paid the click track)")


class RobotShort(CheckedTask):
    task_id = TASK

    gt = loads(load_robot_gt)
    mix = loads(load_robot_mix, after=("gt",))  # a malformed GT is reported before the render

    @provides
    def foley(self) -> StemTiming:
        """Footsteps against the Foley stem's onsets."""
        return self._timing("foley", self.gt.steps, self.task.check(N.foley_sync).typed)

    @provides
    def fx(self) -> StemTiming:
        """Action events against the FX stem's onsets (foley_sync's tolerance, as the seed words it)."""
        p = self.task.check(N.hard_fx).typed
        return self._timing("fx", [f for f, _c in self.gt.events], p, tol_frames=self.tolerance_frames)

    def _timing(self, stem: str, frames: list[int], p: ShareInSync, tol_frames: float | None = None) -> StemTiming:
        tol = p.tolerance_frames if tol_frames is None else tol_frames
        on = onset_frames(self.mix.mono_of(stem), self.gt.fps)
        extras = extra_onsets(on, frames, tol)
        allowed = int(np.floor(p.extra_onsets_per_unit_ratio * len(frames) + 1e-9))
        return StemTiming(onset_errors(on, frames, self.gt.fps), tol, extras, allowed)

    @check(N.foley_sync)
    def foley_sync(self, p: ShareInSync, curve: Curve) -> Result:
        t = self.foley
        ok = sum(t.in_sync())
        return Result(curve.share(t.share_pct(ok)),
                      {**t.evidence(), "required": required_of(len(t.errors), min_pct=p.min_in_sync_pct),
                       "measured_on": "stem" if self.mix.stems["foley"] is not None else "mix"},
                      f"{ok}/{len(t.errors)} footsteps within ±{t.tol_frames:g} frame{t.extras_note()}: "
                      f"{t.share_pct(ok):.1f} % in sync (full at {curve.full_at_pct:g} %)")

    @property
    def tolerance_frames(self) -> float:
        return self.task.check(N.foley_sync).typed.tolerance_frames

    @check(N.hard_fx)
    def hard_fx(self, p: ShareInSync, curve: Curve) -> Result:
        events, fps, t = self.gt.events, self.gt.fps, self.fx
        names = self._session_items(self.ctx)
        if names is None:
            timed = sum(t.in_sync())
            ev = {**t.evidence(), "required": required_of(len(events), min_pct=p.min_in_sync_pct)}
            if curve.share(t.share_pct(timed)) < 1:
                return Result.fail(f"{timed}/{len(events)} action events in sync{t.extras_note()} (full at "
                                   f"{curve.full_at_pct:g} %): no category can make up for that", ev)
            folder = self.ctx.workdir / SESSION
            if not folder.is_dir() or not any(folder.iterdir()):
                return Result.fail("no session delivered in output/session/: the categories cannot be read", ev)
            return Result.cannot_judge("category needs a readable REAPER session in output/session/ (closed or missing "
                                       "session: cannot judge categories)", ev)
        cats = sorted({c for _f, c in events})
        rows, good = [], 0
        for (f, cat), e, timed in zip(events, t.errors, t.in_sync(), strict=True):
            named = session_categories(names, f / fps, cats)
            good += named == {cat} and timed
            rows.append({"gt_frame": f, "category": cat, "session_categories": sorted(named),
                         "error_frames": None if e is None else round(e, 2)})
        return Result(curve.share(t.share_pct(good)), {"events": rows, **t.evidence()},
                      f"{good}/{len(events)} action events in sync with the right category{t.extras_note()}: "
                      f"{t.share_pct(good):.1f} % (full at {curve.full_at_pct:g} %)")

    @provides
    def bg_changes(self) -> list[dict]:
        tol = self.task.check(N.bg_transitions).typed.tolerance_frames
        return [bg_change(self.mix.mono_of("bg"), c, self.gt.fps, tol) for c in self.gt.cuts]

    @check(N.bg_transitions)
    def bg_transitions(self, p: BGTransitions, curve: Curve) -> Result:
        cuts, per = self.gt.cuts, self.bg_changes
        okb = sum(x["ok"] for x in per)
        return Result(curve.count(okb, max(len(cuts), 1)), {"cuts": per},
                      f"{okb}/{len(cuts)} background changes within ±{p.tolerance_frames:g} frame of the scene cuts")

    def design_present(self) -> tuple[float, dict]:
        """Share of the GT's footsteps, action events and cuts that got a sound (an onset on their stem
        within half a second, a background change near the cut; timing and category are the other
        checks' business), each extra onset beyond the allowance cancelling one on its stem: how much of
        the short was sound-designed (rule 3's primary change; a click on every frame designs nothing)."""
        steps = sum(e is not None for e in self.foley.errors)
        fx = sum(e is not None for e in self.fx.errors)
        cuts = sum(bool(x.get("stands_out")) for x in self.bg_changes)
        total = len(self.gt.steps) + len(self.gt.events) + len(self.gt.cuts)
        steps, fx = max(0, steps - self.foley.charged), max(0, fx - self.fx.charged)
        share = (steps + fx + cuts) / total if total else 0.0
        return share, {"footsteps": steps, "action_events": fx, "cuts": cuts, "extras_charged":
                       self.foley.charged + self.fx.charged, "of": total, "share": round(share, 3)}

    @check(N.stems_spec)
    def stems_spec(self, p: StemsSpec, curve: Curve) -> Result:
        m = self.mix
        resid_db = stem_residual_db(m)
        tp = max(true_peak_dbtp(m.audio.samples, m.audio.sample_rate_hz))
        share, present = self.design_present()
        return Result(share * curve.count([resid_db <= p.max_stem_residual_db, tp <= p.max_true_peak_dbtp]),
                      {"stem_residual_db": None if not np.isfinite(resid_db) else round(resid_db, 1),
                       "stems_found": [k for k, v in m.stems.items() if v is not None], "true_peak_dbtp": round(tp, 2),
                       "design_present": present},
                      ("stems missing" if not np.isfinite(resid_db) else f"stems - mix {resid_db:.1f} dB")
                      + f"; true peak {tp:.2f} dBTP" + ("" if share >= 1 else f"; × {share:.0%} of the design present"))

    @check(N.coherence_rubric)
    def coherence_rubric(self, p: NoParams, curve: Curve) -> Result:
        self.mix  # noqa: B018  an unusable mix fails the rubric too, as before
        return rubric_result(self.ctx, N.coherence_rubric)

    @staticmethod
    def _session_items(ctx: ScoreContext) -> list[tuple[float, str]] | None:
        """(position, lower-case name + source file) of every item in the session's .RPP, or None."""
        folder = ctx.workdir / SESSION
        rpps = sorted(folder.glob("*.RPP")) + sorted(folder.glob("*.rpp")) if folder.is_dir() else []
        if not rpps:
            return None
        try:
            tracks = read_rpp(rpps[0])
        except RPPError:
            return None
        return [(it.position_s, f"{it.name} {it.source_file or ''}".lower()) for t in tracks for it in t.items]

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        cats = ["clank", "laser", "crash", "hiss"]
        gens = {"clank": lambda: sfx.impact(rng, dur_s=0.4, body_hz=300, peak=0.5),
                "laser": lambda: sfx.chirp_tick(rng, 3000, 600, dur_s=0.3, peak=0.45),
                "crash": lambda: sfx.impact(rng, dur_s=0.8, body_hz=55, peak=0.6),
                "hiss": lambda: sfx.whoosh(rng, 0.4, 2000, 9000, swell=False, peak=0.35)}
        cuts = [160, 330]
        total_f = 480
        steps, f = [], 10
        while f < total_f - 20:
            steps.append(f)
            f += int(rng.integers(14, 19))
        events = [RobotEvent(fr + 7, cats[k % 4]) for k, fr in enumerate((40, 120, 200, 260, 300, 400))]
        inst.write_json(inst.gt / RobotGTFile.FILE, RobotGTFile(fps=FPS, footsteps=steps, events=events, cuts=cuts).to_json())
        (inst.workdir / "fixtures").mkdir(parents=True, exist_ok=True)
        (inst.workdir / "fixtures" / "robot_short.mov").write_bytes(b"placeholder: robot short, 24 fps\n")
        (inst.workdir / "output").mkdir(parents=True, exist_ok=True)
        n = round(total_f / FPS * RATE_HZ)
        step_snd = [sfx.footstep(rng, "concrete", peak=0.35) for _ in range(4)]
        fx_snd = {c: gens[c]() for c in cats}
        beds = [np.stack([sfx.bed(rng, n, lo, hi, -34, tilt_db_oct=t) for _ in range(2)], axis=1)
                for lo, hi, t in ((60, 1500, -6), (500, 9000, 0), (150, 4000, -2))]

        servo = sfx.chirp_tick(rng, 900, 1400, dur_s=0.08, peak=0.2)  # a servo whirr, 4 (and 8) frames after a step

        def solution(folder, *, late_steps: set[int] = frozenset(), wrong: dict[int, str] | None = None,
                     cut_late: dict[int, int] | None = None, fx_stem_gain: float = 1.0, run: bool = True,
                     peak_dbfs: float = -3.0, servos: dict[int, int] | None = None, bg_fade_frames: int = 0) -> None:
            foley = sfx.place(n, 2, [(round((s + (2 if k in late_steps else 0)) / FPS * RATE_HZ), step_snd[k % 4])
                                     for k, s in enumerate(steps)]
                              + [(round((s + 4 + 4 * j) / FPS * RATE_HZ), servo) for k, s in enumerate(steps)
                                 for j in range((servos or {}).get(k, 0))])
            fx = sfx.place(n, 2, [(round(e.frame / FPS * RATE_HZ), fx_snd[e.category]) for e in events])
            bounds = [0, *[c + (cut_late or {}).get(k, 0) for k, c in enumerate(cuts)], total_f]
            bg = np.zeros((n, 2))
            for k in range(3):
                a, b = round(bounds[k] / FPS * RATE_HZ), round(bounds[k + 1] / FPS * RATE_HZ)
                bg[a:b] = beds[k][a:b]
            for k, c in enumerate(cuts if bg_fade_frames else []):  # a linear crossfade centred on the cut
                a, b = round((c - bg_fade_frames / 2) / FPS * RATE_HZ), round((c + bg_fade_frames / 2) / FPS * RATE_HZ)
                w = np.linspace(0.0, 1.0, b - a)[:, None]
                bg[a:b] = (1 - w) * beds[k][a:b] + w * beds[k + 1][a:b]
            mix = foley + fx + bg
            scale = 10 ** (peak_dbfs / 20) / np.max(np.abs(mix))
            write_wav(folder / OUTPUT, mix * scale)
            write_wav(folder / STEMS / "foley.wav", foley * scale)
            write_wav(folder / STEMS / "fx.wav", fx * scale * fx_stem_gain)
            write_wav(folder / STEMS / "bg.wav", bg * scale)
            items = [Item(e.frame / FPS, 0.5, 0.0, f"{(wrong or {}).get(k, e.category)}_{k + 1:02d}",
                          f"sfx/{(wrong or {}).get(k, e.category)}.wav") for k, e in enumerate(events)]
            write_rpp(folder / SESSION / "robot_short.RPP", [Track("FOLEY"), Track("FX", items=items), Track("BG")])
            if run:
                inst.write_events(folder, [rubric_event(N.coherence_rubric, 1.0)])

        solution(inst.oracle)
        robot_cases(inst)
        everything_everywhere(inst, steps, events, beds, total_f)
        everything_everywhere(inst, steps, events, beds, total_f, every_frames=3)
        # the extras allowance (one other Foley onset per footstep): at it, and 5 over it (each cancels a
        # footstep in sync: 23/28 net, below 85 %; the design share of stems_spec loses 5 of 36 units)
        solution(inst.mutant("servo_after_each_step", [], "a servo whirr 4 frames after every footstep (one other "
                             "Foley onset per step is allowed): lowers nothing"), servos=dict.fromkeys(range(len(steps)), 1))
        solution(inst.mutant("two_servos_after_5_steps", [N.foley_sync, N.stems_spec], "a servo after every footstep "
                             "and a second after 5 of them: 5 onsets over the allowance"),
                 servos={k: 2 if k < 5 else 1 for k in range(len(steps))})
        solution(inst.mutant("five_steps_late", [N.foley_sync], "5 footsteps 2 frames late (below 85 %)"),
                 late_steps={2, 6, 10, 14, 18})
        solution(inst.mutant("wrong_categories", [N.hard_fx], "laser and crash swapped for hiss and clank"),
                 wrong={1: "hiss", 2: "clank"})
        solution(inst.mutant("bg_cut_late", [N.bg_transitions], "second BG change 4 frames after the cut"),
                 cut_late={1: 4})
        solution(inst.mutant("bg_crossfade_4_frames", [], "4-frame BG crossfades centred on the cuts (one change "
                             "run, not a BG switched again and again): lowers nothing"), bg_fade_frames=4)
        solution(inst.mutant("fx_stem_6db_low", [N.stems_spec], "FX stem bounced 6 dB low: stems do not sum"),
                 fx_stem_gain=0.5)
        # near misses at the seed's lines: 85 % of steps (24 of 28 in sync / 23), BG change ±1 frame,
        # stems - mix -50 dB (the FX stem is -2.8 dB re the mix: gain 1.003 → -53 dB, 1.006 → -47 dB),
        # true peak -1 dBTP (the mix's true peak sits 0.02 dB over its sample peak)
        solution(inst.mutant("four_steps_late", [], "4 footsteps 2 frames late: 24/28 in sync (need 24), lowers nothing"),
                 late_steps={2, 6, 10, 14})
        solution(inst.mutant("bg_cut_1_frame_late", [], "second BG change 1 frame after the cut (seed ±1): lowers nothing"),
                 cut_late={1: 1})
        solution(inst.mutant("bg_cut_2_frames_late", [N.bg_transitions], "second BG change 2 frames after the cut"),
                 cut_late={1: 2})
        solution(inst.mutant("fx_stem_0_3pct_high", [], "FX stem 0.3 % high: stems - mix -53 dB (seed -50), lowers nothing"),
                 fx_stem_gain=1.003)
        solution(inst.mutant("fx_stem_0_6pct_high", [N.stems_spec], "FX stem 0.6 % high: stems - mix -47 dB"),
                 fx_stem_gain=1.006)
        solution(inst.mutant("peak_minus_1_3", [], "mix peaking at -1.3 dBFS (true peak under the seed's -1 dBTP)"),
                 peak_dbfs=-1.3)
        solution(inst.mutant("peak_minus_0_7", [N.stems_spec], "mix peaking at -0.7 dBFS: true peak over -1 dBTP"),
                 peak_dbfs=-0.7)
        solution(inst.mutant("no_rubric_judgment", [N.coherence_rubric], "no human rubric recorded"), run=False)
        m = inst.mutant("truncated_mix", list(N),
                        "mix cut off (an unusable mix earns no rubric credit either)")
        solution(m)
        truncate_file(m / OUTPUT)
