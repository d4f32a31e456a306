"""Shared measurement for "place these effects at these frames" tasks (T01, T14 and kin).

GT (gt/events.json): {"fps": 24, "sample_rate_hz": 48000,
                      "events": [{"frame": 37, "sample": "door_slam.wav", "label": "door slam"}, ...]}

How a render is judged:
1. Onsets are detected in the render (verifiers.measure.onsets).
2. Each GT event is paired with the nearest unused onset within `pair_window_s`.
3. Each paired onset is identified against the library (verifiers.measure.identify.match_at).
   An onset only counts as *in sync* if some library sound is really there (ncc >= min_ncc):
   a click train or noise would otherwise put an onset within a frame of every event.
4. Onsets paired with no GT event, and carrying a library sound, are extras.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from verifiers.base import GTError, ScoreContext
from verifiers.curves import Curve
from verifiers.evidence.base import Payload
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.audio_io import Audio, load_audio
from verifiers.measure.errors import MediaError
from verifiers.measure.identify import Match, lead_in_s, match_at
from verifiers.measure.onsets import Onset, detect_onsets
from verifiers.tasks.sound._shared.render_files import load_output

ANALYSIS_RATE_HZ = 48_000


@dataclass(frozen=True)
class GTEvent:
    frame: int
    sample: str
    label: str
    #: events whose notes give no mapping to a file share a group ("footstep"): any file of the
    #: group's samples is the right sound at any of them (issue 21: four interchangeable footsteps
    #: placed in another order than the GT pinned lost correct_sound)
    group: str | None = None

    def time_s(self, fps: float) -> float:
        return self.frame / fps


@dataclass(frozen=True)
class EventGT:
    fps: float
    sample_rate_hz: int
    events: tuple[GTEvent, ...]


@dataclass(frozen=True)
class EventEntry(Payload):
    """One event to place (a task may add keys: they are declared by its own events.json type)."""

    frame: int = gt_field(doc="the picture frame the sound's onset belongs on")
    sample: str = gt_field(doc="the library file that belongs there")
    label: str | None = gt_field(doc="what happens on screen", default="")
    group: str | None = gt_field(doc="interchangeable samples share a group (any of them is right)", default=None)


class EventsFile(GTFile, file="events.json"):
    """gt/events.json: the picture's frame rate and the events to place."""

    fps: float = gt_field(doc="picture frame rate")
    events: list[EventEntry] = gt_field(doc="the events, in time order")
    sample_rate_hz: int = gt_field(doc="the library's sample rate", default=48_000)

    def validate(self) -> None:
        self.expect(self.fps > 0, "fps", "must be > 0")
        self.expect(bool(self.events), "events", "must not be empty")


class PlainEventsFile(EventsFile, tasks=("R06.07.01.03-T01", "R06.07.01.03-T14")):
    """gt/events.json of the tasks that read no key beyond the shared ones."""



def load_event_gt(ctx: ScoreContext, rel: str = "events.json") -> EventGT:
    """The shared part of a task's events.json (typed: a bad file is a GTError naming the key)."""
    f = ctx.gt_typed(EventsFile, rel)
    events = tuple(GTEvent(e.frame, e.sample, str(e.label), e.group or None) for e in f.events)
    return EventGT(f.fps, f.sample_rate_hz, events)


def load_library(folder: Path) -> dict[str, np.ndarray]:
    """Library WAVs as mono arrays at the analysis rate; an unreadable library is a GT problem."""
    if not folder.is_dir():
        raise GTError(f"sample library missing: {folder}")
    lib: dict[str, np.ndarray] = {}
    for path in sorted(folder.glob("*.wav")):
        try:
            lib[path.name] = load_audio(path, sample_rate_hz=ANALYSIS_RATE_HZ).mono
        except MediaError as exc:
            raise GTError(f"library sample unreadable: {exc}") from None
    if not lib:
        raise GTError(f"sample library {folder} holds no WAV files")
    return lib


def load_render(ctx: ScoreContext, rel: str) -> Audio:
    """The render as written (audit and container checked: render_files.load_output)."""
    return load_output(ctx, rel, None)[0]


@dataclass
class PairedEvent:
    gt: GTEvent
    gt_time_s: float
    onset: Onset | None
    best: Match | None


#: a render event that no library file explains well (best NCC below PILE_MAX_BEST_NCC: the file carries
#: less than ~70 % of the energy) while a second file matches nearly as well (at least PILE_RUNNER_UP_RATIO
#: of the best) holds several library sounds at once, not one: unidentified where a task asks for one file
#: per event (T04, T09). Issue 21's "every library sound at every event" matched its best file at
#: 0.61-0.71 and the runner-up at 89-99 % of that (seeds 0, 5, 7, 11); the oracles and their exports match
#: at 1.0, and two library files may be near copies (seed 5's wood_1/wood_2: 0.985), so the runner-up alone
#: proves nothing
PILE_RUNNER_UP_RATIO = 0.75
PILE_MAX_BEST_NCC = 0.85


def pair_events(gt: EventGT, onsets: list[Onset], mix: np.ndarray, library: dict[str, np.ndarray],
                pair_window_s: float, min_ncc: float, *,
                one_file_per_event: bool = False) -> tuple[list[PairedEvent], list[tuple[Onset, Match]]]:
    """Pair GT events to onsets (nearest first, one-to-one) and identify what sits at each onset
    (`one_file_per_event`: a pile of library sounds identifies as none, PILE_RUNNER_UP_RATIO)."""
    candidates = sorted(
        ((abs(o.time_s - e.time_s(gt.fps)), i, j) for i, e in enumerate(gt.events) for j, o in enumerate(onsets)
         if abs(o.time_s - e.time_s(gt.fps)) <= pair_window_s),
    )
    used_e: dict[int, int] = {}
    used_o: set[int] = set()
    for _d, i, j in candidates:
        if i in used_e or j in used_o:
            continue
        used_e[i] = j
        used_o.add(j)
    identified: dict[int, Match | None] = {}
    # each file is looked for where it starts if this onset is its own first onset: a soft or sparse
    # start (a zip's click train) puts the detected onset 15-30 ms after the file's start, outside the
    # ±20 ms search (seed 13: T12's oracle zip unidentified); files that start hard keep lead 0
    # as well as at the onset (a detector that caught the file's first sound: T09's swipes on seeds 5, 11, 13)
    by_lead: dict[float, dict[str, np.ndarray]] = {0.0: dict(library)}
    for name, s in library.items():
        if (lead := round(lead_in_s(s, ANALYSIS_RATE_HZ), 4)) > 0:
            by_lead.setdefault(lead, {})[name] = s

    def ident(j: int) -> Match | None:
        if j not in identified:
            best: dict[str, Match] = {}
            for lead, lib in by_lead.items():
                for m in match_at(mix, ANALYSIS_RATE_HZ, lib, onsets[j].time_s - lead, search_s=0.02):
                    if m.name not in best or m.ncc > best[m.name].ncc:
                        best[m.name] = m
            matches = sorted(best.values(), key=lambda m: m.ncc, reverse=True)
            pile = (one_file_per_event and len(matches) > 1 and matches[0].ncc < PILE_MAX_BEST_NCC
                    and matches[1].ncc >= PILE_RUNNER_UP_RATIO * matches[0].ncc)
            identified[j] = matches[0] if matches and matches[0].ncc >= min_ncc and not pile else None
        return identified[j]

    paired = []
    for i, e in enumerate(gt.events):
        j = used_e.get(i)
        paired.append(PairedEvent(e, e.time_s(gt.fps), onsets[j] if j is not None else None,
                                  ident(j) if j is not None else None))
    extras = []
    for j, o in enumerate(onsets):
        if j in used_o:
            continue
        m = ident(j)
        if m is not None:
            extras.append((o, m))
    # A sound's own decay can yield a second onset; it is the same sound, not an extra.
    extras = [(o, m) for o, m in extras
              if not any(p.onset is not None and 0 < o.time_s - p.onset.time_s < len(library[m.name]) / ANALYSIS_RATE_HZ
                         and p.best is not None and p.best.name == m.name for p in paired)]
    return paired, extras


@dataclass
class EventSync:
    """One render judged against the GT events: per-event rows, counts and the extras (T01, T14)."""

    gt: EventGT
    render: Audio
    per_event: list[dict[str, Any]]
    in_sync: int
    correct: int
    extras: list[tuple[Onset, Match]]
    tol_frames: float
    min_ncc: float

    @property
    def n(self) -> int:
        return len(self.per_event)

    @property
    def placed_share(self) -> float:
        """Share of GT events where a library sound was found at all (the task's primary change):
        the render-spec shares pay in proportion to it (issue 21: silence with the right rate and no
        extras earned 15 of 100)."""
        return sum(e["found_sample"] is not None for e in self.per_event) / max(self.n, 1)


def measure_event_sync(ctx: ScoreContext, output_rel: str, library_rel: str, *, tol_frames: float,
                       min_ncc: float, pair_window_s: float) -> EventSync:
    """Detect onsets in the render, pair them with the GT events and identify each against the library."""
    gt = load_event_gt(ctx)
    library = load_library(ctx.input(library_rel))
    render = load_render(ctx, output_rel)
    mix = render.mono if render.sample_rate_hz == ANALYSIS_RATE_HZ else load_audio(
        ctx.artifact(output_rel), sample_rate_hz=ANALYSIS_RATE_HZ).mono
    onsets = detect_onsets(mix, ANALYSIS_RATE_HZ)
    paired, extras = pair_events(gt, onsets, mix, library, pair_window_s, min_ncc)
    per_event = []
    in_sync = correct = 0
    group_files: dict[str, set[str]] = {}
    for e in gt.events:
        if e.group:
            group_files.setdefault(e.group, set()).add(e.sample)
    for p in paired:
        err_frames = None if p.onset is None else (p.onset.time_s - p.gt_time_s) * gt.fps
        ok_sync = err_frames is not None and p.best is not None and abs(err_frames) <= tol_frames + 1e-9
        ok_sound = p.best is not None and (p.best.name == p.gt.sample
                                           or (p.gt.group is not None and p.best.name in group_files[p.gt.group]))
        in_sync += ok_sync
        correct += ok_sound
        per_event.append({
            "label": p.gt.label, "gt_frame": p.gt.frame, "gt_sample": p.gt.sample,
            "onset_s": None if p.onset is None else round(p.onset.time_s, 4),
            "error_frames": None if err_frames is None else round(err_frames, 3),
            "found_sample": None if p.best is None else p.best.name,
            "ncc": None if p.best is None else round(p.best.ncc, 3),
            "in_sync": bool(ok_sync), "correct_sound": bool(ok_sound),
        })
    return EventSync(gt, render, per_event, in_sync, correct, extras, tol_frames, min_ncc)


def sync_result(m: EventSync, curve: Curve) -> tuple[float, dict[str, Any], str]:
    """Events with an onset (carrying a library sound) within the frame tolerance."""
    return (curve.count(m.in_sync, m.n), {"events": m.per_event, "tolerance_frames": m.tol_frames, "fps": m.gt.fps},
            f"{m.in_sync}/{m.n} events within ±{m.tol_frames:g} frame(s)")


def sound_result(m: EventSync, curve: Curve) -> tuple[float, dict[str, Any], str]:
    """Events whose identified library sample is the GT one."""
    ev = [{k: e[k] for k in ("label", "gt_sample", "found_sample", "ncc")} for e in m.per_event]
    return (curve.count(m.correct, m.n), {"events": ev, "min_ncc": m.min_ncc},
            f"{m.correct}/{m.n} events carry the right library sample")


def spec_result(m: EventSync, want_rate_hz: int | None, curve: Curve) -> tuple[float, dict[str, Any], str]:
    """Half for the sample rate (the GT's when the task names none), half for no extra events
    (`curve` parts: `rate` threshold, `extras` penalty_per_extra), times the share of events placed."""
    render, extras = m.render, m.extras
    want_rate = m.gt.sample_rate_hz if want_rate_hz is None else want_rate_hz
    rate_ok = render.sample_rate_hz == want_rate
    placed = m.placed_share
    score = placed * (0.5 * curve.part("rate").passes(rate_ok) + 0.5 * curve.part("extras").penalty(1.0, len(extras)))
    return score, {"events_placed_share": round(placed, 3),
        "sample_rate_hz": render.sample_rate_hz, "want_sample_rate_hz": want_rate,
        "channels": render.info.channels, "bit_depth": render.info.bit_depth,
        "extra_events": [{"onset_s": round(o.time_s, 4), "sample": m_.name, "ncc": round(m_.ncc, 3)} for o, m_ in extras],
    }, ("rate ok" if rate_ok else f"render is {render.sample_rate_hz} Hz, task asks {want_rate} Hz") \
        + f"; {len(extras)} extra event(s)"
