"""YAML scenario files → `Scenario`, with errors that name the file and the step.

Format (see docs/scenarios.md):

    name: T06 scene hotkeys
    task: R06.12.01.01-T06
    inputs: [Mic]
    settle_ms: 800
    steps:
      - {id: k1, at_ms: 500, key: ctrl+alt+1}
      - {id: note, after: k1, delay_ms: 200, mark: "pressed"}
      - {id: seen, after_event: {kind: CurrentProgramSceneChanged, data: {sceneName: Gameplay}},
         timeout_ms: 2000, mark: "Gameplay seen"}
    expect:
      - {id: gameplay, program_scene: Gameplay, after: k1, within_ms: 500, stays_s: 1}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from scenarios.keys import KeyChordError, parse_chord
from scenarios.model import EventMatch, Expectation, Scenario, Step

ACTIONS = ("open_window", "close_window", "focus", "key", "wait", "mark")
_STEP_KEYS = {"id", "at_ms", "at_s", "after", "after_event", "delay_ms", "timeout_ms", "match", "hold_ms",
              *ACTIONS}
EXPECT_KINDS = ("program_scene", "input_muted", "event", "no_switch", "muted_while")
_EXPECT_KEYS = {"id", "after", "until", "within_ms", "not_before_ms", "stays_s", "tolerance_ms", "input",
                "muted", "scene", *EXPECT_KINDS}
_ID_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
MAX_FILE_BYTES = 1_000_000


class ScenarioError(ValueError):
    """A scenario file that cannot be used; the message names the file and the step."""


def load_scenario(path: str | Path) -> Scenario:
    p = Path(path)
    try:
        if p.stat().st_size > MAX_FILE_BYTES:
            raise ScenarioError(f"{p}: larger than {MAX_FILE_BYTES} bytes; not a scenario")
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{p}: cannot read: {exc}") from None
    return parse_scenario(text, str(p))


def parse_scenario(text: str, source: str = "<string>") -> Scenario:
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise ScenarioError(f"{source}:{where} not valid YAML: {getattr(exc, 'problem', exc)}") from None
    return build_scenario(doc, source)


def build_scenario(doc: Any, source: str = "<dict>") -> Scenario:
    if not isinstance(doc, Mapping):
        raise ScenarioError(f"{source}: a scenario must be a mapping with 'steps' (got {type(doc).__name__})")
    unknown = set(doc) - {"name", "task", "inputs", "settle_ms", "steps", "expect", "description"}
    if unknown:
        raise ScenarioError(f"{source}: unknown top-level key(s) {sorted(unknown)}")
    steps_raw = doc.get("steps")
    if not isinstance(steps_raw, list) or not steps_raw:
        raise ScenarioError(f"{source}: 'steps' must be a non-empty list")
    expect_raw = doc.get("expect", []) or []
    if not isinstance(expect_raw, list):
        raise ScenarioError(f"{source}: 'expect' must be a list")
    inputs = doc.get("inputs", []) or []
    if not (isinstance(inputs, list) and all(isinstance(i, str) and i for i in inputs)):
        raise ScenarioError(f"{source}: 'inputs' must be a list of input names")
    settle = _number(doc.get("settle_ms", 500), f"{source}: settle_ms", lo=0, hi=600_000)

    steps: list[Step] = []
    for i, raw in enumerate(steps_raw):
        steps.append(_step(raw, i, source, {s.id for s in steps}))
    step_ids = [s.id for s in steps]
    expectations = [_expectation(raw, i, source, step_ids) for i, raw in enumerate(expect_raw)]
    ids = [e.id for e in expectations]
    dup = {x for x in ids if ids.count(x) > 1}
    if dup:
        raise ScenarioError(f"{source}: duplicate expectation id(s) {sorted(dup)}")
    name = doc.get("name") or Path(source).stem
    task = doc.get("task")
    if task is not None and not isinstance(task, str):
        raise ScenarioError(f"{source}: 'task' must be a task id string")
    return Scenario(name=str(name), source=source, steps=tuple(steps), expectations=tuple(expectations),
                    task=task, inputs=tuple(inputs), settle_ms=settle)


def _number(v: Any, where: str, lo: float = 0.0, hi: float = 3_600_000.0) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ScenarioError(f"{where} must be a number (got {v!r})")
    if not lo <= float(v) <= hi:
        raise ScenarioError(f"{where} must be between {lo:g} and {hi:g} (got {v!r})")
    return float(v)


def _event_match(v: Any, where: str) -> EventMatch:
    if isinstance(v, str) and v:
        return EventMatch(v)
    if isinstance(v, Mapping) and isinstance(v.get("kind"), str) and v["kind"]:
        extra = set(v) - {"kind", "data"}
        if extra:
            raise ScenarioError(f"{where}: unknown key(s) {sorted(extra)} (use kind and data)")
        data = v.get("data", {}) or {}
        if not isinstance(data, Mapping):
            raise ScenarioError(f"{where}: 'data' must be a mapping of payload fields")
        return EventMatch(v["kind"], dict(data))
    raise ScenarioError(f"{where}: an event is a kind string or {{kind: ..., data: {{...}}}}")


def _entry_id(raw: Any, what: str, index: int, source: str) -> tuple[str, str]:
    """A step's or expectation's id (default `<what><n>`) and the "where" prefix of its errors."""
    where = f"{source}: {what} {index + 1}"
    if not isinstance(raw, Mapping):
        raise ScenarioError(f"{where}: must be a mapping (got {type(raw).__name__})")
    entry_id = raw.get("id", f"{what}{index + 1}")
    if not isinstance(entry_id, str) or not _ID_RE.match(entry_id):
        raise ScenarioError(f"{where}: id {entry_id!r} must be 1-64 letters, digits, '_', '.', '-'")
    return entry_id, f"{source}: {what} {index + 1} ({entry_id})"


def _exactly_one(raw: dict[str, Any], known: set[str], choices: tuple[str, ...],
                 where: str, listed_as: str, needs: str) -> str:
    """The one key of `choices` an entry has (a step's action, an expectation's kind); ScenarioError
    for a key outside `known` or for none or several of `choices`."""
    unknown = set(raw) - known
    if unknown:
        raise ScenarioError(f"{where}: unknown key(s) {sorted(unknown)}; {listed_as} {', '.join(choices)}")
    present = [c for c in choices if c in raw]
    if len(present) != 1:
        raise ScenarioError(f"{where}: needs exactly {needs} {', '.join(choices)} (got {present or 'none'})")
    return present[0]


def _step(raw: Any, index: int, source: str, earlier: set[str]) -> Step:
    sid, where = _entry_id(raw, "step", index, source)
    if sid in earlier:
        raise ScenarioError(f"{where}: duplicate step id")
    action = _exactly_one(raw, _STEP_KEYS, ACTIONS, where, "actions are", "one action of")
    value = raw[action]
    kw: dict[str, Any] = {}
    if action in ("open_window", "close_window", "focus", "mark"):
        if not isinstance(value, str) or not value:
            raise ScenarioError(f"{where}: {action} needs a non-empty title/label string")
        kw["arg"] = value
    elif action == "key":
        try:
            chord = parse_chord(value)
        except KeyChordError as exc:
            raise ScenarioError(f"{where}: {exc}") from None
        kw["arg"] = str(chord)
        if "hold_ms" in raw:
            kw["hold_ms"] = _number(raw["hold_ms"], f"{where}: hold_ms", lo=1, hi=10_000)
    elif action == "wait":
        kw["wait_ms"] = 0.0 if value is True else _number(value, f"{where}: wait (ms)")
    if "match" in raw:
        if action not in ("focus", "close_window") or raw["match"] not in ("exact", "contains", "regex"):
            raise ScenarioError(f"{where}: 'match' (exact, contains, regex) applies to focus/close_window")
        kw["match"] = raw["match"]
        if raw["match"] == "regex":
            try:
                re.compile(kw["arg"])
            except re.error as exc:
                raise ScenarioError(f"{where}: bad title regex {kw['arg']!r}: {exc}") from None

    timing = [k for k in ("at_ms", "at_s", "after", "after_event") if k in raw]
    if len(timing) != 1:
        raise ScenarioError(f"{where}: needs exactly one of at_ms, at_s, after, after_event (got {timing or 'none'})")
    if "at_ms" in raw:
        kw["at_ms"] = _number(raw["at_ms"], f"{where}: at_ms")
    elif "at_s" in raw:
        kw["at_ms"] = _number(raw["at_s"], f"{where}: at_s", hi=3600) * 1000.0
    elif "after" in raw:
        if raw["after"] not in earlier:
            raise ScenarioError(f"{where}: after {raw['after']!r} must name an earlier step "
                                f"(earlier: {sorted(earlier) or 'none'})")
        kw["after"] = raw["after"]
    else:
        kw["after_event"] = _event_match(raw["after_event"], f"{where}: after_event")
        if "timeout_ms" in raw:
            kw["timeout_ms"] = _number(raw["timeout_ms"], f"{where}: timeout_ms", lo=1)
    if "delay_ms" in raw:
        if "at_ms" in kw:
            raise ScenarioError(f"{where}: delay_ms goes with after/after_event, not at_ms")
        kw["delay_ms"] = _number(raw["delay_ms"], f"{where}: delay_ms")
    return Step(id=sid, index=index, action=action, **kw)


def _expectation(raw: Any, index: int, source: str, step_ids: list[str]) -> Expectation:
    eid, where = _entry_id(raw, "expect", index, source)
    kind = _exactly_one(raw, _EXPECT_KEYS, EXPECT_KINDS, where, "kinds are", "one of")
    kw: dict[str, Any] = {}
    for key in ("after", "until"):
        if key in raw:
            if raw[key] not in step_ids:
                raise ScenarioError(f"{where}: {key} {raw[key]!r} is not a step id (steps: {step_ids})")
            kw[key] = raw[key]
    if kind in ("program_scene", "input_muted", "event"):
        if "after" not in kw:
            raise ScenarioError(f"{where}: {kind} needs 'after: <step id>' to measure latency from")
        if "within_ms" not in raw:
            raise ScenarioError(f"{where}: {kind} needs within_ms")
        kw["within_ms"] = _number(raw["within_ms"], f"{where}: within_ms", lo=1)
        if "not_before_ms" in raw:
            kw["not_before_ms"] = _number(raw["not_before_ms"], f"{where}: not_before_ms")
            if kw["not_before_ms"] >= kw["within_ms"]:
                raise ScenarioError(f"{where}: not_before_ms must be less than within_ms")
        if "stays_s" in raw:
            kw["stays_s"] = _number(raw["stays_s"], f"{where}: stays_s", hi=3600)
    elif any(k in raw for k in ("within_ms", "not_before_ms", "stays_s")):
        raise ScenarioError(f"{where}: within_ms/not_before_ms/stays_s apply to program_scene, input_muted, event")
    if "tolerance_ms" in raw:
        kw["tolerance_ms"] = _number(raw["tolerance_ms"], f"{where}: tolerance_ms", hi=60_000)

    if kind == "program_scene":
        if not isinstance(raw[kind], str) or not raw[kind]:
            raise ScenarioError(f"{where}: program_scene needs a scene name")
        kw["scene"] = raw[kind]
    elif kind == "input_muted":
        spec = raw[kind]
        if not isinstance(spec, Mapping) or not isinstance(spec.get("input"), str) or "muted" not in spec:
            raise ScenarioError(f"{where}: input_muted is {{input: NAME, muted: true|false|toggle}}")
        if spec["muted"] not in (True, False, "toggle"):
            raise ScenarioError(f"{where}: muted must be true, false or toggle (got {spec['muted']!r})")
        kw["input"], kw["muted"] = spec["input"], spec["muted"]
    elif kind == "event":
        kw["event"] = _event_match(raw[kind], f"{where}: event")
    elif kind == "no_switch":
        spec = raw[kind]
        scenes = spec.get("to") if isinstance(spec, Mapping) else (None if spec is True else spec)
        if isinstance(scenes, str):
            scenes = [scenes]
        if scenes is None:
            scenes = []
        if not (isinstance(scenes, list) and all(isinstance(s, str) and s for s in scenes)):
            raise ScenarioError(f"{where}: no_switch is true, a scene name, or {{to: [scenes]}}")
        if "after" not in kw:
            raise ScenarioError(f"{where}: no_switch needs 'after: <step id>' (start of the interval)")
        kw["scenes"] = tuple(scenes)
    elif kind == "muted_while":
        spec = raw[kind]
        if not (isinstance(spec, Mapping) and isinstance(spec.get("input"), str)
                and isinstance(spec.get("scene"), str)):
            raise ScenarioError(f"{where}: muted_while is {{input: NAME, scene: SCENE}}")
        kw["input"], kw["scene"] = spec["input"], spec["scene"]
        if "after" not in kw:
            raise ScenarioError(f"{where}: muted_while needs 'after: <step id>' (start of the interval)")
    if "until" in kw and "after" in kw and step_ids.index(kw["until"]) < step_ids.index(kw["after"]):
        raise ScenarioError(f"{where}: until {kw['until']!r} comes before after {kw['after']!r}")
    return Expectation(id=eid, index=index, kind=kind, **kw)
