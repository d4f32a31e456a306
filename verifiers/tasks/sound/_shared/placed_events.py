"""Per-event analysis of a render against a GT event list, for the event-placement tasks.

event_sync.measure_event_sync judges the fixed sync / correct-sound / spec trio of T01 and T14; tasks
with other checks (surface switch, categories, variation, level consistency, removed events) need
the per-event table itself. This builds it once with eventsync's pairing and identification, and
keeps each GT event's extra fields (surface, category, ...) next to what was found.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from verifiers.base import ScoreContext
from verifiers.checks import CheckedTask, Result, provides
from verifiers.curves import Curve
from verifiers.measure.audio_io import Audio
from verifiers.measure.identify import Match
from verifiers.measure.onsets import Onset, detect_onsets
from verifiers.tasks.sound._shared.event_sync import (
    ANALYSIS_RATE_HZ,
    EventGT,
    load_event_gt,
    load_library,
    pair_events,
)
from verifiers.tasks.sound._shared.render_files import load_output


@dataclass
class EventRow:
    index: int
    gt: dict[str, Any]  # the raw GT event, extra fields included
    gt_time_s: float
    onset_s: float | None
    error_frames: float | None
    found: str | None  # library file identified at the onset (None: nothing from the library)
    ncc: float | None
    peak: float | None  # peak |x| of the mono mix in the 60 ms after the onset
    in_sync: bool

    def evidence(self) -> dict[str, Any]:
        return {"i": self.index, "label": self.gt.get("label", ""), "gt_frame": self.gt["frame"],
                "onset_s": None if self.onset_s is None else round(self.onset_s, 4),
                "error_frames": None if self.error_frames is None else round(self.error_frames, 2),
                "found": self.found, "ncc": None if self.ncc is None else round(self.ncc, 3),
                "in_sync": self.in_sync}


@dataclass
class Analysis:
    gt: EventGT
    audio: Audio
    mix: np.ndarray  # mono at ANALYSIS_RATE_HZ
    library: dict[str, np.ndarray]
    rows: list[EventRow]
    extras: list[tuple[Onset, Match]] = field(default_factory=list)
    onsets: list[Onset] = field(default_factory=list)

    @property
    def fps(self) -> float:
        return self.gt.fps

    def in_sync_count(self) -> int:
        return sum(r.in_sync for r in self.rows)


def peak_after(mix: np.ndarray, t_s: float, span_s: float = 0.06) -> float:
    a = max(0, round(t_s * ANALYSIS_RATE_HZ))
    seg = mix[a: a + round(span_s * ANALYSIS_RATE_HZ)]
    return float(np.max(np.abs(seg))) if len(seg) else 0.0


def analyse(ctx: ScoreContext, output_rel: str, library_rel: str, *, tol_frames: float = 1.0,
            min_ncc: float = 0.6, pair_window_s: float = 0.5, gt_rel: str = "events.json",
            threshold_db: float = 12.0, one_file_per_event: bool = False) -> Analysis:
    """Pair GT events with onsets in the render and identify the library sample at each (see
    `pair_events` for `one_file_per_event`)."""
    gt = load_event_gt(ctx, gt_rel)
    raw = ctx.gt_json(gt_rel)
    library = load_library(ctx.input(library_rel))
    audio, samples = load_output(ctx, output_rel, ANALYSIS_RATE_HZ)
    mix = samples.mean(axis=1)
    onsets = detect_onsets(mix, ANALYSIS_RATE_HZ, threshold_db=threshold_db)
    paired, extras = pair_events(gt, onsets, mix, library, pair_window_s, min_ncc, one_file_per_event=one_file_per_event)
    rows = []
    for i, (p, ev) in enumerate(zip(paired, raw["events"], strict=True)):
        err = None if p.onset is None else (p.onset.time_s - p.gt_time_s) * gt.fps
        rows.append(EventRow(
            index=i, gt=dict(ev), gt_time_s=p.gt_time_s,
            onset_s=None if p.onset is None else p.onset.time_s, error_frames=err,
            found=None if p.best is None else p.best.name, ncc=None if p.best is None else p.best.ncc,
            peak=None if p.onset is None else peak_after(mix, p.onset.time_s),
            in_sync=err is not None and p.best is not None and abs(err) <= tol_frames + 1e-9))
    return Analysis(gt, audio, mix, library, rows, extras, onsets)


def analysed_render(output_rel: str, library_rel: str, sync_check: str, **kw: Any) -> property:
    """The `placed` provider of a placement task: its render analysed against its library (`analyse`)
    with the tolerance of its sync check, `placed = analysed_render(OUTPUT, LIBRARY, N.sync)`."""

    def placed(self: CheckedTask) -> Analysis:
        return analyse(self.ctx, output_rel, library_rel, tol_frames=self.task.check(sync_check).typed.tolerance_frames, **kw)

    return provides(placed)


def consecutive_variety(found: list[str | None], curve: Curve, vary: str, repeat: str) -> Result:
    """Share of consecutive pairs of events that use two different library files (T04's no_repeats,
    T11's variation). A pair varies only when both events carry a library file (issue 21: silence
    "varied"); the message reads "<varied>/<pairs> consecutive <vary> (<repeats> <repeat>)"."""
    n = len(found)
    repeats = [i for i in range(1, n) if found[i] is not None and found[i] == found[i - 1]]
    varied = sum(found[i] is not None and found[i - 1] is not None and found[i] != found[i - 1] for i in range(1, n))
    pairs = max(n - 1, 1)
    return Result(curve.count(varied, pairs), {"repeat_at": repeats, "files": found},
                  f"{varied}/{pairs} consecutive {vary} ({len(repeats)} {repeat})")


def required_of(n_gt: int, *, k: int | None = None, of_count: int | None = None, min_pct: float | None = None) -> int:
    """The seed's "at least K of N" (K the curve's k, N `of_count`) or its `min_pct`,
    scaled to this instance's `n_gt` events and rounded up; all of them when neither is given."""
    if min_pct is not None:
        return int(np.ceil(float(min_pct) / 100.0 * n_gt - 1e-9))
    if k is not None and of_count:
        return int(np.ceil(float(k) / float(of_count) * n_gt - 1e-9))
    return n_gt


def k_of_n_for(curve: Curve, need: int) -> Curve:
    """The catalog's k_of_n curve with k scaled to this instance (`required_of`): the catalog's k is
    the seed's K for its N events, a synth instance may have fewer."""
    return dataclasses.replace(curve, k=need)


def cv_pct(values: list[float]) -> float:
    arr = np.asarray([v for v in values if v is not None], dtype=float)
    if len(arr) < 2 or arr.mean() <= 0:
        return 0.0
    return float(arr.std() / arr.mean() * 100.0)


def category_of(name: str | None, categories: list[str]) -> str | None:
    """Category of a library file from its name prefix ('punch_2.wav' -> 'punch')."""
    if name is None:
        return None
    stem = name.rsplit(".", 1)[0].lower()
    for c in sorted(categories, key=len, reverse=True):
        if stem.startswith(c.lower()):
            return c
    return None


@dataclass
class Located:
    """Where a GT event's sample really sits in the mix, found by NCC rather than by onsets.

    For layered events (a whoosh swelling into an impact) the onset detector fires on the layer that
    starts first; the impact's own position is where its template correlates best.
    """

    index: int
    gt: dict[str, Any]
    gt_time_s: float
    found: str | None
    ncc: float
    time_s: float | None
    error_frames: float | None
    gain: float


def locate_events(mix: np.ndarray, raw_events: list[dict[str, Any]], fps: float,
                  library: dict[str, np.ndarray], *, search_s: float = 0.3, min_ncc: float = 0.6,
                  length_s: float = 0.3) -> list[Located]:
    """For each GT event, the best library sample starting within ±search_s of its frame."""
    from verifiers.measure.identify import match_at

    out = []
    for i, ev in enumerate(raw_events):
        t = float(ev["frame"]) / fps
        matches = match_at(mix, ANALYSIS_RATE_HZ, library, t, search_s=search_s, length_s=length_s)
        best = matches[0] if matches else None
        ok = best is not None and best.ncc >= min_ncc
        out.append(Located(i, dict(ev), t, best.name if ok else None, best.ncc if best else 0.0,
                           best.offset_s if ok else None, (best.offset_s - t) * fps if ok else None,
                           best.gain if ok else 0.0))
    return out


def frame_levels_db(mix: np.ndarray, end_s: float, fps: float, frames: int) -> list[float]:
    """RMS level (dBFS) of each of the `frames` video frames before `end_s`, oldest first."""
    step = ANALYSIS_RATE_HZ / fps
    out = []
    for k in range(frames, 0, -1):
        a, b = round(end_s * ANALYSIS_RATE_HZ - k * step), round(end_s * ANALYSIS_RATE_HZ - (k - 1) * step)
        seg = mix[max(0, a): max(0, b)]
        p = float(np.mean(seg * seg)) if len(seg) else 0.0
        out.append(10 * np.log10(max(p, 1e-20)))
    return out
