"""Scenario files: the shipped ones load; broken ones fail with the file and step named."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scenarios.keys import KeyChordError, parse_chord
from scenarios.loader import ScenarioError, build_scenario, load_scenario, parse_scenario

FILES = sorted((Path(__file__).resolve().parents[2] / "scenarios" / "files").glob("*.yaml"))


def test_shipped_files_load() -> None:
    assert {f.stem for f in FILES} >= {"R06.12.01.01-T06", "R06.12.01.01-T20"}
    for f in FILES:
        sc = load_scenario(f)
        assert sc.task and sc.task in f.stem
        assert sc.steps and sc.expectations


def test_t06_file_content() -> None:
    sc = load_scenario(next(f for f in FILES if f.stem.endswith("T06")))
    keys = [s.arg for s in sc.steps if s.action == "key"]
    assert keys == ["Ctrl+Alt+1", "Ctrl+Alt+2", "Ctrl+Alt+3", "Ctrl+Alt+1", "Ctrl+Alt+M", "Ctrl+Alt+M"]
    assert [s.at_ms for s in sc.steps] == sorted(s.at_ms for s in sc.steps)
    scenes = {e.scene for e in sc.expectations if e.kind == "program_scene"}
    assert scenes == {"Gameplay", "Just Chatting", "Desktop"}


def test_chords() -> None:
    c = parse_chord("ctrl+alt+1")
    assert c.modifiers == ("Control_L", "Alt_L") and c.key == "1"
    assert parse_chord("Alt+Ctrl+m") == parse_chord("ctrl+alt+M")
    assert str(parse_chord("f9")) == "F9"
    with pytest.raises(KeyChordError, match="unknown modifier 'hyper'"):
        parse_chord("hyper+1")
    with pytest.raises(KeyChordError, match="unknown key 'nosuchkey'"):
        parse_chord("ctrl+nosuchkey")


GOOD = """
name: t
steps:
  - {id: a, at_ms: 100, key: ctrl+alt+1}
  - {id: b, after: a, delay_ms: 50, mark: hello}
  - {id: c, after_event: {kind: CurrentProgramSceneChanged, data: {sceneName: X}}, timeout_ms: 900, mark: seen}
expect:
  - {id: e1, program_scene: X, after: a, within_ms: 500, stays_s: 1}
  - {id: e2, no_switch: {to: [Privacy]}, after: a, until: b}
  - {id: e3, muted_while: {input: Mic, scene: Privacy}, after: a}
"""


def test_good_scenario_fields() -> None:
    sc = parse_scenario(GOOD, "good.yaml")
    a, b, c = sc.steps
    assert (a.at_ms, a.arg, a.hold_ms) == (100.0, "Ctrl+Alt+1", 100.0)
    assert (b.after, b.delay_ms, b.arg) == ("a", 50.0, "hello")
    assert c.after_event is not None and c.after_event.data == {"sceneName": "X"} and c.timeout_ms == 900
    e1, e2, e3 = sc.expectations
    assert (e1.scene, e1.within_ms, e1.stays_s) == ("X", 500.0, 1.0)
    assert (e2.scenes, e2.until) == (("Privacy",), "b")
    assert (e3.input, e3.scene) == ("Mic", "Privacy")


@pytest.mark.parametrize(("text", "message"), [
    ("steps: [{id: a, at_ms: 0, key: ctrl+hyper+1}]", r"bad.yaml: step 1 \(a\): unknown modifier 'hyper'"),
    ("steps: [{id: a, at_ms: 0, press: F9}]", r"step 1 \(a\): unknown key\(s\) \['press'\]"),
    ("steps: [{id: a, key: F9}]", r"step 1 \(a\): needs exactly one of at_ms"),
    ("steps: [{id: a, at_ms: 0, after: a, key: F9}]", r"step 1 \(a\): needs exactly one of at_ms"),
    ("steps: [{id: a, at_ms: 0, key: F9}, {id: b, after: zz, mark: x}]",
     r"step 2 \(b\): after 'zz' must name an earlier step"),
    ("steps: [{id: a, at_ms: 0, key: F9}, {id: a, at_ms: 5, key: F9}]", r"step 2 \(a\): duplicate step id"),
    ("steps: [{id: a, at_ms: -5, key: F9}]", r"step 1 \(a\): at_ms must be between"),
    ("steps: [{id: a, at_ms: 0, focus: '(', match: regex}]", r"step 1 \(a\): bad title regex"),
    ("steps: [{id: a, at_ms: 0, key: F9, mark: x}]", r"step 1 \(a\): needs exactly one action"),
    ("steps: [{id: a, at_ms: 0, key: F9}]\nexpect: [{program_scene: X, after: a}]",
     r"expect 1 \(expect1\): program_scene needs within_ms"),
    ("steps: [{id: a, at_ms: 0, key: F9}]\nexpect: [{program_scene: X, after: b, within_ms: 5}]",
     r"expect 1 \(expect1\): after 'b' is not a step id"),
    ("steps: [{id: a, at_ms: 0, key: F9}]\nexpect: [{input_muted: {input: Mic, muted: maybe}, after: a, within_ms: 5}]",
     r"muted must be true, false or toggle"),
    ("steps: []", r"'steps' must be a non-empty list"),
    ("- just a list", r"a scenario must be a mapping"),
    ("steps: [{id: a, at_ms: 0, key: F9}\n", r"bad.yaml: line \d+ not valid YAML"),
    ("name: x\nstepz: []", r"unknown top-level key"),
])
def test_errors_name_file_and_step(text: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message) as err:
        parse_scenario(text, "bad.yaml")
    assert str(err.value).startswith("bad.yaml")


def test_missing_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no such file"):
        load_scenario(tmp_path / "nope.yaml")
    junk = tmp_path / "junk.yaml"
    junk.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ScenarioError, match=r"junk\.yaml: cannot read"):
        load_scenario(junk)


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True),
                     st.text(max_size=12))
_keys = st.sampled_from(["id", "at_ms", "at_s", "after", "after_event", "delay_ms", "key", "focus", "mark",
                         "wait", "open_window", "match", "hold_ms", "program_scene", "within_ms", "no_switch",
                         "muted_while", "input_muted", "event", "until", "stays_s", "kind", "data", "x"])
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(_keys, inner, max_size=5)),
                       max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["name", "task", "inputs", "settle_ms", "steps", "expect", "junk"]),
                       _values, max_size=5))
def test_garbage_documents_give_scenario_errors_only(doc: dict) -> None:
    try:
        build_scenario(doc, "fuzz.yaml")
    except ScenarioError as exc:
        assert str(exc).startswith("fuzz.yaml")
