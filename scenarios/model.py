"""Typed scenario: steps (what to do, when) and expectations (what the observers must report).

Plain frozen dataclasses: the loader builds them from YAML after validation, the engine runs them,
and `evaluate` judges expectations from recorded events, so a run bundle can be re-judged later.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

ActionKind = Literal["open_window", "close_window", "focus", "key", "wait", "mark"]
TitleMatch = Literal["exact", "contains", "regex"]


@dataclass(frozen=True, slots=True)
class EventMatch:
    """An observed event: its kind (an OBS event type such as CurrentProgramSceneChanged) and
    payload fields that must be equal."""

    kind: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Step:
    """One action. Timing: `at_ms` from the scenario start, or `delay_ms` after step `after`
    ran, or `delay_ms` after an event matching `after_event` (waited for at most `timeout_ms`,
    counted from when the previous step in the file ran)."""

    id: str
    index: int
    action: ActionKind
    arg: str = ""                 # title, chord, or mark label
    match: TitleMatch = "exact"   # for focus/close_window
    hold_ms: float = 100.0        # for key
    wait_ms: float = 0.0          # for wait: how long the step lasts
    at_ms: float | None = None
    after: str | None = None
    after_event: EventMatch | None = None
    delay_ms: float = 0.0
    timeout_ms: float = 5000.0


ExpectKind = Literal["program_scene", "input_muted", "event", "no_switch", "muted_while"]


@dataclass(frozen=True, slots=True)
class Expectation:
    """A claim about observed events, anchored at a step's actual time.

    program_scene / input_muted / event: the state (or event) must appear after step `after`,
      no sooner than `not_before_ms` and within `within_ms`; with `stays_s` it must then hold.
    no_switch: no program-scene change (to `scenes`, or to any scene when empty) between step
      `after` and step `until` (or the end).
    muted_while: input `input` is muted exactly while `scene` is on program, between `after` and
      `until`, allowing `tolerance_ms` for the two changes not being simultaneous.
    """

    id: str
    index: int
    kind: ExpectKind
    after: str | None = None
    until: str | None = None
    scene: str | None = None
    scenes: tuple[str, ...] = ()
    input: str | None = None
    muted: bool | Literal["toggle"] | None = None
    event: EventMatch | None = None
    within_ms: float | None = None
    not_before_ms: float = 0.0
    stays_s: float = 0.0
    tolerance_ms: float = 300.0


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    source: str                     # the file it came from (for messages)
    steps: tuple[Step, ...]
    expectations: tuple[Expectation, ...]
    task: str | None = None
    inputs: tuple[str, ...] = ()    # inputs whose mute state matters (snapshotted at start)
    settle_ms: float = 500.0        # extra observation time after the last step

    def step(self, step_id: str) -> Step:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)
