"""R06.07.01.03-T08: layered gunshots (transient, body, tail) matched to interior and exterior.

Work dir: fixtures/standoff.ptx (closed; placeholder), fixtures/gun_layers/{transient,body,tail}.wav,
fixtures/irs/warehouse.wav. Output: output/gunshots.wav.
GT: gt/events.json {fps, sample_rate_hz, warehouse_rt60_s, slapback_ms,
events[{frame, sample, label, space: interior|exterior}]} (`frame` = muzzle flash).

sync: onset within ±1 frame of each flash (per shot). layering: at each shot the three layers are
located by NCC (±20 ms), the shot's first 0.5 s is fitted by least squares on them (the tail as
given and as convolved with the warehouse IR; the better one counts), and a layer is present when its
share of the shot's energy is >= -25 dB (a tail through an IR other than the warehouse's is not
recognised as the tail layer). acoustics: interior shots' late decay (Schroeder curve of
verifiers.measure.room, fitted -15…-35 dB because the dry transient and body dominate the first
10 dB) within 15 % of the warehouse RT60 (half); exterior shots' slapback — where the shot's own
first 60 ms recur 100–300 ms later (NCC) — 186 ± 10 ms (half). level_consistency: CV of the peaks
in the 50 ms after each onset <= 15 %.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.signal import fftconvolve

from verifiers.base import GTError, ScoreContext
from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.gtfiles import gt_field
from verifiers.measure.identify import match_at
from verifiers.measure.room import schroeder_curve_db
from verifiers.paramtypes.sound import Acoustics, Layering, ShotLevels, ShotSync
from verifiers.synth import InstanceWriter
from verifiers.synthcases import audio_cases
from verifiers.synthkit import sfx
from verifiers.synthkit.rooms import impulse_response
from verifiers.tasks.sound._shared.event_sync import ANALYSIS_RATE_HZ, EventEntry, EventsFile, load_library
from verifiers.tasks.sound._shared.placed_events import Analysis, analysed_render, cv_pct
from verifiers.tasks.sound._shared.render_files import RATE_HZ, truncate_file, write_wav

TASK = "R06.07.01.03-T08"
N = check_names(TASK)


@dataclass(frozen=True, kw_only=True)
class ShotEvent(EventEntry):
    """A shot and where it is fired from."""

    space: str = gt_field(doc="interior or exterior")


class GunshotEvents(EventsFile, task=TASK):
    """gt/events.json of the gunshots: the shared keys, the warehouse's RT60 and each shot's space."""

    events: list[ShotEvent] = gt_field(doc="the shots, in time order")
    warehouse_rt60_s: float = gt_field(doc="the warehouse IR's RT60")
    slapback_ms: float | None = gt_field(doc="the exterior slapback delay (informative)", default=None)

    def validate(self) -> None:
        super().validate()
        self.expect(self.warehouse_rt60_s > 0, "warehouse_rt60_s", "must be > 0")
        self.expect(all(e.space in ("interior", "exterior") for e in self.events), "events",
                    "every shot's space is interior or exterior")
OUTPUT = "output/gunshots.wav"
LAYERS = "fixtures/gun_layers"
IR = "fixtures/irs/warehouse.wav"
FPS = 24
LAYER_MIN_DB = -25.0
SEG_S = 0.5


def late_rt60_s(x: np.ndarray, hi_db: float = -15.0, lo_db: float = -35.0) -> float | None:
    edc, _floor, _cut = schroeder_curve_db(x, ANALYSIS_RATE_HZ)
    idx = np.nonzero((edc <= hi_db) & (edc >= lo_db))[0]
    if len(idx) < 10 or edc.min() > lo_db:
        return None
    slope = np.polyfit(idx / ANALYSIS_RATE_HZ, edc[idx], 1)[0]
    return float(-60.0 / slope) if slope < 0 else None


def layer_shares(seg: np.ndarray, layers: dict[str, np.ndarray], offsets: dict[str, int]) -> dict[str, float]:
    """Energy share (dB) of each layer in a least-squares fit of the segment."""
    cols = []
    for name, x in layers.items():
        c = np.zeros(len(seg))
        o = offsets[name]
        if 0 <= o < len(seg):
            k = min(len(x), len(seg) - o)
            c[o: o + k] = x[:k]
        cols.append(c)
    A = np.stack(cols, axis=1)
    g, *_ = np.linalg.lstsq(A, seg, rcond=None)
    total = max(float(np.dot(seg, seg)), 1e-30)
    return {name: (10 * np.log10(max(float(np.sum((g[i] * A[:, i]) ** 2)), 1e-30) / total) if g[i] > 0 else -np.inf)
            for i, name in enumerate(layers)}


@dataclass(frozen=True)
class ShotGT:
    warehouse_rt60_s: float
    spaces: list[str]  # interior | exterior, per shot


def load_shot_gt(ctx: ScoreContext) -> ShotGT:
    gt = ctx.gt_typed(GunshotEvents)  # a missing key, a wrong type or a broken rule: GTError naming it
    return ShotGT(gt.warehouse_rt60_s, [e.space for e in gt.events])


def load_layers(ctx: ScoreContext) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """(the gun layer library, the warehouse IR): task inputs, so missing ones are GT problems."""
    lib = load_library(ctx.input(LAYERS))
    try:
        ir = load_library(ctx.input(IR).parent)[ctx.input(IR).name]
    except KeyError:
        raise GTError(f"{IR} missing") from None
    for k in ("transient.wav", "body.wav", "tail.wav"):
        if k not in lib:
            raise GTError(f"layer {k} missing from {LAYERS}")
    return lib, ir


def shot_layers(a: Analysis, t: float, lib: dict[str, np.ndarray], wet_tail: np.ndarray) -> dict:
    """Energy share of transient, body and tail (dry or through the IR) in the SEG_S after a shot at t."""
    seg_n = round(SEG_S * ANALYSIS_RATE_HZ)
    o = max(0, round((t - 0.03) * ANALYSIS_RATE_HZ))
    seg = a.mix[o: o + seg_n]
    cands = {"transient": lib["transient.wav"], "body": lib["body.wav"], "tail": lib["tail.wav"], "tail_in_ir": wet_tail}
    offs = {}
    for name, x in cands.items():
        m = match_at(a.mix, ANALYSIS_RATE_HZ, {name: x}, t, search_s=0.02, length_s=0.1)[0]
        offs[name] = round(m.offset_s * ANALYSIS_RATE_HZ) - o
    sh = layer_shares(seg, cands, offs)
    have = {"transient": sh["transient"] >= LAYER_MIN_DB, "body": sh["body"] >= LAYER_MIN_DB,
            "tail": max(sh["tail"], sh["tail_in_ir"]) >= LAYER_MIN_DB}
    return {"share_db": {k: round(v, 1) if np.isfinite(v) else None for k, v in sh.items()}, "have": have}


def shot_space(a: Analysis, near: list[float | None], i: int, space: str, want_rt: float, p: Acoustics,
               layers: dict) -> dict:
    """Interior: the late RT60 of the shot's tail against the warehouse's; exterior: the slapback delay.
    Either only without the other space's tail layer (`layers`: shot_layers of this shot): the warehouse
    tail on an exterior shot, the dry exterior tail on an interior one (issue 21: every layer of both
    spaces on every shot earned the exterior half)."""
    t = near[i]
    if t is None:
        return {"i": i, "space": space, "found": False, "ok": False}
    other = "tail" if space == "interior" else "tail_in_ir"
    other_db = (layers.get("share_db") or {}).get(other)
    if other_db is not None and other_db >= LAYER_MIN_DB:
        return {"i": i, "space": space, "other_space_tail_db": other_db, "ok": False}
    o = round(t * ANALYSIS_RATE_HZ)
    nxt = min([x for x in near if x is not None and x > t + 0.2], default=len(a.mix) / ANALYSIS_RATE_HZ)
    seg = a.mix[o: round(nxt * ANALYSIS_RATE_HZ)]
    if space == "interior":
        rt = late_rt60_s(seg) if len(seg) > ANALYSIS_RATE_HZ * 0.2 else None
        good = rt is not None and abs(rt / want_rt - 1) <= p.rt60_tolerance_pct / 100
        return {"i": i, "space": space, "rt60_s": None if rt is None else round(rt, 3), "ok": good}
    head = a.mix[o: o + round(0.06 * ANALYSIS_RATE_HZ)]
    m = match_at(a.mix, ANALYSIS_RATE_HZ, {"head": head}, t + 0.2, search_s=0.1, length_s=0.06)[0]
    delay = (m.offset_s - t) * 1000
    good = m.ncc >= 0.5 and abs(delay - p.slapback_ms) <= p.slapback_tolerance_ms
    return {"i": i, "space": space, "slapback_ms": round(delay, 1), "ncc": round(m.ncc, 3), "ok": good}


class LayeredGunshots(CheckedTask):
    task_id = TASK

    placed = analysed_render(OUTPUT, LAYERS, N.sync, min_ncc=0.3)

    @provides
    def near(self) -> list[float | None]:
        """The onset nearest each flash within 0.5 s (any onset: the layers are judged separately)."""
        a = self.placed
        onsets = [o.time_s for o in a.onsets]
        near = []
        for r in a.rows:
            t = min(onsets, key=lambda o: abs(o - r.gt_time_s)) if onsets else None
            near.append(t if t is not None and abs(t - r.gt_time_s) <= 0.5 else None)
        return near

    @check(N.sync)
    def sync(self, p: ShotSync, curve: Curve) -> Result:
        a, tol = self.placed, p.tolerance_frames
        errs = [None if t is None else (t - r.gt_time_s) * a.fps for t, r in zip(self.near, a.rows, strict=True)]
        ok = sum(e is not None and abs(e) <= tol + 1e-9 for e in errs)
        return Result(curve.count(ok, len(a.rows)), {"error_frames": [None if e is None else round(e, 2) for e in errs]},
                      f"{ok}/{len(a.rows)} shots within ±{tol:g} frame of the muzzle flash")

    @provides
    def layers(self) -> list[dict]:
        """Per shot, the layer shares (`shot_layers`; {"layers": None} where no onset is near the flash)."""
        lib, ir = load_layers(self.ctx)
        wet_tail = fftconvolve(lib["tail.wav"], ir)
        return [{"layers": None} if t is None else shot_layers(self.placed, t, lib, wet_tail) for t in self.near]

    @check(N.layering)
    def layering(self, p: Layering, curve: Curve) -> Result:
        per = self.layers
        layered = sum(all(x["have"].values()) for x in per if "have" in x)
        n = len(self.placed.rows)
        return Result(curve.count(layered, n), {"shots": per, "min_share_db": LAYER_MIN_DB},
                      f"{layered}/{n} shots carry transient, body and tail")

    @check(N.acoustics)
    def acoustics(self, p: Acoustics, curve: Curve) -> Result:
        self.placed  # noqa: B018 - as before: the analysis first (its errors come first)
        gt = load_shot_gt(self.ctx)
        ev = [shot_space(self.placed, self.near, i, space, gt.warehouse_rt60_s, p, lay)
              for i, (space, lay) in enumerate(zip(gt.spaces, self.layers, strict=True))]
        inner = [e["ok"] for e in ev if e["space"] == "interior"]
        outer = [e["ok"] for e in ev if e["space"] != "interior"]
        for e in ev:
            if e.get("found") is False:
                del e["ok"]
        shares = [curve.part(nm).count(sum(v), len(v)) for nm, v in (("interior", inner), ("exterior", outer)) if v]
        return Result(curve.count(shares), {"shots": ev, "warehouse_rt60_s": gt.warehouse_rt60_s, "slapback_ms": p.slapback_ms},
                      f"interior {sum(inner)}/{len(inner)} RT60 within {p.rt60_tolerance_pct:.0f}%, exterior "
                      f"{sum(outer)}/{len(outer)} slapback {p.slapback_ms:g} ± {p.slapback_tolerance_ms:g} ms")

    @check(N.level_consistency)
    def level_consistency(self, p: ShotLevels, curve: Curve) -> Result:
        mix = self.placed.mix
        peaks = [float(np.max(np.abs(mix[round(t * ANALYSIS_RATE_HZ): round((t + 0.05) * ANALYSIS_RATE_HZ)])))
                 for t in self.near if t is not None]
        cv, lim = cv_pct(peaks), p.max_peak_cv_pct
        return Result(0.0 if len(peaks) < 2 else curve.score(cv, lim),
                      {"peak_cv_pct": round(cv, 1), "peaks": [round(x, 3) for x in peaks]},
                      f"shot peak CV {cv:.1f}% (max {lim:g}%)")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        sr = RATE_HZ
        transient = sfx.click(rng, freq_hz=3000, dur_s=0.03, peak=0.9)
        body = sfx.impact(rng, dur_s=0.3, body_hz=70, peak=0.45)
        nt = int(0.4 * sr)
        tail = sfx.band_noise(rng, nt, 200, 6000) * np.exp(-np.arange(nt) / sr / 0.05)
        tail = 0.4 * tail / np.max(np.abs(tail))
        rt60 = 1.2
        ir = impulse_response(rng, rt60, late_level=1.0)
        ir = ir / np.max(np.abs(ir)) * 0.9
        small = impulse_response(rng, 0.35, late_level=1.0)
        small = small / np.max(np.abs(small)) * 0.9
        for name, x in {"transient.wav": transient, "body.wav": body, "tail.wav": tail}.items():
            write_wav(inst.workdir / LAYERS / name, x)
        write_wav(inst.workdir / IR, ir)
        (inst.workdir / "fixtures" / "standoff.ptx").write_bytes(b"PTX placeholder: closed Pro Tools session\n")
        (inst.workdir / "output").mkdir(parents=True, exist_ok=True)
        spaces = ["interior", "exterior", "interior", "exterior", "interior", "exterior"]
        frames, f = [], 12
        for _ in spaces:
            frames.append(f)
            f += 48 + int(rng.integers(0, 6))
        slap_ms = 2 * 32 / 343 * 1000  # 186.6 ms
        events = [{"frame": fr, "sample": "transient.wav", "label": f"shot {k + 1} ({sp})", "space": sp}
                  for k, (fr, sp) in enumerate(zip(frames, spaces, strict=True))]
        inst.write_json(inst.gt / "events.json", {"fps": FPS, "sample_rate_hz": RATE_HZ, "warehouse_rt60_s": rt60,
                                                  "slapback_ms": round(slap_ms, 1), "events": events})
        length = int((frames[-1] / FPS + 2.0) * sr)
        wet_tail = fftconvolve(tail, ir)
        wet_tail = 0.3 * wet_tail / np.max(np.abs(wet_tail))
        small_tail = fftconvolve(tail, small)
        small_tail = 0.3 * small_tail / np.max(np.abs(small_tail))

        def shot(space: str, *, with_body: bool = True, slap: float | None = slap_ms, room: str = "warehouse") -> np.ndarray:
            n = int(1.9 * sr)
            x = np.zeros(n)
            x[: len(transient)] += transient
            if with_body:
                x[: len(body)] += body
            if space == "interior":
                wt = wet_tail if room == "warehouse" else small_tail
                k = min(n, len(wt))
                x[:k] += wt[:k]
            else:
                x[: len(tail)] += tail
                if slap is not None:  # None: the dry tail alone, no building
                    d = round(slap / 1000 * sr)
                    dry = x.copy()
                    x[d:] += 0.4 * dry[: n - d]  # the building's reflection, 8 dB down
            # levelled shot to shot as a designer would (the check's peak in the 50 ms after the onset):
            # the two spaces' tails add to the transient's peak differently, and on seed 11 the
            # unlevelled oracle read a peak CV of 15.1 % (max 15 %)
            return x / np.max(np.abs(x[: round(0.05 * sr)]))

        def render(late: dict[int, int] | None = None, no_body: set[int] = frozenset(), room: str = "warehouse",
                   slap: float = slap_ms, gains: dict[int, float] | None = None) -> np.ndarray:
            items = []
            for k, (fr, sp) in enumerate(zip(frames, spaces, strict=True)):
                at = round((fr + (late or {}).get(k, 0)) / FPS * sr)
                s = shot(sp, with_body=k not in no_body, slap=slap, room=room) * (gains or {}).get(k, 1.0)
                items.append((at, s))
            out = sfx.place(length, 2, items)
            return out * (0.9 / np.max(np.abs(out)))

        write_wav(inst.oracle / OUTPUT, render())
        audio_cases(inst, OUTPUT, envelope=False, other=("R06.07.01.03-T02", "output/passby.wav"))
        # issue 21's "everything at once": every layer of both spaces at every flash (the warehouse tail and
        # the exterior tail with its slapback on each shot)
        pile = sfx.place(length, 2, [(round(fr / FPS * sr), shot("interior") + shot("exterior")) for fr in frames])
        write_wav(inst.root / "baselines" / "every_layer" / OUTPUT, pile * (0.9 / np.max(np.abs(pile))))
        inst.baseline_case("every_layer_everywhere", [(OUTPUT, f"copy:baselines/every_layer/{OUTPUT}")], max_score=75.0,
                           why="transient, body, the warehouse tail, the exterior tail and the slapback on every shot: "
                               "declared keep (catalog notes) of sync 30, layering 25, level 20, the seed's properties "
                               "the pile has; the spaces (acoustics 25) pay 0")
        # what the pile's 75 is worth: the same layers, synced and levelled, with the spaces ignored (every shot
        # dry: no warehouse IR, no slapback) earns the same 75; the pile gains nothing by carrying both spaces
        dry = sfx.place(length, 2, [(round(fr / FPS * sr), shot("exterior", slap=None)) for fr in frames])
        write_wav(inst.mutant("spaces_ignored", [N.acoustics],
                              "every shot dry (no IR, no slapback): layered, synced, levelled; 75 like the pile") / OUTPUT,
                  dry * (0.9 / np.max(np.abs(dry))))
        write_wav(inst.mutant("shot_2_frames_late", [N.sync], "shot 3 lands 2 frames after the flash") / OUTPUT,
                  render(late={2: 2}))
        write_wav(inst.mutant("no_body_layer", [N.layering], "two shots without the body layer") / OUTPUT,
                  render(no_body={1, 4}))
        write_wav(inst.mutant("small_room_ir", [N.acoustics, N.layering],
                              "interior tails through a small-room IR (then not recognisable as the tail layer)") / OUTPUT,
                  render(room="small"))
        write_wav(inst.mutant("slapback_120ms", [N.acoustics], "exterior slapback for a building at 20 m") / OUTPUT,
                  render(slap=120.0))
        write_wav(inst.mutant("one_shot_6db_down", [N.level_consistency], "shot 4 6 dB quieter") / OUTPUT,
                  render(gains={3: 0.5}))
        # near misses at the seed's lines: slapback 186 ± 10 ms (measured 0.6 ms over the rendered delay),
        # peak CV ≤ 15 % (the oracle's shots are levelled, CV 0.0 %; shot 4 at 0.65 → 13.9 %, 0.6 → 16.0 %)
        write_wav(inst.mutant("slapback_193ms", [], "slapback 7 ms long (seed ± 10 ms): lowers nothing") / OUTPUT,
                  render(slap=193.0))
        write_wav(inst.mutant("slapback_199ms", [N.acoustics], "slapback 13 ms long") / OUTPUT, render(slap=199.0))
        write_wav(inst.mutant("peak_cv_14pct", [], "shot 4 at 0.65: peak CV 14 % (seed 15 %), lowers nothing") / OUTPUT,
                  render(gains={3: 0.65}))
        write_wav(inst.mutant("peak_cv_16pct", [N.level_consistency], "shot 4 at 0.6: peak CV 16 %") / OUTPUT,
                  render(gains={3: 0.6}))
        truncate_file(write_wav(inst.mutant("truncated_wav", list(N),
                                            "bounce cut off") / OUTPUT, render()))
