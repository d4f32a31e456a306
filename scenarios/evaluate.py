"""Judge a scenario's expectations from what was recorded: action times and observer events.

A pure function of (scenario, action records, observed events), so the same judgement runs live at
the end of `tally scenario run`, inside `tally run`, and later on a recorded bundle.

Observer events are those of monitor/observers/obs (the one OBS client), read through their
evidence types (verifiers.evidence.obs): `event` {type, data} with OBS's own data keys
(CurrentProgramSceneChanged {sceneName}, InputMuteStateChanged {inputName, inputMuted}) and
`snapshot` {reason, state} with the program scene and each input's mute state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from scenarios.model import EventMatch, Expectation, Scenario
from verifiers.evidence import InputMuteData, ObsEvent, ObsSnapshot, SceneData

if TYPE_CHECKING:
    from monitor.events import Event

NS_PER_MS = 1_000_000


@dataclass(slots=True)
class ActionRecord:
    """What one step did: when it was due, when it happened (monotonic ns), and how it went."""

    step: str
    action: str
    arg: str
    scheduled_ns: int | None = None
    actual_ns: int | None = None
    done_ns: int | None = None
    #: what latencies are measured from: the focus change seen (focus), else actual_ns
    anchor_ns: int | None = None
    status: str = "pending"        # ok | failed | skipped
    error: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def lateness_ms(self) -> float | None:
        if self.scheduled_ns is None or self.actual_ns is None:
            return None
        return (self.actual_ns - self.scheduled_ns) / NS_PER_MS

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["lateness_ms"] = self.lateness_ms
        return d


@dataclass(frozen=True, slots=True)
class ExpectationResult:
    id: str
    kind: str
    passed: bool
    detail: str
    latency_ms: float | None = None
    anchor: str | None = None
    limit_ms: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---- reading observer events --------------------------------------------------------------
def _unwrap(event: Event) -> tuple[str, Mapping[str, Any]]:
    """(OBS event type, its data) for the observer's `event`, ("snapshot", state) for its snapshot,
    else (kind, payload). OBS payloads are parsed by verifiers.evidence (EvidenceError if one does
    not fit): monitor/observers/obs is the one producer, there is no other shape to guess."""
    if event.source == ObsEvent.SOURCE and event.kind == ObsEvent.KIND:
        ev = ObsEvent.from_payload(event.payload)
        return ev.type, ev.data
    if event.source == ObsSnapshot.SOURCE and event.kind == ObsSnapshot.KIND:
        return "snapshot", ObsSnapshot.from_payload(event.payload).state.to_payload()
    return event.kind, event.payload


def state_changes(event: Event) -> list[tuple[str, Any, Any]]:
    """("program", None, scene) and ("mute", input, muted) facts one OBS observer event carries."""
    if event.source != ObsEvent.SOURCE:
        return []
    if event.kind == ObsSnapshot.KIND:
        state = ObsSnapshot.from_payload(event.payload).state
        out: list[tuple[str, Any, Any]] = []
        if state.current_program_scene is not None:
            out.append(("program", None, state.current_program_scene))
        return out + [("mute", name, muted) for name, muted in state.muted().items()]
    if event.kind != ObsEvent.KIND:
        return []
    data = ObsEvent.from_payload(event.payload).typed()
    if isinstance(data, SceneData) and event.payload["type"] == "CurrentProgramSceneChanged":
        return [("program", None, data.sceneName)]
    if isinstance(data, InputMuteData):
        return [("mute", data.inputName, data.inputMuted)]
    return []


def event_matches(event: Event, match: EventMatch) -> bool:
    kind, data = _unwrap(event)
    if match.kind not in (kind, event.kind):
        return False
    return all(data.get(k) == v or event.payload.get(k) == v for k, v in match.data.items())


class Timeline:
    """Program scene and per-input mute state over time, from observer events.

    OBS announces CurrentProgramSceneChanged when the transition has finished (a 300 ms Fade ends
    ~300–450 ms after it started). The program starts going to the new scene when the transition
    starts, so with `measure="start"` a scene change is dated by the SceneTransitionStarted event
    that led to it (the last one since the previous change), and `completed` keeps the end time.
    """

    def __init__(self, events: Iterable[Event], measure: str = "start") -> None:
        self.program: list[tuple[int, str, bool]] = []   # (ns, scene, is_change_event)
        self.mutes: dict[str, list[tuple[int, bool, bool]]] = {}
        self.completed: dict[int, int] = {}               # program entry ns -> change event ns
        pending_start: int | None = None
        for ev in sorted(events, key=lambda e: (e.mono_ns, e.seq)):
            kind = _unwrap(ev)[0]
            is_change = kind != "snapshot"
            if kind == "SceneTransitionStarted":
                pending_start = ev.mono_ns
            for what, name, value in state_changes(ev):
                # A snapshot's state was read over several requests before it was published, so
                # it can be older than change events already seen: snapshots only give the
                # initial value of a series, never a change.
                series = self.program if what == "program" else self.mutes.get(name, [])
                if not is_change and any(c for _ns, _v, c in series):
                    continue
                if what == "program":
                    at = ev.mono_ns
                    if is_change and measure == "start" and pending_start is not None:
                        at = pending_start
                    if is_change:
                        pending_start = None
                    self.program.append((at, value, is_change))
                    self.completed[at] = ev.mono_ns
                else:
                    self.mutes.setdefault(name, []).append((ev.mono_ns, value, is_change))
        self.program.sort(key=lambda x: x[0])

    @staticmethod
    def _at(series: list[tuple[int, Any, bool]], t_ns: int) -> Any:
        value = None
        for ns, v, _c in series:
            if ns > t_ns:
                break
            value = v
        return value

    def program_at(self, t_ns: int) -> str | None:
        return self._at(self.program, t_ns)

    def muted_at(self, name: str, t_ns: int) -> bool | None:
        return self._at(self.mutes.get(name, []), t_ns)

    def program_changes(self, lo_ns: int, hi_ns: int) -> list[tuple[int, str]]:
        """Program scene changes (a new scene differing from the one before) in (lo, hi]."""
        out, prev = [], self.program_at(lo_ns)
        for ns, scene, is_change in self.program:
            if ns <= lo_ns:
                continue
            if ns > hi_ns:
                break
            if scene != prev and is_change:
                out.append((ns, scene))
            prev = scene
        return out

    def mute_changes(self, name: str, lo_ns: int, hi_ns: int) -> list[tuple[int, bool]]:
        out, prev = [], self.muted_at(name, lo_ns)
        for ns, muted, is_change in self.mutes.get(name, []):
            if ns > hi_ns:
                break
            if ns > lo_ns:
                if muted != prev and is_change:
                    out.append((ns, muted))
                prev = muted
        return out


# ---- judging --------------------------------------------------------------------------------
def required_end_ns(exp: Expectation, anchors: Mapping[str, int]) -> int | None:
    """How long observation must last for this expectation to be judged (None: no constraint)."""
    if exp.after is None or exp.after not in anchors or exp.within_ms is None:
        return None
    return anchors[exp.after] + int((exp.within_ms + exp.stays_s * 1000.0) * NS_PER_MS)


def evaluate(scenario: Scenario, actions: Mapping[str, ActionRecord], events: Iterable[Event],
             end_ns: int) -> list[ExpectationResult]:
    evs = [e for e in events if e.source != "scenario"]
    timeline = Timeline(evs)
    anchors = {sid: rec.done_ns for sid, rec in actions.items()
               if rec.status == "ok" and rec.done_ns is not None}
    # Latency is measured from when the action happened (key down, focus request sent), not from
    # when a long action (opening a window) finished; `after:` steps chain on completion instead.
    starts = {sid: rec.anchor_ns or rec.actual_ns for sid, rec in actions.items()
              if rec.status == "ok" and rec.actual_ns is not None}
    results = []
    for exp in scenario.expectations:
        results.append(_judge(exp, starts, anchors, timeline, evs, end_ns))
    return results


def _judge(exp: Expectation, starts: Mapping[str, int], done: Mapping[str, int], tl: Timeline,
           events: list[Event], end_ns: int) -> ExpectationResult:
    def res(passed: bool, detail: str, latency_ms: float | None = None) -> ExpectationResult:
        return ExpectationResult(exp.id, exp.kind, passed, detail, latency_ms, exp.after, exp.within_ms)

    if exp.after is not None and exp.after not in starts:
        return res(False, f"step {exp.after!r} did not run, nothing to measure from")
    anchor = starts[exp.after] if exp.after else 0
    hi = done.get(exp.until, end_ns) if exp.until else end_ns
    if exp.until and exp.until not in done:
        return res(False, f"step {exp.until!r} did not run, the interval has no end")

    if exp.kind in ("program_scene", "input_muted", "event"):
        assert exp.within_ms is not None
        if exp.kind == "program_scene":
            hits = [ns for ns, scene in tl.program_changes(anchor, end_ns) if scene == exp.scene]
            already = tl.program_at(anchor) == exp.scene
            what = f"program scene {exp.scene!r}"
        elif exp.kind == "input_muted":
            assert exp.input is not None
            before = tl.muted_at(exp.input, anchor)
            if exp.muted == "toggle":
                if before is None:
                    return res(False, f"mute state of {exp.input!r} unknown at the anchor; cannot judge a toggle")
                target = not before
            else:
                target = bool(exp.muted)
            hits = [ns for ns, m in tl.mute_changes(exp.input, anchor, end_ns) if m == target]
            already = exp.muted != "toggle" and before == target
            what = f"{exp.input!r} {'muted' if target else 'unmuted'}"
        else:
            assert exp.event is not None
            hits = [e.mono_ns for e in events if e.mono_ns > anchor and event_matches(e, exp.event)]
            already = False
            what = f"event {exp.event.kind}{exp.event.data or ''}"
        limit_ns = anchor + int(exp.within_ms * NS_PER_MS)
        in_window = [ns for ns in hits if ns <= limit_ns]
        if not in_window:
            if already and exp.not_before_ms == 0:
                return _stays(exp, tl, anchor, end_ns, res, 0.0, f"{what} already at the anchor (no change seen)")
            if hits:
                late_ms = (hits[0] - anchor) / NS_PER_MS
                return res(False, f"{what} after {late_ms:.1f} ms: later than {exp.within_ms:g} ms", late_ms)
            return res(False, f"{what} not seen after {exp.after!r} "
                              f"({(end_ns - anchor) / NS_PER_MS:.0f} ms observed)")
        latency_ms = (in_window[0] - anchor) / NS_PER_MS
        if latency_ms < exp.not_before_ms:
            return res(False, f"{what} after {latency_ms:.1f} ms: earlier than {exp.not_before_ms:g} ms", latency_ms)
        detail = f"{what} after {latency_ms:.1f} ms"
        done_ns = tl.completed.get(in_window[0]) if exp.kind == "program_scene" else None
        if done_ns is not None and done_ns != in_window[0]:
            detail += f" (transition started; scene-changed event at {(done_ns - anchor) / NS_PER_MS:.0f} ms)"
        return _stays(exp, tl, in_window[0], end_ns, res, latency_ms, detail)

    if exp.kind == "no_switch":
        changes = [(ns, s) for ns, s in tl.program_changes(anchor, hi) if not exp.scenes or s in exp.scenes]
        if changes:
            first_ns, scene = changes[0]
            lat = (first_ns - anchor) / NS_PER_MS
            return res(False, f"{len(changes)} switch(es) in the interval; first to {scene!r} "
                              f"after {lat:.1f} ms", lat)
        target = f" to {list(exp.scenes)}" if exp.scenes else ""
        return res(True, f"no program switch{target} during {(hi - anchor) / NS_PER_MS:.0f} ms")

    # muted_while
    assert exp.input is not None and exp.scene is not None
    points = sorted({anchor, hi, *(ns for ns, _s in tl.program_changes(anchor, hi)),
                     *(ns for ns, _m in tl.mute_changes(exp.input, anchor, hi))})
    if tl.muted_at(exp.input, anchor) is None and not tl.mute_changes(exp.input, anchor, hi):
        return res(False, f"no mute state for {exp.input!r} was observed")
    worst_ms, worst_at, mismatch_start = 0.0, None, None
    for a, b in zip(points, [*points[1:], hi], strict=False):
        scene, muted = tl.program_at(a), tl.muted_at(exp.input, a)
        bad = muted is not None and scene is not None and muted != (scene == exp.scene)
        if bad and mismatch_start is None:
            mismatch_start = a
        if (not bad or b >= hi) and mismatch_start is not None:
            end = b if bad else a
            dur = (end - mismatch_start) / NS_PER_MS
            if dur > worst_ms:
                worst_ms, worst_at = dur, (mismatch_start - anchor) / NS_PER_MS
            mismatch_start = None
    if worst_ms > exp.tolerance_ms:
        return res(False, f"{exp.input!r} mute disagreed with {exp.scene!r} on program for {worst_ms:.0f} ms "
                          f"(from {worst_at:.0f} ms; tolerance {exp.tolerance_ms:g} ms)", worst_ms)
    return res(True, f"{exp.input!r} muted exactly while {exp.scene!r} on program "
                     f"(longest disagreement {worst_ms:.0f} ms ≤ {exp.tolerance_ms:g} ms)", worst_ms)


def _stays(exp: Expectation, tl: Timeline, from_ns: int, end_ns: int, res: Any, latency_ms: float,
           detail: str) -> ExpectationResult:
    if exp.stays_s <= 0:
        return res(True, detail, latency_ms)
    until = from_ns + int(exp.stays_s * 1000 * NS_PER_MS)
    if end_ns < until:
        return res(False, f"{detail}, but observation ended before {exp.stays_s:g} s passed", latency_ms)
    if exp.kind == "program_scene":
        away = tl.program_changes(from_ns, until)
        if away:
            return res(False, f"{detail}, left for {away[0][1]!r} after "
                              f"{(away[0][0] - from_ns) / NS_PER_MS:.0f} ms (< {exp.stays_s:g} s)", latency_ms)
    elif exp.kind == "input_muted" and exp.input:
        flips = tl.mute_changes(exp.input, from_ns, until)
        if flips:
            return res(False, f"{detail}, changed again after {(flips[0][0] - from_ns) / NS_PER_MS:.0f} ms",
                       latency_ms)
    return res(True, f"{detail}, held {exp.stays_s:g} s", latency_ms)
