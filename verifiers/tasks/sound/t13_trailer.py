"""R06.07.01.03-T13: spot and design sound for a trailer: hits on the red cuts, risers into hits,
a braam on the title card, a 1 s silence beat before the final hit.

Work dir: fixtures/trailer_60s.mov (placeholder), notes/trailer_notes.txt. Outputs:
output/trailer_sfx.wav and output/session/ (the DAW session; no check reads it, its presence is
reported). GT: gt/trailer.json {fps, cut_frames, riser_targets (indices into cut_frames),
title_frame, final_hit_frame}.

The sounds are the agent's own design (no library), so timing comes from onsets (threshold 6 dB: a
hit lands on the top of its riser). hit_sync: an onset within ±1 frame of each red cut (per hit).
risers: per target, the per-frame RMS over the 3 s before the hit peaks within 2 frames of it (half)
and rises over the last 2 s (Spearman >= 0.8 and >= 10 dB; half). braam_silence: an onset within ±1
frame of the title frame followed by low-frequency sound (power centroid of the next 0.5 s < 500 Hz)
(half); the 1 s before the final hit stays <= -50 dBFS (every 50 ms RMS; half). peaks: true peak
(verifiers.measure.truepeak) <= -1 dBTP. design_rubric: recorded human judgments only.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr

from verifiers.base import Checks, GTError, ScoreContext, TaskVerifier
from verifiers.measure.levels import frame_rms
from verifiers.measure.onsets import detect_onsets
from verifiers.measure.spectral import long_term_centroid_hz
from verifiers.measure.truepeak import true_peak_dbtp
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.synthkit import sfx
from verifiers.tasks.sound._shared.render_files import (
    RATE_HZ,
    load_output,
    rubric_check,
    rubric_event,
    truncate_file,
    write_wav,
)

OUTPUT = "output/trailer_sfx.wav"
SESSION = "output/session"
FPS = 24
ONSET_DB = 6.0
BRAAM_MAX_CENTROID_HZ = 500.0


@register
class TrailerDesign(TaskVerifier):
    task_id = "R06.07.01.03-T13"

    def score(self, ctx: ScoreContext, checks: Checks) -> None:
        gt = ctx.gt_json("trailer.json")
        try:
            fps = float(gt["fps"])
            cuts = [int(c) for c in gt["cut_frames"]]
            targets = [int(i) for i in gt["riser_targets"]]
            title, final = int(gt["title_frame"]), int(gt["final_hit_frame"])
        except (KeyError, TypeError, ValueError) as exc:
            raise GTError(f"ground truth trailer.json malformed: {exc}") from None
        audio, x = load_output(ctx, OUTPUT, RATE_HZ)
        rubric_check(ctx, checks, "design_rubric")
        mono = x.mean(axis=1)
        onsets = np.array([o.time_s for o in detect_onsets(mono, RATE_HZ, threshold_db=ONSET_DB)])
        session = (ctx.workdir / SESSION).is_dir() and any((ctx.workdir / SESSION).iterdir())

        hp = checks.params("hit_sync")
        tol = float(hp.get("tolerance_frames", 1))

        def nearest_err(frame: int) -> float | None:
            if not len(onsets):
                return None
            e = (onsets - frame / fps) * fps
            k = int(np.argmin(np.abs(e)))
            return float(e[k])

        errs = [nearest_err(c) for c in cuts]
        ok = sum(e is not None and abs(e) <= tol + 1e-9 for e in errs)
        checks.set("hit_sync", ok / len(cuts), {"error_frames": [None if e is None else round(e, 2) for e in errs],
                                                "session_delivered": session},
                   f"{ok}/{len(cuts)} hits within ±{tol:g} frame of the red cuts")

        rp = checks.params("risers")
        rtol, rise_s = float(rp.get("tolerance_frames", 2)), float(rp.get("min_rise_s", 2))
        env = 20 * np.log10(np.maximum(frame_rms(mono, RATE_HZ, fps), 1e-10))
        per, total = [], 0.0
        for i in targets:
            if not 0 <= i < len(cuts):
                raise GTError(f"riser target {i} is not a cut index")
            c = cuts[i]
            lo = max(0, c - round(3 * fps))
            pre = env[lo:c]
            if len(pre) < rise_s * fps:
                per.append({"target_frame": c, "ok": False})
                continue
            peak_f = lo + int(np.argmax(pre))
            peak_ok = c - peak_f <= rtol
            last = env[c - round(rise_s * fps): c]
            rho = float(spearmanr(np.arange(len(last)), last).statistic) if np.std(last) > 0 else 0.0
            gain = float(last[-3:].mean() - last[:3].mean())
            rising = rho >= 0.8 and gain >= 10
            total += 0.5 * peak_ok + 0.5 * rising
            per.append({"target_frame": c, "peak_frame": peak_f, "spearman": round(rho, 3), "rise_db": round(gain, 1)})
        checks.set("risers", total / max(len(targets), 1), {"risers": per},
                   f"{total:.1f}/{len(targets)} risers peak on their hit and rise for {rise_s:g} s")

        bp = checks.params("braam_silence")
        e = nearest_err(title)
        a = round(title / fps * RATE_HZ)
        cen = long_term_centroid_hz(mono[a: a + RATE_HZ // 2], RATE_HZ) if a + 1000 < len(mono) else float("inf")
        braam_ok = e is not None and abs(e) <= tol + 1e-9 and cen < BRAAM_MAX_CENTROID_HZ
        beat = mono[max(0, round((final / fps - float(bp.get("silence_s", 1))) * RATE_HZ)): round(final / fps * RATE_HZ)]
        w = RATE_HZ // 20
        k = len(beat) // w
        rms_db = 10 * np.log10(np.maximum((beat[: k * w].reshape(k, w) ** 2).mean(axis=1), 1e-20)) if k else np.array([0.0])
        lim = float(bp.get("silence_max_dbfs", -50))
        silent = float(rms_db.max()) <= lim
        checks.set("braam_silence", 0.5 * braam_ok + 0.5 * silent,
                   {"title_onset_error_frames": None if e is None else round(e, 2), "braam_centroid_hz": round(cen, 1),
                    "beat_max_dbfs": round(float(rms_db.max()), 1)},
                   f"braam {'on' if braam_ok else 'not on'} the title; beat max {float(rms_db.max()):.1f} dBFS "
                   f"(<= {lim:g})")

        tp = max(true_peak_dbtp(x, RATE_HZ)) if audio.sample_rate_hz == RATE_HZ else max(
            true_peak_dbtp(audio.samples, audio.sample_rate_hz))
        mx = float(checks.params("peaks").get("max_true_peak_dbtp", -1))
        checks.set("peaks", 1.0 if tp <= mx else 0.0, {"true_peak_dbtp": round(tp, 2)},
                   f"true peak {tp:.2f} dBTP (max {mx:g})")

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
        risers = [sfx.riser(rng, 3.0, peak=0.25) for _ in targets]
        boom = sfx.braam(rng, 2.0)
        drone = sfx.bed(rng, total, 40, 600, -36, tilt_db_oct=-6)

        def render(folder, *, late: dict[int, int] | None = None, riser_early: int = 0, beat: bool = True,
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
                inst.write_events(folder, [rubric_event("design_rubric", 1.0)])

        render(inst.oracle)
        render(inst.mutant("two_hits_2_frames_late", ["hit_sync"], "two hits 2 frames after their cuts"),
               late={0: 2, 4: 2})
        render(inst.mutant("riser_lands_early", ["risers"], "first riser ends 8 frames before its hit"),
               riser_early=8)
        render(inst.mutant("no_silence_beat", ["braam_silence"], "drone and tail run through the beat"), beat=False)
        render(inst.mutant("hot_master", ["peaks"], "normalised to -0.1 dBFS sample peak"), gain_db=2.9)
        render(inst.mutant("no_rubric_judgment", ["design_rubric"], "no human rubric recorded: cannot judge"),
               run=False)
        m = inst.mutant("truncated_wav", ["hit_sync", "risers", "braam_silence", "peaks", "design_rubric"],
                        "render cut off (an unusable render earns no rubric credit either)")
        render(m)
        truncate_file(m / OUTPUT)
