"""R06.04.01.04-T11: speed-ramp a 240 fps kickflip: 2× before takeoff, 0.3× on the peak (GT source
frames 1820-1940), 2× after landing, smooth transitions, 6-8 s, 1080x1920 with the skater centred.

Work dir: fixtures/kickflip.mp4 (landscape, 240 fps). Output: out/kickflip_ramp.mp4.
GT: gt/trick.json = {"takeoff_frame", "landing_frame", "boxes": [[x, y, w, h] per source frame,
source px]} (skater); gt/render.json = instance scale (synthetic only). The peak window is the
catalog's peak_frames.

The speed curve is measured, not read from a project file: every output frame is mapped to its
source frame index and the full-height vertical strip it shows by normalised template matching
(TM_CCOEFF_NORMED) of the output, scaled to the source's matching height, against the source
frames. Matching runs forward from the previous match (a window of source frames covering speeds
up to 4×), falling back to a search of the whole source when the match is lost. Speed at an
output frame = source frames advanced per output frame × out_fps / src_fps.

- peak_slowmo: least-squares slope of source index vs output frame over the output frames
  showing the peak window (it must be shown, ≥ 5 frames), within speed ± tolerance.
- fast_sections: before takeoff and after landing (half each): ≥ 90 % of output frames whose
  ±3-frame neighbourhood lies in the section run at speed ± tolerance (7-frame slope).
- smooth_curve: per-frame speed = central difference of the index (single-frame spikes removed); no change between neighbouring output
  frames above max_speed_jump_x (speed units per output frame). Rule 3 (issue 21): smoothness is
  a quality of a ramp, so it pays only with one present: ≥ MIN_PEAK_FRAMES output frames whose
  7-frame speed is the slow-mo (peak_slowmo's speed ± tolerance) and as many at the fast speed
  (fast_sections'), anywhere. The raw clip handed back (a constant 1x) 15 → 0; the constant_1x
  mutant now also loses smooth_curve; slowmo_early (a ramp, at the wrong place) keeps it.
- framing_duration: a third each for duration, size (× instance scale) and the skater's GT box
  centre inside the middle center_band_pct of the strip on ≥ min_frames_pct of frames.

Limits: the output must show the full source height (a further zoom would need a scale search).
An export the audit saw written by ffmpeg/ffprobe fails every check (not a CapCut export).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from verifiers.base import AgentOutputError, GTError
from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.evidence import AuditWrite
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.container import open_container, video_stream
from verifiers.measure.errors import MediaError
from verifiers.measure.streams import probe
from verifiers.paramtypes.shortform import FramingDuration, PeakSlowmo, SmoothCurve, SpeedTolerance
from verifiers.provenance import outside_writes, writer_name
from verifiers.synth import InstanceWriter
from verifiers.synthkit.shortform_video import write_video
from verifiers.synthkit.t11_kickflip import ramp_curve, ramp_positions, render, skater_source
from verifiers.tasks.shortform._shared.cases import (
    AT_2997,
    CHEAP_BASELINES,
    CHEAP_EXPORTS,
    register_video_cases,
)
from verifiers.tasks.shortform._shared.export import (
    instance_scale,
    probe_artifact,
    size_ok,
    truncation,
    video_facts,
)

TASK = "R06.04.01.04-T11"
N = check_names(TASK)
OUTPUT = "out/kickflip_ramp.mp4"
SOURCE = "fixtures/kickflip.mp4"
MATCH_H_PX = 72  # source and output are compared at this height
MIN_MATCH = 0.6  # below: the output frame is not (a strip of) this source frame
SURE_MATCH = 0.9  # a forward match at least this good is not searched further
X_DRIFT = 4  # px (matching scale) the strip may move between output frames before a wider search
EXHAUSTIVE_CHUNK = 256
MAX_FULL_SEARCHES = 12
PLANAR_YUV = ("yuv420p", "yuvj420p")  # source frames per stacked matchTemplate
MAX_SPEED = 4.0  # forward search window, in speed units
FAST_WINDOW = 3  # ± output frames of the fast-section slope
MIN_FAST_FRACTION = 0.9
MIN_PEAK_FRAMES = 5
MIN_SHOWN_FRACTION = 0.5  # an export mostly not showing the source earns no framing/duration credit


def advancing_fraction(idx: np.ndarray, good: np.ndarray) -> float:
    """Share of matched output frames whose source frame lies after the previous matched one's:
    the source plays (issue 21: a first frame held for the whole length kept smooth_curve and
    framing_duration, 40 points). Even the 0.3x peak advances 2.4 source frames (240 fps) a frame."""
    ii = np.asarray(idx)[np.asarray(good, dtype=bool)]
    return float(np.mean(np.diff(ii) > 0)) if len(ii) > 1 else 0.0
# TM_CCOEFF_NORMED of a flat template is undefined (OpenCV gives black frames high scores):
# below this grey-level spread an output frame matches nothing
FLAT_STD = 2.0


def iter_luma(path: Path, height_px: int) -> list[np.ndarray]:
    """Grey frames scaled to `height_px` (aspect kept). Luma straight from the decoder: NCC ignores
    gain and offset, so no colour conversion is needed (4x cheaper than RGB on 240 fps sources)."""
    import av

    container = open_container(path)
    try:
        vs = video_stream(container, path)
        vs.thread_type = "AUTO"
        out = []
        try:
            for frame in container.decode(vs):
                if frame.format.name in PLANAR_YUV:  # the Y plane as is (reformat costs ~1 ms a frame)
                    y = frame.to_ndarray()[:frame.height]
                else:
                    y = frame.reformat(format="gray").to_ndarray()
                if y.shape[0] != height_px:
                    w = max(2, round(y.shape[1] * height_px / y.shape[0]))
                    y = cv2.resize(y, (w, height_px), interpolation=cv2.INTER_AREA)
                out.append(np.ascontiguousarray(y))
        except av.error.FFmpegError as exc:
            raise MediaError(f"{path.name}: video cannot be decoded after {len(out)} frames ({exc})") from None
        if not out:
            raise MediaError(f"{path.name}: no decodable video frames")
        return out
    finally:
        container.close()


def ncc_near(frames: np.ndarray, tmpl: np.ndarray, x_lo: int, x_hi: int) -> np.ndarray:
    """TM_CCOEFF_NORMED of `tmpl` in each of `frames` (n, h, w) at strip x in [x_lo, x_hi]: (n, x)."""
    tw = tmpl.shape[1]
    win = sliding_window_view(frames[:, :, x_lo:x_hi + tw].astype(np.float32), tw, axis=2)  # (n, h, nx, tw)
    t = tmpl.astype(np.float32)
    t -= t.mean()
    dots = np.einsum("nyxw,yw->nx", win, t)
    s1 = win.sum(axis=(1, 3))
    s2 = np.einsum("nyxw,nyxw->nx", win, win)
    var = np.maximum(s2 - s1 * s1 / t.size, 1e-6)
    return dots / (np.sqrt(var) * max(float(np.linalg.norm(t)), 1e-6))


class StripLocator:
    """Which source frame and which full-height vertical strip an output frame shows."""

    def __init__(self, source: Path) -> None:
        try:
            self.frames = np.stack(iter_luma(source, MATCH_H_PX))
        except MediaError as exc:
            raise GTError(f"{SOURCE}: {exc}") from None
        self.width_px = self.frames.shape[2]

    def template(self, grey: np.ndarray) -> np.ndarray:
        h, w = grey.shape
        tw = max(4, min(self.width_px, round(MATCH_H_PX * w / h)))
        return cv2.resize(grey, (tw, MATCH_H_PX), interpolation=cv2.INTER_AREA)

    def everywhere(self, tmpl: np.ndarray, lo: int = 0, hi: int | None = None) -> tuple[int, int, float]:
        """Best (source index, strip x, score) over frames [lo, hi) and every x: one matchTemplate per
        chunk of frames stacked vertically (rows that straddle two frames are ignored)."""
        hi = len(self.frames) if hi is None else hi
        h = MATCH_H_PX
        top = (-1, 0, -2.0)
        for a in range(lo, hi, EXHAUSTIVE_CHUNK):
            b = min(hi, a + EXHAUSTIVE_CHUNK)
            r = cv2.matchTemplate(self.frames[a:b].reshape(-1, self.width_px), tmpl, cv2.TM_CCOEFF_NORMED)
            r = r[::h][: b - a]  # rows where the template sits exactly on one frame
            k = int(np.argmax(r))
            j, x = divmod(k, r.shape[1])
            if r[j, x] > top[2]:
                top = (a + j, x, float(r[j, x]))
        return top

    def track(self, greys: list[np.ndarray], step: float) -> list[tuple[int, int, int, float]]:
        """Per output frame (source index, strip x, strip width, score), matching forward from the
        previous match (frames up to MAX_SPEED ahead, strip within ±X_DRIFT px); when that scores
        below SURE_MATCH, every x of those frames; below MIN_MATCH, the whole source (at most MAX_FULL_SEARCHES times: an unrelated video
        would otherwise cost a full search per frame)."""
        n = len(self.frames)
        reach = int(np.ceil(MAX_SPEED * step)) + 2
        out, prev, full_searches = [], None, 0
        for grey in greys:
            tmpl = self.template(grey)
            tw = tmpl.shape[1]
            if float(tmpl.std()) < FLAT_STD:  # a flat (black) frame shows no source frame at all
                out.append((-1, 0, tw, 0.0))
                continue
            hit = None
            if prev is not None:
                j0, j1 = max(0, prev[0] - 2), min(n, prev[0] + reach + 1)
                x_lo, x_hi = max(0, prev[1] - X_DRIFT), min(self.width_px - tw, prev[1] + X_DRIFT)
                if x_hi >= x_lo:
                    r = ncc_near(self.frames[j0:j1], tmpl, x_lo, x_hi)
                    j, x = divmod(int(np.argmax(r)), r.shape[1])
                    hit = (j0 + j, x_lo + x, float(r[j, x]))
                if hit is None or hit[2] < SURE_MATCH:
                    hit = self.everywhere(tmpl, j0, j1)
            if (hit is None or hit[2] < MIN_MATCH) and full_searches < MAX_FULL_SEARCHES:
                full_searches += 1
                hit = self.everywhere(tmpl)
            if hit is None:
                hit = (-1, 0, -2.0)
            out.append((hit[0], hit[1], tw, hit[2]))
            if hit[2] >= MIN_MATCH:
                prev = hit
        return out


class TrickFile(GTFile, file="trick.json", task=TASK):
    """gt/trick.json: the trick's takeoff and landing, and the rider on every source frame."""

    takeoff_frame: int = gt_field(doc="source frame of the takeoff")
    landing_frame: int = gt_field(doc="source frame of the landing")
    boxes_px: list[list[float]] = gt_field("boxes", "per source frame: the rider's x, y, w, h")

    def validate(self) -> None:
        self.expect(bool(self.boxes_px) and all(len(b) == 4 for b in self.boxes_px), "boxes_px",
                    "must be [x, y, w, h] per frame")
        self.expect(0 < self.takeoff_frame < self.landing_frame < len(self.boxes_px), "landing_frame",
                    "must be 0 < takeoff_frame < landing_frame < frames")


def read_trick(gt: TrickFile) -> tuple[int, int, np.ndarray]:
    return gt.takeoff_frame, gt.landing_frame, np.asarray(gt.boxes_px, dtype=np.float64)


def largest_speed_jump(idx: np.ndarray, good: np.ndarray, to_speed: float) -> tuple[float, int | None]:
    """(largest change of speed between neighbouring output frames, where); inf when unmeasurable.

    Speed = central difference of the source index. A frame whose index goes against both
    neighbours (a spike or dip: the sequence is not monotonic there) is a mismatch, not a speed
    change, and takes the mean of its neighbours; otherwise it would read as two speed jumps.
    """
    med = np.asarray(idx, dtype=np.float64).copy()
    # a spike also makes its neighbour look like a dip: fix whichever strays further from the
    # mean of its own neighbours first, then look again
    for i in range(1, len(med) - 1):
        if (med[i] - med[i - 1]) * (med[i + 1] - med[i]) >= 0:
            continue
        dev_i = abs(med[i] - (med[i - 1] + med[i + 1]) / 2)
        nxt = i + 2 < len(med) and (med[i + 1] - med[i]) * (med[i + 2] - med[i + 1]) < 0 \
            and abs(med[i + 1] - (med[i] + med[i + 2]) / 2) > dev_i
        if not nxt:
            med[i] = (med[i - 1] + med[i + 1]) / 2
    v = (med[2:] - med[:-2]) / 2 * to_speed
    okv = good[2:] & good[:-2]
    both = okv[1:] & okv[:-1]
    jumps = np.abs(np.diff(v))
    if not both.any():
        return float("inf"), None
    k = int(np.argmax(np.where(both, jumps, -1.0)))
    return float(jumps[k]), k + 1


def slope(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.polyfit(x, y, 1)[0]) if len(x) >= 2 else 0.0


@dataclass(frozen=True)
class Track:
    """Every output frame mapped to its source frame: (source index, strip x, strip width, NCC)."""

    facts: dict
    track: list[tuple[int, int, int, float]]
    idx: np.ndarray  # source frame index per output frame
    good: np.ndarray  # matched (NCC >= MIN_MATCH)
    to_speed: float  # source frames per output frame -> speed
    k_px: float  # matching px per source px (GT boxes are in source px)

    @property
    def i_out(self) -> np.ndarray:
        return np.arange(len(self.track), dtype=np.float64)


def source_facts(src_path: Path) -> tuple[float, int]:
    """The source's frame rate and height (a task input: unreadable is a GT error)."""
    try:
        src_probe = probe(src_path)
        src_fps = src_probe.first("video").avg_fps or 0.0
        src_h_px = src_probe.first("video").height or 0
    except MediaError as exc:
        raise GTError(f"{SOURCE}: {exc}") from None
    if src_fps <= 0 or src_h_px <= 0:
        raise GTError(f"{SOURCE}: no frame rate or frame size")
    return src_fps, src_h_px


def fast_section(sel: np.ndarray, local: np.ndarray, speed_x: float, tolerance_x: float) -> dict:
    """Output frames whose ±FAST_WINDOW neighbourhood lies in the section: share at speed ± tolerance."""
    w = FAST_WINDOW
    whole = np.array([sel[max(0, i - w):i + w + 1].all() for i in range(len(sel))]) & ~np.isnan(local)
    v = local[whole]
    frac = float(np.mean(np.abs(v - speed_x) <= tolerance_x + 1e-9)) if len(v) else 0.0
    return {"frames": len(v), "median_speed": float(np.median(v)) if len(v) else None,
            "in_tolerance": frac, "ok": bool(len(v) and frac >= MIN_FAST_FRACTION)}


class SpeedRamp(CheckedTask):
    task_id = TASK

    @provides
    def trick(self) -> tuple[int, int, np.ndarray]:
        return read_trick(self.ctx.gt_typed(TrickFile))

    @provides
    def t(self) -> Track:
        ctx = self.ctx
        self.trick  # noqa: B018 - a bad GT is reported before the export is looked at
        src_path = ctx.input(SOURCE)
        src_fps, src_h_px = source_facts(src_path)
        instance_scale(ctx)
        path, pr = probe_artifact(ctx, OUTPUT)
        bad = outside_writes(ctx, OUTPUT, ctx.task.forbidden_writers)
        if bad:
            raise AgentOutputError(f"{OUTPUT} was written by {writer_name(bad[-1])}, not exported by CapCut (audit)")
        facts = video_facts(pr)
        out_fps = facts["fps"]
        if not out_fps:
            raise AgentOutputError(f"{OUTPUT}: no frame rate")
        locator = StripLocator(src_path)
        try:
            greys = iter_luma(path, MATCH_H_PX)
        except MediaError as exc:
            raise AgentOutputError(f"{OUTPUT}: {exc}") from None
        cut = truncation(path, len(greys))
        if cut:
            raise AgentOutputError(cut)
        track = locator.track(greys, src_fps / out_fps)
        return Track(facts, track, np.array([t[0] for t in track], dtype=np.float64),
                     np.array([t[3] >= MIN_MATCH for t in track]), out_fps / src_fps, MATCH_H_PX / src_h_px)

    @provides
    def local_speed(self) -> np.ndarray:
        """Per output frame, the 7-frame least-squares speed (NaN where a frame of it is unmatched)."""
        t = self.t
        n, w = len(t.track), FAST_WINDOW
        local = np.full(n, np.nan)
        for i in range(w, n - w):
            if t.good[i - w:i + w + 1].all():
                local[i] = slope(t.i_out[i - w:i + w + 1], t.idx[i - w:i + w + 1]) * t.to_speed
        return local

    def ramp_frames(self) -> dict[str, int]:
        """Output frames at the slow-mo speed and at the fast speed (each ± its tolerance), anywhere."""
        slow, fast = self.task.check(N.peak_slowmo).typed, self.task.check(N.fast_sections).typed
        v = self.local_speed[~np.isnan(self.local_speed)]
        return {"slow": int(np.sum(np.abs(v - slow.speed_x) <= slow.tolerance_x + 1e-9)),
                "fast": int(np.sum(np.abs(v - fast.speed_x) <= fast.tolerance_x + 1e-9))}

    @check(N.peak_slowmo)
    def peak_slowmo(self, p: PeakSlowmo, curve: Curve) -> Result:
        t = self.t
        a, b = p.peak_frames
        in_peak = t.good & (t.idx >= a) & (t.idx <= b)
        peak_speed = slope(t.i_out[in_peak], t.idx[in_peak]) * t.to_speed
        covered = bool(in_peak.sum() >= MIN_PEAK_FRAMES and t.idx[in_peak].min() <= a + 0.1 * (b - a)
                       and t.idx[in_peak].max() >= b - 0.1 * (b - a))
        ok = covered and abs(peak_speed - p.speed_x) <= p.tolerance_x + 1e-9
        return Result(curve.passes(ok), {"speed": peak_speed, "output_frames": int(in_peak.sum()),
                                         "source_span": [float(t.idx[in_peak].min()), float(t.idx[in_peak].max())]
                                         if in_peak.any() else None},
                      f"peak window {a}-{b} at {peak_speed:.3f}x over {int(in_peak.sum())} output frames"
                      + ("" if covered else " (window not fully shown)"))

    @check(N.fast_sections)
    def fast_sections(self, p: SpeedTolerance, curve: Curve) -> Result:
        t = self.t
        takeoff, landing, _boxes = self.trick
        local = self.local_speed
        sections = {name: fast_section(sel, local, p.speed_x, p.tolerance_x)
                    for name, sel in (("before_takeoff", t.idx < takeoff), ("after_landing", t.idx > landing))}
        return Result(curve.count([s["ok"] for s in sections.values()]), sections,
                      "; ".join(f"{n}: {s['median_speed'] if s['median_speed'] is None else round(s['median_speed'], 2)}x "
                                f"({s['in_tolerance']:.0%} of {s['frames']} frames in {p.speed_x}±{p.tolerance_x})"
                                for n, s in sections.items()))

    @check(N.smooth_curve)
    def smooth_curve(self, p: SmoothCurve, curve: Curve) -> Result:
        t = self.t
        shown = float(t.good.mean()) if len(t.good) else 0.0
        if shown < MIN_SHOWN_FRACTION:  # no ramp to be smooth (black, another video): baseline-relative
            return Result.fail(f"only {shown:.0%} of the export's frames show the kickflip source",
                               {"matched_fraction": shown})
        if (adv := advancing_fraction(t.idx, t.good)) < MIN_SHOWN_FRACTION:
            return Result.fail(f"the source plays on only {adv:.0%} of the matched frames (a held frame?)",
                               {"advancing_fraction": adv})
        ramp = self.ramp_frames()
        if min(ramp.values()) < MIN_PEAK_FRAMES:  # rule 3: no ramp (a constant speed) has nothing to be smooth
            return Result.fail(f"no speed ramp to judge: {ramp['slow']} output frames at the slow-mo speed, "
                               f"{ramp['fast']} at the fast speed (need {MIN_PEAK_FRAMES} of each)", {"ramp_frames": ramp})
        worst, where = largest_speed_jump(t.idx, t.good, t.to_speed)
        return Result(curve.passes(worst <= p.max_speed_jump_x),
                      {"max_jump": worst, "at_output_frame": where, "unmatched_frames": int((~t.good).sum())},
                      f"largest speed change between neighbouring frames {worst:.2f}x (max {p.max_speed_jump_x})")

    @check(N.framing_duration)
    def framing_duration(self, p: FramingDuration, curve: Curve) -> Result:
        t, facts = self.t, self.t.facts
        boxes = self.trick[2]
        dur_ok = p.min_duration_s <= facts["duration_s"] <= p.max_duration_s
        sz_ok = size_ok(facts, list(p.size_px), instance_scale(self.ctx))
        band = p.center_band_pct / 100
        centred = 0
        for j, x, tw, score in t.track:
            if score < MIN_MATCH:
                continue
            bx, _by, bw, _bh = boxes[min(j, len(boxes) - 1)]
            rel = ((bx + bw / 2) * t.k_px - x) / tw
            centred += abs(rel - 0.5) <= band / 2
        pct = 100 * centred / len(t.track) if t.track else 0.0
        ctr_ok = pct >= p.min_frames_pct
        shown = float(t.good.mean()) if len(t.good) else 0.0
        if shown < MIN_SHOWN_FRACTION:
            return Result.fail(f"only {shown:.0%} of the export's frames show the kickflip source",
                               {**facts, "matched_fraction": shown})
        if (adv := advancing_fraction(t.idx, t.good)) < MIN_SHOWN_FRACTION:
            return Result.fail(f"the source plays on only {adv:.0%} of the matched frames (a held frame?)",
                               {**facts, "advancing_fraction": adv})
        return Result(curve.count([dur_ok, sz_ok, ctr_ok]),
                      {**facts, "duration_ok": dur_ok, "size_ok": sz_ok, "skater_centred_pct": pct,
                       "matched_fraction": shown},
                      f"{facts['duration_s']:.2f} s, {facts['width_px']}x{facts['height_px']}, skater in the middle "
                      f"{p.center_band_pct:g}% on {pct:.1f}% of frames")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        src_fps, out_fps = 240.0, 30.0
        n, takeoff, landing = 3900, 1700, 2060
        peak = tuple(self.task.check("peak_slowmo").params["peak_frames"])
        frames, boxes = skater_source(rng, n, takeoff, landing)
        write_video(inst.workdir / SOURCE, frames, src_fps)
        inst.write_json(inst.gt / "trick.json", {"takeoff_frame": takeoff, "landing_frame": landing, "boxes": boxes})
        inst.write_json(inst.gt / "render.json", {"scale": 1 / 6})
        size = (180, 320)

        def emit(folder: Path, positions: list[float], **kw) -> None:
            write_video(folder / OUTPUT, render(frames, boxes, positions, kw.pop("size", size), **kw), out_fps)

        ramp = ramp_curve(*peak)
        end = landing + 600
        emit(inst.oracle, ramp_positions(ramp, 0, end, src_fps, out_fps))
        register_video_cases(inst, OUTPUT, SOURCE, profiles=CHEAP_EXPORTS + AT_2997, baselines=CHEAP_BASELINES)
        emit(inst.mutant("constant_1x", [N.peak_slowmo, N.fast_sections, N.smooth_curve],
                         "no ramp: 1x throughout (frames 500-2200), so nothing to be smooth (rule 3)"),
             ramp_positions(lambda s: 1.0, 500, 2200, src_fps, out_fps))
        emit(inst.mutant("slowmo_early", [N.peak_slowmo, N.fast_sections], "0.3x on frames 1500-1620 (the approach)"),
             ramp_positions(ramp_curve(1500, 1620), 0, end, src_fps, out_fps))
        emit(inst.mutant("abrupt", [N.smooth_curve], "2x to 0.3x and back in one frame"),
             ramp_positions(ramp_curve(*peak, ramp_frames=0), 0, end, src_fps, out_fps))
        emit(inst.mutant("untrimmed", [N.framing_duration], "landing roll-out kept: about 10 s"),
             ramp_positions(ramp, 0, n - 1, src_fps, out_fps))
        emit(inst.mutant("static_crop", [N.framing_duration], "centre crop: the skater drifts out of the middle"),
             ramp_positions(ramp, 0, end, src_fps, out_fps), follow=False)
        emit(inst.mutant("export_720p", [N.framing_duration], "exported 720x1280"),
             ramp_positions(ramp, 0, end, src_fps, out_fps), size=(120, 214))
        raw = inst.mutant("ffmpeg_render", list(N),
                          "the oracle's export, but the audit saw ffmpeg write it")
        (raw / OUTPUT).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(inst.oracle / OUTPUT, raw / OUTPUT)
        inst.write_events(raw, [AuditWrite(OUTPUT, process="ffmpeg", pid=4242).event()])

