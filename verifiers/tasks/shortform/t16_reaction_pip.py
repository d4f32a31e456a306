"""R06.04.01.04-T16: reaction video — trailer full frame, reaction cam as a rounded PIP top-right,
synced clap-to-explosion, trailer ducked under the reactor's speech.

Work dir: fixtures/trailer.mp4, fixtures/reaction_cam.mp4. Output: the one .mp4 in out/.
GT: gt/sync.json = {"explosion_s" (trailer time), "clap_s" (reaction time), "speech_s": [[a, b], ...]
(reactor speech, reaction time)}; gt/render.json = instance scale (synthetic only).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from scipy import signal

from verifiers.base import AgentOutputError
from verifiers.checks import Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.audio_io import load_audio
from verifiers.measure.errors import MediaError
from verifiers.measure.fingerprint import FrameIndex, FrameMatch
from verifiers.measure.frames import Frame, iter_frames
from verifiers.params import NoParams
from verifiers.paramtypes.shortform import Ducking, PipGeometry, SyncFrames
from verifiers.synth import InstanceWriter
from verifiers.synthkit.shortform_video import clip_frames, resize, write_video
from verifiers.tasks.shortform._shared.cases import register_video_cases
from verifiers.tasks.shortform._shared.clips import MIN_NCC, ClipMatcher, identify_frame
from verifiers.tasks.shortform._shared.export import ExportTask, instance_scale
from verifiers.tasks.shortform._shared.luma import frame_luma, luma_codes, shrink_by_chroma_bleed

TASK = "R06.04.01.04-T16"
N = check_names(TASK)


class SyncFile(GTFile, file="sync.json", task=TASK):
    """gt/sync.json: the sync points of the trailer and the reaction, and where the reactor speaks."""

    explosion_s: float = gt_field(doc="the explosion in trailer time")
    clap_s: float = gt_field(doc="the clap in reaction time")
    speech_s: list[list[float]] = gt_field(doc="[start, end] of the reactor's speech (reaction time)")

    def validate(self) -> None:
        self.expect(all(len(s) == 2 and s[0] < s[1] for s in self.speech_s), "speech_s",
                    "every phrase is [start, end] with start < end")
FPS = 24.0
SR_HZ = 48_000
SCALE = 1 / 6
DIFF_LEVEL = 40  # R'G'B' max-channel difference that marks PIP colour against the trailer frame
# Y' difference that marks PIP pixels against the trailer frame. Outside the PIP the export is the
# trailer through a second H.264 generation: |ΔY'| there is codec noise, at most 6 codes (99.99th
# percentile 3.1) on the seed-0 synthetic oracle. 12 = twice that maximum.
LUMA_DIFF_LEVEL = 12
WIN_S = 0.1
AUDIO_LAG_S = 0.1


def _pip_mask(fr: Frame, trailer: np.ndarray) -> np.ndarray:
    """PIP pixels: where Y' differs from the trailer (full resolution, so its edge and 2-px corners
    are where the compositor put them), plus where colour differs once the 4:2:0 chroma bleed is
    eroded away (isoluminant PIP content). A mask on R'G'B' alone grows one pixel past every edge
    (chroma interpolated across it), which fills the corner squares `_rounded` looks at."""
    dy = np.abs(frame_luma(fr) - luma_codes(trailer, fr.tags.matrix))
    d = np.abs(fr.rgb.astype(np.int16) - trailer.astype(np.int16)).max(axis=2)
    mask = ((dy > LUMA_DIFF_LEVEL) | shrink_by_chroma_bleed(d > DIFF_LEVEL)).astype(np.uint8)
    return cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8)) > 0


@dataclass(frozen=True)
class Trailer:
    """The trailer's frames and an index recognising it from its bottom half (a top-right PIP never
    covers it)."""

    frames: list[np.ndarray]
    index: FrameIndex

    def moment(self, rgb: np.ndarray) -> FrameMatch | None:
        """The trailer frame an export frame shows, found from its bottom half (`clips.identify_frame`:
        a caption or sticker there is scored on what it leaves visible); None below MIN_NCC."""
        m = identify_frame(rgb[rgb.shape[0] // 2:], self.index)
        return m if m.ncc >= MIN_NCC else None


@dataclass(frozen=True)
class PipTrack:
    """Per sampled output frame showing the trailer and the reaction: the PIP box, whether its
    corners are rounded, and the two sources' time offsets (source time - output time)."""

    boxes: list[tuple[int, int, int, int]]
    corners: list[bool]
    blobs: list[np.ndarray]  # the PIP mask inside its box (1-px margin), per sample
    off_t: list[float]
    off_r: list[float]


#: a row or column belongs to the PIP's box when the mask fills at least this share of it (seen:
#: stray rows of H.264 ringing outside the PIP 0.01-0.10; an isoluminant edge row that only colour
#: finds, eroded by shrink_by_chroma_bleed, 0.3-0.4; solid rows 0.77-0.98)
BOX_FILL = 0.25
#: the corners are judged on the rows and columns the mask mostly fills (a partly eroded edge row
#: would put the 2x2 corner squares and the edge test on a row that is mostly empty)
CORE_FILL = 0.5


def _core_box(blob: np.ndarray, x: int, y: int, w: int, h: int, min_fill: float) -> tuple[int, int, int, int]:
    """The part of the blob's bounding box whose rows and columns the mask fills by ≥ `min_fill`.
    The bounding box alone is stretched by a few stray pixels: ringing of a third H.264 generation
    1-4 rows outside the PIP (seed 11, CRF 23: top margin read 2 px instead of 4), and an edge row
    where PIP and trailer share their luma, found only by colour and eroded with the chroma bleed
    (seed 5: the corner squares sat on that nearly empty row)."""
    inner = blob[y:y + h, x:x + w]
    rows = np.flatnonzero(inner.mean(axis=1) >= min_fill)
    cols = np.flatnonzero(inner.mean(axis=0) >= min_fill)
    if len(rows) < 4 or len(cols) < 4:
        return x, y, w, h
    return x + int(cols[0]), y + int(rows[0]), int(cols[-1] - cols[0] + 1), int(rows[-1] - rows[0] + 1)


def _rounded(blob: np.ndarray, x: int, y: int, w: int, h: int) -> bool:
    x, y, w, h = _core_box(blob, x, y, w, h, CORE_FILL)
    c = 2  # corner squares of 2x2 px: empty when the radius is >= ~3 px
    corner_fill = np.mean([blob[y:y + c, x:x + c].mean(), blob[y:y + c, x + w - c:x + w].mean(),
                           blob[y + h - c:y + h, x:x + c].mean(), blob[y + h - c:y + h, x + w - c:x + w].mean()])
    edge_fill = float(blob[y:y + c, x + w // 4: x + 3 * w // 4].mean())
    return bool(corner_fill < 0.5 and edge_fill > 0.7)


def mean_blob_rounded(blobs: list[np.ndarray]) -> bool:
    """Corners judged on the mean PIP mask of the samples of the commonest box size: codec noise at
    a third H.264 generation (CRF 23 seen: 60 % of single samples) fills a corner square of one
    sample here and another there; a static PIP's own shape survives the mean."""
    if not blobs:
        return False
    sizes = [b.shape for b in blobs]
    common = max(set(sizes), key=sizes.count)
    mean = np.mean([b for b in blobs if b.shape == common], axis=0) > 0.5
    n, lbl, stats, _ = cv2.connectedComponentsWithStats(mean.astype(np.uint8))
    if n < 2:
        return False
    k = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    x, y, w, h = (int(v) for v in stats[k, :4])
    return _rounded(lbl == k, x, y, w, h)


def track_pip(path: Path, trailer: Trailer, r_match: ClipMatcher) -> PipTrack:
    out = PipTrack([], [], [], [], [])
    for fr in iter_frames(path, every_s=0.5):
        m = trailer.moment(fr.rgb)
        if m is None:
            continue
        out.off_t.append(m.t_s - fr.t_s)
        src = trailer.frames[m.index]
        if src.shape != fr.rgb.shape:
            continue
        mask = _pip_mask(fr, src)
        n, lbl, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8))
        if n < 2:
            continue
        k = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
        x, y, w, h = _core_box(lbl == k, *(int(v) for v in stats[k, :4]), BOX_FILL)
        rl, rt, _, _ = r_match.identify(fr.rgb[y:y + h, x:x + w])
        if rl is None:
            continue  # no reaction in this sample (before it starts): no corners to judge
        out.off_r.append(rt - fr.t_s)
        out.corners.append(_rounded(lbl == k, x, y, w, h))
        out.blobs.append((lbl[max(0, y - 1):y + h + 1, max(0, x - 1):x + w + 1] == k).astype(np.float32))
        out.boxes.append((x, y, w, h))
    return out


def trailer_gains_db(out: np.ndarray, tr: np.ndarray, ot_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Trailer gain in the mix per WIN_S window (projection of the output on the aligned trailer
    audio), with the window centre times."""
    def placed(shift: int) -> np.ndarray:  # output sample i carries trailer sample i + shift
        ref = np.zeros_like(out)
        o0, s0 = max(0, -shift), max(0, shift)
        n = max(0, min(len(out) - o0, len(tr) - s0))
        ref[o0:o0 + n] = tr[s0:s0 + n]
        return ref

    # the picture dates the trailer to a frame (33 ms at 29.97 fps) and AAC priming moves sound a
    # few ms: the projection needs the audio aligned to the sample, so the lag is refined by
    # cross-correlation within ±AUDIO_LAG_S of the picture's offset
    shift = round(ot_s * SR_HZ)
    ref = placed(shift)
    lag = int(AUDIO_LAG_S * SR_HZ)
    c = signal.correlate(out, ref, mode="full", method="fft")[len(ref) - 1 - lag: len(ref) + lag]
    if len(c) == 2 * lag + 1 and np.any(c):
        ref = placed(shift - (int(np.argmax(np.abs(c))) - lag))
    win = int(WIN_S * SR_HZ)
    gains, times = [], []
    for s in range(0, len(out) - win, win):
        r, o = ref[s:s + win], out[s:s + win]
        e = float(r @ r)
        if e > 1e-6:
            gains.append(20 * np.log10(max(abs(float(o @ r)) / e, 1e-6)))
            times.append((s + win / 2) / SR_HZ)
    return np.array(gains), np.array(times)


def speech_masks(times: np.ndarray, speech_s: list, orr_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Windows well inside reactor speech, and windows clear of it (±0.3 s), in output time."""
    speech = np.zeros(len(times), bool)
    edge = np.zeros(len(times), bool)
    for a, b in speech_s:
        a, b = a - orr_s, b - orr_s
        speech |= (times > a + 0.3) & (times < b - 0.3)
        edge |= (times > a - 0.3) & (times < b + 0.3)
    return speech, ~edge


class ReactionPip(ExportTask, output=None):
    task_id = TASK

    @provides
    def sync_gt(self) -> SyncFile:
        return self.ctx.gt_typed(SyncFile)

    @provides
    def trailer(self) -> Trailer:
        times, frames = [], []
        for fr in iter_frames(self.ctx.input("fixtures/trailer.mp4")):
            times.append(fr.t_s)
            frames.append(fr.rgb)
        return Trailer(frames, FrameIndex.from_frames([f[f.shape[0] // 2:] for f in frames], times))

    @provides
    def pip(self) -> PipTrack:
        r_match = ClipMatcher({"reaction": self.ctx.input("fixtures/reaction_cam.mp4")})
        track = track_pip(self.export.path, self.trailer, r_match)
        if not track.boxes:
            raise AgentOutputError("no picture-in-picture found over the trailer")
        return track

    @provides
    def offsets_s(self) -> tuple[float, float]:
        """Median (trailer, reaction) offsets; the reaction must be recognisable in the PIP."""
        if not self.pip.off_r:
            raise AgentOutputError("the reaction cam is not recognisable in the PIP")
        return float(np.median(self.pip.off_t)), float(np.median(self.pip.off_r))

    @check(N.pip_geometry)
    def pip_geometry(self, p: PipGeometry, curve: Curve) -> Result:
        scale = instance_scale(self.ctx)
        x, y, w, h = np.median(np.array(self.pip.boxes), axis=0)
        fw = self.export.facts["width_px"]
        want_w, tol_w = p.width_px * scale, max(1.0, p.width_tolerance_px * scale)
        want_m, tol_m = p.margin_px * scale, max(1.0, p.margin_tolerance_px * scale)
        top_m, right_m = y, fw - (x + w)
        geo_ok = abs(w - want_w) <= tol_w and abs(top_m - want_m) <= tol_m and abs(right_m - want_m) <= tol_m
        return Result(curve.passes(geo_ok), {"bbox_px": [x, y, w, h], "top_margin_px": top_m,
                                             "right_margin_px": right_m, "want_width_px": want_w},
                      f"PIP {w:.0f} px wide, margins top {top_m:.0f} / right {right_m:.0f} px")

    @check(N.rounded_corners)
    def rounded_corners(self, p: NoParams, curve: Curve) -> Result:
        share = float(np.mean(self.pip.corners))
        mean_rounded = mean_blob_rounded(self.pip.blobs)
        return Result(curve.passes(share >= 0.8 or mean_rounded), {"rounded_share": share, "mean_mask_rounded": mean_rounded},
                      f"corners rounded in {share:.0%} of samples; on the samples' mean mask: {mean_rounded}")

    @check(N.sync)
    def sync(self, p: SyncFrames, curve: Curve) -> Result:
        ot, orr = self.offsets_s
        fps = self.export.facts["fps"] or FPS
        err = abs((self.sync_gt.explosion_s - ot) - (self.sync_gt.clap_s - orr))
        tol = p.tolerance_frames / fps + 1e-6
        return Result(curve.passes(err <= tol), {"error_s": err}, f"clap {err * fps:.1f} frames from the explosion")

    @check(N.ducking)
    def ducking(self, p: Ducking, curve: Curve) -> Result:
        ot, orr = self.offsets_s
        try:
            out = load_audio(self.export.path, sample_rate_hz=SR_HZ).mono
            tr = load_audio(self.ctx.input("fixtures/trailer.mp4"), sample_rate_hz=SR_HZ).mono
        except MediaError as exc:
            return Result.fail(f"no usable audio: {exc}")
        gains, times = trailer_gains_db(out, tr, ot)
        speech, rest = speech_masks(times, self.sync_gt.speech_s, orr)
        if speech.sum() < 2 or rest.sum() < 2:
            return Result.fail("reactor speech does not fall inside the export")
        duck = float(np.median(gains[speech]) - np.median(gains[rest]))
        ok = abs(duck - p.duck_db) <= p.tolerance_db
        return Result(curve.passes(ok), {"duck_db": duck}, f"trailer ducked {duck:.1f} dB under speech")

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
        register_video_cases(inst, "out/reaction.mp4", "fixtures/trailer.mp4")
        solve(inst.mutant("pip_too_big", [N.pip_geometry], "PIP at 40% width"), pip_w=128)
        solve(inst.mutant("square_corners", [N.rounded_corners], "corner radius 0"), radius=0)
        solve(inst.mutant("reaction_3_frames_late", [N.sync], "clap 3 frames after the explosion"), lag_frames=3)
        solve(inst.mutant("duck_6db", [N.ducking], "trailer only ducked 6 dB"), duck_db=-6.0)
