"""R06.04.01.04-T16: reaction video — trailer full frame, reaction cam as a rounded PIP top-right,
synced clap-to-explosion, trailer ducked under the reactor's speech.

Work dir: fixtures/trailer.mp4, fixtures/reaction_cam.mp4. Output: the one .mp4 in out/.
GT: gt/sync.json = {"explosion_s" (trailer time), "clap_s" (reaction time), "speech_s": [[a, b], ...]
(reactor speech, reaction time)}; gt/render.json = instance scale (synthetic only).
"""

from __future__ import annotations

import cv2
import numpy as np

from verifiers.base import Checks, ScoreContext, TaskVerifier
from verifiers.measure.audio_io import load_audio
from verifiers.measure.errors import MediaError
from verifiers.measure.fingerprint import FrameIndex, match_frame
from verifiers.measure.frames import iter_frames
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.synthkit.shortform_video import clip_frames, resize, write_video
from verifiers.tasks.shortform._shared.clips import MIN_NCC, ClipMatcher
from verifiers.tasks.shortform._shared.export import instance_scale, open_output

FPS = 24.0
SR_HZ = 48_000
SCALE = 1 / 6
DIFF_LEVEL = 40  # grey difference that marks PIP pixels against the trailer frame
WIN_S = 0.1


def _pip_mask(frame: np.ndarray, trailer: np.ndarray) -> np.ndarray:
    d = np.abs(frame.astype(np.int16) - trailer.astype(np.int16)).max(axis=2)
    mask = (d > DIFF_LEVEL).astype(np.uint8)
    return cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8)) > 0


@register
class ReactionPip(TaskVerifier):
    task_id = "R06.04.01.04-T16"

    def score(self, ctx: ScoreContext, checks: Checks) -> None:
        sync = ctx.gt_json("sync.json")
        trailer_p, reaction_p = ctx.input("fixtures/trailer.mp4"), ctx.input("fixtures/reaction_cam.mp4")
        trailer = {"t": [], "f": []}
        for fr in iter_frames(trailer_p):
            trailer["t"].append(fr.t_s)
            trailer["f"].append(fr.rgb)
        # the trailer is recognised from its bottom half, which a top-right PIP never covers
        t_index = FrameIndex.from_frames([f[f.shape[0] // 2:] for f in trailer["f"]], trailer["t"])
        r_match = ClipMatcher({"reaction": reaction_p})
        scale = instance_scale(ctx)
        opened = open_output(ctx, checks, None)
        if opened is None:
            return
        path, facts = opened
        fps = facts["fps"] or FPS
        gp = checks.params("pip_geometry")
        boxes, corners, off_t, off_r = [], [], [], []
        for fr in iter_frames(path, every_s=0.5):
            m = match_frame(fr.rgb[fr.rgb.shape[0] // 2:], t_index)
            if m.ncc < MIN_NCC:
                continue
            st, idx = m.t_s, m.index
            off_t.append(st - fr.t_s)
            src = trailer["f"][idx]
            if src.shape != fr.rgb.shape:
                continue
            mask = _pip_mask(fr.rgb, src)
            n, lbl, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8))
            if n < 2:
                continue
            k = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
            x, y, w, h = (int(v) for v in stats[k, :4])
            blob = lbl == k
            c = 2  # corner squares of 2x2 px: empty when the radius is >= ~3 px
            corner_fill = np.mean([blob[y:y + c, x:x + c].mean(), blob[y:y + c, x + w - c:x + w].mean(),
                                   blob[y + h - c:y + h, x:x + c].mean(), blob[y + h - c:y + h, x + w - c:x + w].mean()])
            edge_fill = float(blob[y:y + c, x + w // 4: x + 3 * w // 4].mean())
            rounded = bool(corner_fill < 0.5 and edge_fill > 0.7)
            rl, rt, _, _ = r_match.identify(fr.rgb[y:y + h, x:x + w])
            if rl is None:
                continue  # no reaction in this sample (before it starts): no corners to judge
            off_r.append(rt - fr.t_s)
            corners.append(rounded)
            boxes.append((x, y, w, h))
        if not boxes:
            checks.fail_rest("no picture-in-picture found over the trailer")
            return
        x, y, w, h = np.median(np.array(boxes), axis=0)
        fw = facts["width_px"]
        want_w, tol_w = gp["width_px"] * scale, max(1.0, gp["width_tolerance_px"] * scale)
        want_m, tol_m = gp["margin_px"] * scale, max(1.0, gp["margin_tolerance_px"] * scale)
        top_m, right_m = y, fw - (x + w)
        geo_ok = abs(w - want_w) <= tol_w and abs(top_m - want_m) <= tol_m and abs(right_m - want_m) <= tol_m
        checks.set("pip_geometry", float(geo_ok), {"bbox_px": [x, y, w, h], "top_margin_px": top_m,
                                                   "right_margin_px": right_m, "want_width_px": want_w},
                   f"PIP {w:.0f} px wide, margins top {top_m:.0f} / right {right_m:.0f} px")
        share = float(np.mean(corners))
        checks.set("rounded_corners", float(share >= 0.8), {"rounded_share": share},
                   f"corners rounded in {share:.0%} of samples")
        if not off_r:
            checks.fail("sync", "the reaction cam is not recognisable in the PIP")
            checks.fail("ducking", "the reaction cam is not recognisable in the PIP")
            return
        ot, orr = float(np.median(off_t)), float(np.median(off_r))
        err = abs((sync["explosion_s"] - ot) - (sync["clap_s"] - orr))
        tol = checks.params("sync")["tolerance_frames"] / fps + 1e-6
        checks.set("sync", float(err <= tol), {"error_s": err}, f"clap {err * fps:.1f} frames from the explosion")
        try:
            out = load_audio(path, sample_rate_hz=SR_HZ).mono
            tr = load_audio(trailer_p, sample_rate_hz=SR_HZ).mono
        except MediaError as exc:
            checks.fail("ducking", f"no usable audio: {exc}")
            return
        # trailer gain in the mix per window: projection of the output on the aligned trailer audio
        shift = round(ot * SR_HZ)  # output sample i carries trailer sample i + shift
        ref = np.zeros_like(out)
        o0, s0 = max(0, -shift), max(0, shift)
        n = max(0, min(len(out) - o0, len(tr) - s0))
        ref[o0:o0 + n] = tr[s0:s0 + n]
        win = int(WIN_S * SR_HZ)
        gains, times = [], []
        for s in range(0, len(out) - win, win):
            r, o = ref[s:s + win], out[s:s + win]
            e = float(r @ r)
            if e > 1e-6:
                gains.append(20 * np.log10(max(abs(float(o @ r)) / e, 1e-6)))
                times.append((s + win / 2) / SR_HZ)
        gains, times = np.array(gains), np.array(times)
        speech = np.zeros(len(times), bool)
        edge = np.zeros(len(times), bool)
        for a, b in sync["speech_s"]:
            a, b = a - orr, b - orr
            speech |= (times > a + 0.3) & (times < b - 0.3)
            edge |= (times > a - 0.3) & (times < b + 0.3)
        rest = ~edge
        if speech.sum() < 2 or rest.sum() < 2:
            checks.fail("ducking", "reactor speech does not fall inside the export")
            return
        duck = float(np.median(gains[speech]) - np.median(gains[rest]))
        dp = checks.params("ducking")
        ok = abs(duck - dp["duck_db"]) <= dp["tolerance_db"]
        checks.set("ducking", float(ok), {"duck_db": duck}, f"trailer ducked {duck:.1f} dB under speech")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        w, h = 320, 180
        dur_s = 6.0
        n = int(dur_s * FPS)
        sync = {"explosion_s": 3.0, "clap_s": 2.0, "speech_s": [[2.5, 4.0]]}
        tv = clip_frames(int(rng.integers(1 << 30)), n, w, h, FPS)
        rv = clip_frames(int(rng.integers(1 << 30)), n, w, h, FPS)
        t = np.arange(int(dur_s * SR_HZ)) / SR_HZ
        r = np.random.default_rng(int(rng.integers(1 << 30)))
        ta = (0.2 * r.standard_normal(len(t)) * (0.6 + 0.4 * np.sin(2 * np.pi * 0.7 * t))).astype(np.float32)
        ra = np.zeros(len(t), np.float32)
        a, b = (int(v * SR_HZ) for v in sync["speech_s"][0])
        ra[a:b] = 0.2 * np.sin(2 * np.pi * 180 * t[a:b]) * (0.6 + 0.4 * np.sin(2 * np.pi * 4 * t[a:b]))
        write_video(inst.workdir / "fixtures/trailer.mp4", tv, FPS, audio=ta, sample_rate_hz=SR_HZ)
        write_video(inst.workdir / "fixtures/reaction_cam.mp4", rv, FPS, audio=ra, sample_rate_hz=SR_HZ)
        inst.write_json(inst.gt / "sync.json", sync)
        inst.write_json(inst.gt / "render.json", {"scale": SCALE})
        (inst.workdir / "out").mkdir(parents=True, exist_ok=True)

        def render(pip_w=96, margin=4, radius=6, lag_frames=0, duck_db=-12.0):
            lead = round((sync["explosion_s"] - sync["clap_s"]) * FPS) + lag_frames  # reaction starts here
            pip_h = round(pip_w * 9 / 16)
            mask = np.zeros((pip_h, pip_w), np.uint8)
            cv2.rectangle(mask, (radius, 0), (pip_w - 1 - radius, pip_h - 1), 1, -1)
            cv2.rectangle(mask, (0, radius), (pip_w - 1, pip_h - 1 - radius), 1, -1)
            for cx, cy in ((radius, radius), (pip_w - 1 - radius, radius), (radius, pip_h - 1 - radius),
                           (pip_w - 1 - radius, pip_h - 1 - radius)):
                cv2.circle(mask, (cx, cy), radius, 1, -1)
            m = mask.astype(bool)[..., None]
            frames = []
            for i in range(n):
                f = tv[i].copy()
                j = i - lead
                if 0 <= j < n:
                    p = resize(rv[j], pip_w, pip_h)
                    x0 = w - margin - pip_w
                    region = f[margin:margin + pip_h, x0:x0 + pip_w]
                    f[margin:margin + pip_h, x0:x0 + pip_w] = np.where(m, p, region)
                frames.append(f)
            shift = int(lead / FPS * SR_HZ)
            rr = np.zeros(len(t), np.float32)
            rr[shift:] = ra[: len(t) - shift]
            g = np.ones(len(t), np.float32)
            a2, b2 = a + shift, b + shift
            g[a2:b2] = 10 ** (duck_db / 20)
            return frames, ta * g + rr

        def solve(folder, **kw):
            frames, audio = render(**kw)
            write_video(folder / "out/reaction.mp4", frames, FPS, audio=audio, sample_rate_hz=SR_HZ)

        solve(inst.oracle)
        solve(inst.mutant("pip_too_big", ["pip_geometry"], "PIP at 40% width"), pip_w=128)
        solve(inst.mutant("square_corners", ["rounded_corners"], "corner radius 0"), radius=0)
        solve(inst.mutant("reaction_3_frames_late", ["sync"], "clap 3 frames after the explosion"), lag_frames=3)
        solve(inst.mutant("duck_6db", ["ducking"], "trailer only ducked 6 dB"), duck_db=-6.0)
