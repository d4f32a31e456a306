"""The short-form family's exports: the instance scale, the probed export and its video facts.

Synthetic instances are miniatures (320x180 sources instead of 1920x1080); their GT carries
`gt/render.json` = {"scale": s} and expected pixel sizes are the catalog's times s. A real task's GT
has no such file, so the catalog sizes apply unchanged (scale 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from verifiers.base import AgentOutputError, Checks, ScoreContext
from verifiers.checks import CheckedTask, provides
from verifiers.curves import Curve
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.errors import MediaError
from verifiers.measure.frames import iter_frames
from verifiers.measure.streams import MediaProbe, probe
from verifiers.provenance import refuse_outside_writes

#: the tasks whose miniatures write gt/render.json
RENDER_TASKS = tuple(f"R06.04.01.04-T{k:02d}" for k in (1, 2, 3, 4, 5, 6, 9, 10, 11, 14, 16, 17, 18, 19, 20))


class RenderFile(GTFile, file="render.json", tasks=RENDER_TASKS):
    """gt/render.json (optional; a real task's GT has none): how a synthetic miniature instance is scaled."""

    scale: float = gt_field(doc="frame size relative to the task's (pixel thresholds scale by it), in (0, 1]",
                            default=1.0)
    duration_s: float | None = gt_field(doc="the export length to expect (default: the catalog's)", default=None)
    time_scale: float = gt_field(doc="factor on the catalog's durations, in (0, 1]", default=1.0)

    def validate(self) -> None:
        self.expect(0 < self.scale <= 1, "scale", f"must be in (0, 1], got {self.scale!r}")
        self.expect(self.duration_s is None or self.duration_s > 0, "duration_s",
                    f"must be a positive number of seconds, got {self.duration_s!r}")
        self.expect(0 < self.time_scale <= 1, "time_scale", f"must be in (0, 1], got {self.time_scale!r}")


def render_facts(ctx: ScoreContext) -> RenderFile:
    """gt/render.json typed, or the real task's scale (1, the catalog's durations) when there is none."""
    return ctx.gt_typed(RenderFile) if (ctx.gt / RenderFile.FILE).exists() else RenderFile()


def instance_scale(ctx: ScoreContext) -> float:
    return render_facts(ctx).scale


def instance_duration_s(ctx: ScoreContext, catalog_s: float) -> float:
    """The export length to expect: the catalog's, unless the instance's gt/render.json gives a
    "duration_s" (synthetic miniatures are seconds long, not the task's 30 s; a real GT has none)."""
    dur = render_facts(ctx).duration_s
    return float(catalog_s) if dur is None else dur


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
    """Size, frame rate (fps as a float for reading and comparing with a spec; frame_rate as the
    exact "num/den"), and length of the export's first video stream."""
    v = pr.first("video")
    rate = v.exact_rate  # exact (measure.streams): frame times compared with it do not drift
    return {"width_px": v.width, "height_px": v.height, "fps": float(rate),
            "frame_rate": f"{rate.numerator}/{rate.denominator}", "duration_s": round(pr.duration_s or 0.0, 3)}


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
    """The export's size is the catalog's times the instance scale, or (a miniature exported the
    way the real app does, at its fixed preset) the catalog's own size."""
    def near(w: int, h: int) -> bool:
        return abs(facts["width_px"] - w) <= tol_px and abs(facts["height_px"] - h) <= tol_px

    return near(*(scaled(v, scale) for v in size_px)) or near(*size_px)


# ---- for declared checks (verifiers/checks.py): raise instead of failing the rest by hand ----------

@dataclass(frozen=True)
class Export:
    """The agent's export and its video facts (width_px, height_px, fps, duration_s)."""

    path: Path
    facts: dict[str, Any]


def open_export(ctx: ScoreContext, rel: str | None) -> Export:
    """The output (`rel`, or with None the first out/*.mp4) and its facts; missing or unreadable:
    AgentOutputError, so every check reading it (as a provider) fails with the reason."""
    path, pr = probe_artifact(ctx, rel) if rel is not None else probe_first_export(ctx)
    return Export(path, video_facts(pr))


def decode_all(path: Path) -> list[tuple[float, Any]]:
    """Every decoded frame as (t_s, rgb); a file that probes but does not decode is the agent's failure."""
    try:
        return [(f.t_s, f.rgb) for f in iter_frames(path)]
    except MediaError as exc:
        raise AgentOutputError(str(exc)) from None


def short_side(facts: dict[str, Any], height_px: int, scale: float, curve: Curve) -> tuple[float, dict, str]:
    """An "export 1080p" check: the short side equals height_px (times the instance scale) within
    1 px, whatever the orientation (score, evidence, message)."""
    want_h = scaled(height_px, scale)
    short = min(facts["width_px"], facts["height_px"])
    ok = abs(short - want_h) <= 1 or abs(short - height_px) <= 1  # a miniature exported at the preset
    return (curve.passes(ok), {**facts, "want_short_side_px": want_h},
            "" if ok else f"short side {short} px, want {want_h} (1080p)")


MIN_DECODED_FRACTION = 0.95  # fewer decodable frames than this share of the declared ones: truncated


def truncation(path: Path, decoded_frames: int) -> str | None:
    """Why the export is truncated, or None: its container's index declares (MP4 sample tables,
    e.g. written up front by faststart) clearly more video frames than decode. A file cut short is
    a broken export, whatever its header claims about length (issue 21: a truncated MP4 kept 50)."""
    import av

    try:
        with av.open(str(path)) as c:
            declared = int(c.streams.video[0].frames or 0)
    except (av.error.FFmpegError, IndexError):
        return None  # unreadable files are reported where they are decoded
    if declared and decoded_frames < MIN_DECODED_FRACTION * declared - 1:
        return f"{path.name} is truncated: {decoded_frames} of the {declared} frames its index declares decode"
    return None


class ExportTask(CheckedTask):
    """A short-form scorer that judges one exported video, declared as
    `class X(ExportTask, output="out/x.mp4")` (output=None: the first out/*.mp4). Its checks read
    `self.export`; a missing or unreadable export fails each of them with the reason (open_export
    raises AgentOutputError)."""

    output: ClassVar[str | None] = None

    def __init_subclass__(cls, output: str | None = None, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        cls.output = output

    @provides
    def export(self) -> Export:
        return open_export(self.ctx, self.output)
