"""Shared scoring machinery of the short-form family: export specs, which source clip a frame shows.

Synthetic instances are miniatures (320x180 sources instead of 1920x1080); their GT carries
`gt/render.json` = {"scale": s} and expected pixel sizes are the catalog's times s. A real task's GT
has no such file, so the catalog sizes apply unchanged (scale 1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from verifiers.base import AgentOutputError, Checks, GTError, ScoreContext
from verifiers.measure.errors import MediaError
from verifiers.measure.fingerprint import FrameIndex, match_frame
from verifiers.measure.frames import iter_frames
from verifiers.measure.streams import MediaProbe, probe
from verifiers.provenance import refuse_outside_writes

MATCH_WIDTH_PX = 160  # frames are matched as 160-px-wide thumbnails: enough for 64x36 NCC
MIN_NCC = 0.6  # below this an output frame shows none of the sources


def instance_scale(ctx: ScoreContext) -> float:
    path = ctx.gt / "render.json"
    if not path.exists():
        return 1.0
    scale = ctx.gt_json("render.json").get("scale", 1.0)
    if not isinstance(scale, (int, float)) or not 0 < scale <= 1:
        raise GTError(f"gt/render.json: scale must be in (0, 1], got {scale!r}")
    return float(scale)


def instance_duration_s(ctx: ScoreContext, catalog_s: float) -> float:
    """The export length to expect: the catalog's, unless the instance's gt/render.json gives a
    "duration_s" (synthetic miniatures are seconds long, not the task's 30 s; a real GT has none)."""
    path = ctx.gt / "render.json"
    if not path.exists():
        return float(catalog_s)
    dur = ctx.gt_json("render.json").get("duration_s", catalog_s)
    if not isinstance(dur, (int, float)) or dur <= 0:
        raise GTError(f"gt/render.json: duration_s must be a positive number of seconds, got {dur!r}")
    return float(dur)


def scaled(px: float, scale: float) -> int:
    return round(px * scale)


def probe_artifact(ctx: ScoreContext, rel: str) -> tuple[Path, MediaProbe]:
    """The artifact and its packet probe; an unreadable file is the agent's failure, and so is an
    export the audit saw written by a forbidden program (ffmpeg: the seeds' "export must come from
    the app"; without audit evidence nothing is refused)."""
    path = ctx.artifact(rel)
    refuse_outside_writes(ctx, rel, ctx.task.apps[0] if ctx.task.apps else "the app")
    try:
        pr = probe(path)
        pr.first("video")
    except MediaError as exc:
        raise AgentOutputError(f"{rel}: {exc}") from None
    return path, pr


def probe_first_export(ctx: ScoreContext, folder: str = "out", pattern: str = "*.mp4") -> tuple[Path, MediaProbe]:
    """The first (by name) export matching `pattern` in `folder` of the work dir, probed like
    probe_artifact: for tasks whose seed names the folder but not the file."""
    out = ctx.workdir / folder
    files = sorted(out.glob(pattern)) if out.is_dir() else []
    if not files:
        raise AgentOutputError(f"no {pattern.lstrip('*')} export in {folder}/")
    return probe_artifact(ctx, str(files[0].relative_to(ctx.workdir)))


def video_facts(pr: MediaProbe) -> dict:
    v = pr.first("video")
    return {"width_px": v.width, "height_px": v.height, "fps": round(v.avg_fps or 0.0, 3),
            "duration_s": round(pr.duration_s or 0.0, 3)}


def open_output(ctx: ScoreContext, checks: Checks, rel: str | None) -> tuple[Path, dict] | None:
    """The output (`rel`, or with None the first out/*.mp4) and its video facts; when it is missing
    or unreadable every check still open fails with the reason and None comes back (the caller
    returns: nothing left to score)."""
    try:
        path, pr = probe_artifact(ctx, rel) if rel is not None else probe_first_export(ctx)
    except AgentOutputError as exc:
        checks.fail_rest(str(exc))
        return None
    return path, video_facts(pr)


def open_output_frames(ctx: ScoreContext, checks: Checks, rel: str) -> tuple[Path, dict, list] | None:
    """`open_output`, then every decoded frame as (t_s, rgb); a file that probes but does not
    decode fails the checks still open the same way (None back)."""
    opened = open_output(ctx, checks, rel)
    if opened is None:
        return None
    path, facts = opened
    try:
        frames = [(f.t_s, f.rgb) for f in iter_frames(path)]
    except MediaError as exc:
        checks.fail_rest(str(exc))
        return None
    return path, facts, frames


def check_short_side(checks: Checks, name: str, facts: dict, scale: float) -> bool:
    """An "export 1080p" check: the short side equals params height_px (times the instance scale)
    within 1 px, whatever the orientation; sets check `name` and says whether it held."""
    want_h = scaled(checks.params(name)["height_px"], scale)
    short = min(facts["width_px"], facts["height_px"])
    ok = abs(short - want_h) <= 1
    checks.set(name, float(ok), {**facts, "want_short_side_px": want_h},
               "" if ok else f"short side {short} px, want {want_h} (1080p)")
    return ok


def size_ok(facts: dict, size_px: list[int], scale: float, tol_px: int = 1) -> bool:
    w, h = (scaled(v, scale) for v in size_px)
    return abs(facts["width_px"] - w) <= tol_px and abs(facts["height_px"] - h) <= tol_px


def _to_width(rgb: np.ndarray, width_px: int) -> np.ndarray:
    import cv2

    h = max(2, round(rgb.shape[0] * width_px / rgb.shape[1]))
    return cv2.resize(rgb, (width_px, h), interpolation=cv2.INTER_AREA)


@dataclass(frozen=True)
class Labelled:
    t_s: float  # output time
    label: str | None  # source clip shown (None: no source matches)
    src_t_s: float  # time in that source
    ncc: float
    src_index: int = -1  # into ClipMatcher.index
    rgb: np.ndarray | None = None  # the (160-px) output frame, when asked to keep it


class ClipMatcher:
    """Fingerprint index over several source clips: which clip, which moment an output frame shows."""

    def __init__(self, sources: dict[str, Path], images: dict[str, np.ndarray] | None = None) -> None:
        frames, times, labels = [], [], []
        for label, rgb in (images or {}).items():
            frames.append(_to_width(rgb, MATCH_WIDTH_PX))
            times.append(0.0)
            labels.append(label)
        for label, path in sources.items():
            try:
                for fr in iter_frames(path, width=MATCH_WIDTH_PX):
                    frames.append(fr.rgb)
                    times.append(fr.t_s)
                    labels.append(label)
            except MediaError as exc:
                raise GTError(f"source clip {label}: {exc}") from None
        if not frames:
            raise GTError("no source clips to match against")
        self.labels = labels
        self.index = FrameIndex.from_frames(frames, times, keep=True)

    def identify(self, rgb: np.ndarray) -> tuple[str | None, float, float, int]:
        m = match_frame(rgb, self.index)
        if m.ncc < MIN_NCC:
            return None, m.t_s, m.ncc, m.index
        return self.labels[m.index], m.t_s, m.ncc, m.index

    def source_frame(self, idx: int) -> np.ndarray:
        return self.index.frames[idx]

    def label_video(self, path: Path, every_s: float | None = None, start_s: float = 0.0,
                    end_s: float | None = None, keep: bool = False) -> list[Labelled]:
        out = []
        try:
            for fr in iter_frames(path, width=MATCH_WIDTH_PX, every_s=every_s):
                if fr.t_s < start_s - 1e-6:
                    continue
                if end_s is not None and fr.t_s >= end_s - 1e-6:
                    break
                label, src_t, ncc, idx = self.identify(fr.rgb)
                out.append(Labelled(fr.t_s, label, src_t, ncc, idx, fr.rgb if keep else None))
        except MediaError as exc:
            raise AgentOutputError(str(exc)) from None
        return out


@dataclass(frozen=True)
class Run:
    label: str | None
    start_s: float
    end_s: float  # time of the first frame after the run
    frames: int
    src_start_s: float
    src_end_s: float


def runs(labelled: list[Labelled], frame_s: float) -> list[Run]:
    """Consecutive frames showing the same source, in output order."""
    out: list[Run] = []
    i = 0
    while i < len(labelled):
        j = i
        while j + 1 < len(labelled) and labelled[j + 1].label == labelled[i].label:
            j += 1
        out.append(Run(labelled[i].label, labelled[i].t_s, labelled[j].t_s + frame_s, j - i + 1,
                       labelled[i].src_t_s, labelled[j].src_t_s))
        i = j + 1
    return out


def clean_runs(rs: list[Run], min_frames: int = 3) -> list[Run]:
    """Runs without one- or two-frame glitches (e.g. a transition frame), neighbours merged."""
    out: list[Run] = []
    for r in rs:
        if r.frames < min_frames:
            continue
        if out and out[-1].label == r.label:
            p = out[-1]
            out[-1] = Run(p.label, p.start_s, r.end_s, p.frames + r.frames, p.src_start_s, r.src_end_s)
        else:
            out.append(r)
    return out


def segments(matcher: ClipMatcher, path: Path, fps: float) -> tuple[list[Labelled], list[Run]]:
    """Every output frame labelled (160-px frames kept) and its clean runs: the edit's segments, in
    order; the cut times are the starts of all but the first."""
    labelled = matcher.label_video(path, keep=True)
    return labelled, clean_runs(runs(labelled, 1.0 / fps))


def sources_in(folder: Path, pattern: str = "*.mp4") -> dict[str, Path]:
    found = {p.stem: p for p in sorted(folder.glob(pattern))}
    if not found:
        raise GTError(f"no source clips in {folder.name}/")
    return found


def best_corr(out: np.ndarray, src: np.ndarray, offset_s: float, sr: int, lag_search_s: float = 0.1) -> float:
    """Peak normalised cross-correlation of `src` placed at output time (src_t - offset_s), searched
    ±lag_search_s (AAC priming and frame rounding shift audio by a few ms)."""
    from scipy import signal

    shift = round(-offset_s * sr)
    placed = np.zeros_like(out)
    a0, b0 = max(0, shift), max(0, -shift)
    n = min(len(out) - a0, len(src) - b0)
    if n <= sr // 4:
        return 0.0
    placed[a0:a0 + n] = src[b0:b0 + n]
    lag = int(lag_search_s * sr)
    seg_o, seg_p = out[a0:a0 + n], placed[a0:a0 + n]
    c = signal.correlate(seg_o, seg_p, mode="full", method="fft")
    mid = len(seg_p) - 1
    c = c[max(0, mid - lag): mid + lag + 1]
    denom = np.linalg.norm(seg_o) * np.linalg.norm(seg_p)
    return float(np.max(np.abs(c)) / denom) if denom > 0 else 0.0


@dataclass(frozen=True)
class Cue:
    start_s: float
    end_s: float
    text: str  # lines joined with a space


_SRT_TIME = re.compile(r"(\d+):(\d\d):(\d\d)[,.](\d{1,3})\s*-->\s*(\d+):(\d\d):(\d\d)[,.](\d{1,3})")


def parse_srt(text: str, name: str = "subtitles") -> list[Cue]:
    """Cues of an SRT file (a task input, so a malformed one is a GT error naming `name`)."""
    def secs(h: str, m: str, s: str, ms: str) -> float:
        return int(h) * 3600 + int(m) * 60 + int(s) + int(ms.ljust(3, "0")) / 1000

    cues = []
    for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n").lstrip("\ufeff").strip()):
        lines = [ln.strip() for ln in block.split("\n") if ln.strip()]
        if not lines:
            continue
        timing = next((i for i, ln in enumerate(lines) if "-->" in ln), None)
        m = _SRT_TIME.search(lines[timing]) if timing is not None else None
        if m is None:
            raise GTError(f"{name}: cue without a valid 'hh:mm:ss,mmm --> hh:mm:ss,mmm' line: {block[:60]!r}")
        start, end = secs(*m.groups()[:4]), secs(*m.groups()[4:])
        if end <= start:
            raise GTError(f"{name}: cue ends before it starts: {lines[timing]!r}")
        cues.append(Cue(start, end, " ".join(lines[timing + 1:])))
    if not cues:
        raise GTError(f"{name}: no cues")
    return cues
