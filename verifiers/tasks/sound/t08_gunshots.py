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

import numpy as np
from scipy.signal import fftconvolve

from verifiers.base import Checks, GTError, ScoreContext, TaskVerifier
from verifiers.measure.identify import match_at
from verifiers.measure.room import schroeder_curve_db
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.synthkit import sfx
from verifiers.synthkit.rooms import impulse_response
from verifiers.tasks.sound._shared.event_sync import ANALYSIS_RATE_HZ, load_library
from verifiers.tasks.sound._shared.placed_events import analyse, cv_pct
from verifiers.tasks.sound._shared.render_files import RATE_HZ, truncate_file, write_wav

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


@register
class LayeredGunshots(TaskVerifier):
    task_id = "R06.07.01.03-T08"

    def score(self, ctx: ScoreContext, checks: Checks) -> None:
        sp = checks.params("sync")
        tol = float(sp.get("tolerance_frames", 1))
        a = analyse(ctx, OUTPUT, LAYERS, tol_frames=tol, min_ncc=0.3)
        raw = a.raw_gt
        try:
            want_rt = float(raw["warehouse_rt60_s"])
            spaces = [str(e["space"]) for e in raw["events"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise GTError(f"ground truth events.json lacks warehouse_rt60_s/space: {exc}") from None
        lib = load_library(ctx.input(LAYERS))
        try:
            ir = load_library(ctx.input(IR).parent)[ctx.input(IR).name]
        except KeyError:
            raise GTError(f"{IR} missing") from None
        for k in ("transient.wav", "body.wav", "tail.wav"):
            if k not in lib:
                raise GTError(f"layer {k} missing from {LAYERS}")
        n = len(a.rows)
        # onset nearest each flash (any onset: the layers are judged separately)
        onsets = [o.time_s for o in a.onsets]
        near = []
        for r in a.rows:
            t = min(onsets, key=lambda o: abs(o - r.gt_time_s)) if onsets else None
            near.append(t if t is not None and abs(t - r.gt_time_s) <= 0.5 else None)
        errs = [None if t is None else (t - r.gt_time_s) * a.fps for t, r in zip(near, a.rows, strict=True)]
        ok = sum(e is not None and abs(e) <= tol + 1e-9 for e in errs)
        checks.set("sync", ok / n, {"error_frames": [None if e is None else round(e, 2) for e in errs]},
                   f"{ok}/{n} shots within ±{tol:g} frame of the muzzle flash")

        wet_tail = fftconvolve(lib["tail.wav"], ir)
        layered, per = 0, []
        seg_n = round(SEG_S * ANALYSIS_RATE_HZ)
        for t in near:
            if t is None:
                per.append({"layers": None})
                continue
            o = max(0, round((t - 0.03) * ANALYSIS_RATE_HZ))
            seg = a.mix[o: o + seg_n]
            cands = {"transient": lib["transient.wav"], "body": lib["body.wav"], "tail": lib["tail.wav"],
                     "tail_in_ir": wet_tail}
            offs = {}
            for name, x in cands.items():
                m = match_at(a.mix, ANALYSIS_RATE_HZ, {name: x}, t, search_s=0.02, length_s=0.1)[0]
                offs[name] = round(m.offset_s * ANALYSIS_RATE_HZ) - o
            sh = layer_shares(seg, cands, offs)
            have = {"transient": sh["transient"] >= LAYER_MIN_DB, "body": sh["body"] >= LAYER_MIN_DB,
                    "tail": max(sh["tail"], sh["tail_in_ir"]) >= LAYER_MIN_DB}
            layered += all(have.values())
            per.append({"share_db": {k: round(v, 1) if np.isfinite(v) else None for k, v in sh.items()}, "have": have})
        checks.set("layering", layered / n, {"shots": per, "min_share_db": LAYER_MIN_DB},
                   f"{layered}/{n} shots carry transient, body and tail")

        ap = checks.params("acoustics")
        rt_tol = float(ap.get("rt60_tolerance_pct", 15)) / 100
        want_sb, sb_tol = float(ap.get("slapback_ms", 186)), float(ap.get("slapback_tolerance_ms", 10))
        inner, outer, ev = [], [], []
        for i, (t, space) in enumerate(zip(near, spaces, strict=True)):
            if t is None:
                (inner if space == "interior" else outer).append(False)
                ev.append({"i": i, "space": space, "found": False})
                continue
            o = round(t * ANALYSIS_RATE_HZ)
            nxt = min([x for x in near if x is not None and x > t + 0.2], default=len(a.mix) / ANALYSIS_RATE_HZ)
            seg = a.mix[o: round(nxt * ANALYSIS_RATE_HZ)]
            if space == "interior":
                rt = late_rt60_s(seg) if len(seg) > ANALYSIS_RATE_HZ * 0.2 else None
                good = rt is not None and abs(rt / want_rt - 1) <= rt_tol
                inner.append(good)
                ev.append({"i": i, "space": space, "rt60_s": None if rt is None else round(rt, 3), "ok": good})
            else:
                head = a.mix[o: o + round(0.06 * ANALYSIS_RATE_HZ)]
                m = match_at(a.mix, ANALYSIS_RATE_HZ, {"head": head}, t + 0.2, search_s=0.1, length_s=0.06)[0]
                delay = (m.offset_s - t) * 1000
                good = m.ncc >= 0.5 and abs(delay - want_sb) <= sb_tol
                outer.append(good)
                ev.append({"i": i, "space": space, "slapback_ms": round(delay, 1), "ncc": round(m.ncc, 3), "ok": good})
        parts = [sum(v) / len(v) for v in (inner, outer) if v]
        checks.set("acoustics", float(np.mean(parts)) if parts else 0.0,
                   {"shots": ev, "warehouse_rt60_s": want_rt, "slapback_ms": want_sb},
                   f"interior {sum(inner)}/{len(inner)} RT60 within {100 * rt_tol:.0f}%, exterior {sum(outer)}/"
                   f"{len(outer)} slapback {want_sb:g} ± {sb_tol:g} ms")

        peaks = [float(np.max(np.abs(a.mix[round(t * ANALYSIS_RATE_HZ): round((t + 0.05) * ANALYSIS_RATE_HZ)])))
                 for t in near if t is not None]
        cv = cv_pct(peaks)
        lim = float(checks.params("level_consistency").get("max_peak_cv_pct", 15))
        score = 0.0 if len(peaks) < 2 else (1.0 if cv <= lim else max(0.0, 1 - (cv - lim) / lim))
        checks.set("level_consistency", score, {"peak_cv_pct": round(cv, 1), "peaks": [round(p, 3) for p in peaks]},
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

        def shot(space: str, *, with_body: bool = True, slap: float = slap_ms, room: str = "warehouse") -> np.ndarray:
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
                d = round(slap / 1000 * sr)
                dry = x.copy()
                x[d:] += 0.4 * dry[: n - d]  # the building's reflection, 8 dB down
            return x

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
        write_wav(inst.mutant("shot_2_frames_late", ["sync"], "shot 3 lands 2 frames after the flash") / OUTPUT,
                  render(late={2: 2}))
        write_wav(inst.mutant("no_body_layer", ["layering"], "two shots without the body layer") / OUTPUT,
                  render(no_body={1, 4}))
        write_wav(inst.mutant("small_room_ir", ["acoustics", "layering"],
                              "interior tails through a small-room IR (then not recognisable as the tail layer)") / OUTPUT,
                  render(room="small"))
        write_wav(inst.mutant("slapback_120ms", ["acoustics"], "exterior slapback for a building at 20 m") / OUTPUT,
                  render(slap=120.0))
        write_wav(inst.mutant("one_shot_6db_down", ["level_consistency"], "shot 4 6 dB quieter") / OUTPUT,
                  render(gains={3: 0.5}))
        truncate_file(write_wav(inst.mutant("truncated_wav", ["sync", "layering", "acoustics", "level_consistency"],
                                            "bounce cut off") / OUTPUT, render()))
