"""R06.07.01.03-T03: fill the holes in an effects track with office ambience, crossfaded.

Work dir: fixtures/office_scene.drp (closed; placeholder), fixtures/media/office_fx_track.wav (the
effects track as the project plays it, holes = digital silence), fixtures/amb_office.wav.
Output: output/office_bg.wav. GT: gt/holes.json {fps, holes: [[start_s, end_s], ...]}.

holes_filled: no run of >= 100 samples of digital silence (all channels exactly 0, on the file's own
samples, verifiers.measure.events) inside any hole (share of holes). spectral_match: 1/3-octave levels (200 Hz–8 kHz, verifiers.measure.spectral) of
each filled region against the track's ambience in the 1 s either side; mean |Δ| per band <= 2 dB
(share of holes). crossfades_rest_intact: half for the 8 edges whose fill fade (see fades.py: the
fill is located in amb_office.wav by NCC, its per-window gain fitted with a ramp) lasts 8–12
frames; half for the null test, render minus the original track outside the holes and a 1 s margin
around them, peak <= -60 dBFS.
"""

from __future__ import annotations

import numpy as np

from verifiers.base import AgentOutputError, Checks, GTError, ScoreContext, TaskVerifier
from verifiers.measure.audio_io import load_audio
from verifiers.measure.errors import MediaError
from verifiers.measure.events import silence_runs
from verifiers.measure.identify import match_at
from verifiers.measure.spectral import third_octave_levels_db
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.synthkit import sfx
from verifiers.tasks.sound._shared.fades import fit_ramp, window_gains
from verifiers.tasks.sound._shared.render_files import (
    RATE_HZ,
    format_note,
    load_output,
    truncate_file,
    write_wav,
)

OUTPUT = "output/office_bg.wav"
TRACK = "fixtures/media/office_fx_track.wav"
AMB = "fixtures/amb_office.wav"
FPS = 24
BAND_RANGE_HZ = (200.0, 8000.0)
EDGE_SPAN_S = 0.7
NULL_MARGIN_S = 1.0


@register
class FillHoles(TaskVerifier):
    task_id = "R06.07.01.03-T03"

    def score(self, ctx: ScoreContext, checks: Checks) -> None:
        gt = ctx.gt_json("holes.json")
        try:
            fps = float(gt["fps"])
            holes = [(float(a), float(b)) for a, b in gt["holes"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise GTError(f"ground truth holes.json malformed: {exc}") from None
        try:
            orig = load_audio(ctx.input(TRACK), sample_rate_hz=RATE_HZ).samples
            amb = load_audio(ctx.input(AMB), sample_rate_hz=RATE_HZ).mono
        except MediaError as exc:
            raise GTError(f"task input unreadable: {exc}") from None
        audio, x = load_output(ctx, OUTPUT, RATE_HZ)
        if x.shape[1] != orig.shape[1]:
            raise AgentOutputError(f"{OUTPUT} is {format_note(audio)}; the track is {orig.shape[1]} channel(s)")
        n = min(len(x), len(orig))
        if len(x) < len(orig) - RATE_HZ / fps:
            raise AgentOutputError(f"{OUTPUT} is {len(x) / RATE_HZ:.2f} s, the track {len(orig) / RATE_HZ:.2f} s")
        x, orig = x[:n], orig[:n]
        mono, omono = x.mean(axis=1), orig.mean(axis=1)

        min_run = int(checks.params("holes_filled").get("max_digital_silence_samples", 100))
        native = audio.sample_rate_hz  # digital silence is judged on the file's own samples
        runs = silence_runs(audio.samples, native, min_s=min_run / native)
        per_hole = []
        for a, b in holes:
            inside = [r for r in runs if r.start_s < b and r.end_s > a]
            per_hole.append({"hole_s": [a, b], "silent_runs": len(inside),
                             "longest_ms": round(max([r.duration_s for r in inside], default=0) * 1000, 1)})
        filled = sum(h["silent_runs"] == 0 for h in per_hole)
        checks.set("holes_filled", filled / len(holes), {"holes": per_hole, "min_run_samples": min_run},
                   f"{filled}/{len(holes)} holes free of digital silence")

        max_db = float(checks.params("spectral_match").get("max_band_delta_db", 2))
        spec = []
        for a, b in holes:
            lo, hi = round(a * RATE_HZ), round(b * RATE_HZ)
            around = np.concatenate([omono[max(0, lo - RATE_HZ): lo], omono[hi: hi + RATE_HZ]])
            fill = mono[lo:hi]
            if np.all(fill == 0) or len(around) < 4096:
                spec.append({"hole_s": [a, b], "mean_abs_delta_db": None, "ok": False})
                continue
            _c, lf = third_octave_levels_db(fill, RATE_HZ, low_hz=BAND_RANGE_HZ[0], high_hz=BAND_RANGE_HZ[1],
                                            nperseg=4096)
            _c, la = third_octave_levels_db(around, RATE_HZ, low_hz=BAND_RANGE_HZ[0], high_hz=BAND_RANGE_HZ[1],
                                            nperseg=4096)
            delta = np.abs(lf - la)
            m = float(np.mean(delta[np.isfinite(delta)])) if np.isfinite(delta).any() else float("inf")
            spec.append({"hole_s": [a, b], "mean_abs_delta_db": round(m, 2), "max_abs_delta_db": round(float(np.max(delta)), 2),
                         "ok": m <= max_db})
        ok_s = sum(s["ok"] for s in spec)
        checks.set("spectral_match", ok_s / len(holes), {"holes": spec, "max_band_delta_db": max_db},
                   f"{ok_s}/{len(holes)} fills match the surrounding ambience within {max_db:g} dB per band")

        cp = checks.params("crossfades_rest_intact")
        lo_f, hi_f = float(cp.get("min_crossfade_frames", 8)), float(cp.get("max_crossfade_frames", 12))
        edges = []
        for a, b in holes:
            fill = self._aligned_fill(mono, amb, a, b)
            for edge, rising in ((a, True), (b, False)):
                if fill is None:
                    edges.append({"edge_s": edge, "fade_frames": None, "ok": False})
                    continue
                s0, s1 = round((edge - EDGE_SPAN_S) * RATE_HZ), round((edge + EDGE_SPAN_S) * RATE_HZ)
                s0, s1 = max(0, s0), min(n, s1)
                t, _g, h = window_gains(mono[s0:s1], omono[s0:s1], fill[s0:s1], RATE_HZ)
                inner = (t + s0 / RATE_HZ > a + 0.15) & (t + s0 / RATE_HZ < b - 0.15)
                h_ref = float(np.median(h[inner])) if inner.any() else float(np.max(h))
                fade = fit_ramp(t, h / h_ref if h_ref > 0 else h, rising=rising, max_len_s=1.0)
                frames = fade.length_s * fps
                edges.append({"edge_s": edge, "fade_frames": round(frames, 2), "shape": fade.shape,
                              "ok": lo_f <= frames <= hi_f})
        ok_e = sum(e["ok"] for e in edges)
        keep = np.ones(n, dtype=bool)
        for a, b in holes:
            keep[max(0, round((a - NULL_MARGIN_S) * RATE_HZ)): round((b + NULL_MARGIN_S) * RATE_HZ)] = False
        resid = (x - orig)[keep]
        null_db = 20 * np.log10(max(float(np.max(np.abs(resid))) if resid.size else 0.0, 1e-12))
        null_ok = null_db <= float(cp.get("max_null_dbfs", -60))
        checks.set("crossfades_rest_intact", 0.5 * ok_e / len(edges) + 0.5 * null_ok,
                   {"edges": edges, "null_peak_dbfs": round(null_db, 1)},
                   f"{ok_e}/{len(edges)} edges crossfaded {lo_f:g}-{hi_f:g} frames; rest of track null "
                   f"{null_db:.1f} dBFS")

    @staticmethod
    def _aligned_fill(mono: np.ndarray, amb: np.ndarray, a: float, b: float) -> np.ndarray | None:
        """The ambience as placed in this hole: locate the hole's middle 0.3 s in amb_office by NCC."""
        mid = (a + b) / 2
        seg = mono[round((mid - 0.15) * RATE_HZ): round((mid + 0.15) * RATE_HZ)]
        if len(seg) < 1000 or not np.any(seg):
            return None
        half = len(amb) / RATE_HZ / 2
        m = match_at(amb, RATE_HZ, {"fill": seg}, half, search_s=half + 0.5, length_s=0.3)[0]
        if m.ncc < 0.6:
            return None
        shift = round((mid - 0.15) * RATE_HZ) - round(m.offset_s * RATE_HZ)  # render index = amb index + shift
        out = np.zeros(len(mono))
        lo, hi = max(0, shift), min(len(mono), len(amb) + shift)
        out[lo:hi] = amb[lo - shift: hi - shift]
        return out

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        dur_s = 12.0
        n = round(dur_s * RATE_HZ)
        amb_long = np.stack([sfx.bed(rng, 3 * n, 120, 9000, -34, tilt_db_oct=-4) for _ in range(2)], axis=1)
        track = amb_long[n: 2 * n].copy()  # production background: the same office, recorded elsewhere in the take
        events = sfx.place(n, 2, [(round(t * RATE_HZ), sfx.thud(rng) * 0.5) for t in (0.6, 5.1, 11.2)])
        track += events
        holes = [(1.6, 2.4), (3.6, 6.1), (7.4, 8.0), (9.2, 10.6)]
        for a, b in holes:
            track[round(a * RATE_HZ): round(b * RATE_HZ)] = 0.0
        amb = amb_long[:n]  # fixtures/amb_office.wav
        write_wav(inst.workdir / TRACK, track)
        write_wav(inst.workdir / AMB, amb)
        (inst.workdir / "fixtures" / "office_scene.drp").write_bytes(b"DRP placeholder: closed Resolve project\n")
        (inst.workdir / "output").mkdir(parents=True, exist_ok=True)
        inst.write_json(inst.gt / "holes.json", {"fps": FPS, "holes": [list(h) for h in holes]})

        def render(xfade_frames: float = 10, skip: int | None = None, fill_gain: float = 1.0,
                   track_gain: float = 1.0) -> np.ndarray:
            out = track * track_gain
            for k, (a, b) in enumerate(holes):
                if k == skip:
                    continue
                L = xfade_frames / FPS
                lo, hi = round((a - L) * RATE_HZ), round((b + L) * RATE_HZ)
                src = amb[round((0.3 + 1.0 * k) * RATE_HZ):][: hi - lo] * fill_gain
                t = np.arange(hi - lo) / RATE_HZ
                if L > 0:
                    u_in = np.clip(t / L, 0, 1)
                    u_out = np.clip((t[-1] - t) / L, 0, 1)
                else:
                    u_in = u_out = np.ones_like(t)
                g_fill = np.sin(np.pi / 2 * np.minimum(u_in, u_out))  # equal-power
                g_orig = np.cos(np.pi / 2 * np.minimum(u_in, u_out))
                out[lo:hi] = out[lo:hi] * g_orig[:, None] + src * g_fill[:, None]
            return out

        write_wav(inst.oracle / OUTPUT, render())
        write_wav(inst.mutant("hole_left_silent", ["holes_filled", "spectral_match", "crossfades_rest_intact"],
                              "the third hole left as digital silence") / OUTPUT, render(skip=2))
        write_wav(inst.mutant("fill_6db_low", ["spectral_match"], "fills 6 dB under the surrounding ambience")
                  / OUTPUT, render(fill_gain=0.5))
        write_wav(inst.mutant("butt_splices", ["crossfades_rest_intact"], "fills cut in without crossfades")
                  / OUTPUT, render(xfade_frames=0))
        write_wav(inst.mutant("crossfades_30_frames", ["crossfades_rest_intact"], "30-frame crossfades") / OUTPUT,
                  render(xfade_frames=30))
        write_wav(inst.mutant("track_renormalised", ["crossfades_rest_intact"], "whole track 1 dB louder") / OUTPUT,
                  render(track_gain=10 ** (1 / 20)))
        truncate_file(write_wav(inst.mutant("truncated_wav", ["holes_filled", "spectral_match",
                                                             "crossfades_rest_intact"], "render cut off") / OUTPUT,
                                render()))
