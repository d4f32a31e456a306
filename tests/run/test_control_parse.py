"""Control messages: garbage of any shape is a ControlError (one line), never another exception."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.mqtt.control import ControlError, parse_control

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                           lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=10)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes(data):
    try:
        parse_control(data)
    except ControlError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["cmd", "task", "workdir", "gt", "run", "timeout_s", "id", "x"]),
                       json_values, max_size=7))
def test_random_objects(obj):
    try:
        parse_control(json.dumps(obj).encode())
    except ControlError:
        pass


def test_valid_start_and_done(tmp_path):
    (tmp_path / "w").mkdir()
    (tmp_path / "g").mkdir()
    msg = parse_control(json.dumps({"cmd": "start", "task": "T", "workdir": str(tmp_path / "w"),
                                    "gt": str(tmp_path / "g"), "timeout_s": 5}).encode())
    assert (msg.cmd, msg.workdir, msg.timeout_s) == ("start", (tmp_path / "w").resolve(), 5.0)
    assert parse_control(b'{"cmd":"done","run":"r1"}').run == "r1"


@pytest.mark.parametrize("payload, fragment", [
    (b"{", "malformed JSON"),
    (b"[1]", "JSON object"),
    (b'{"cmd":"start","task":"T","workdir":"rel","gt":"/"}', "absolute"),
    (b'{"cmd":"done","extra":1}', "unknown key"),
    (b'{"cmd":"start","task":"T","workdir":"/","gt":"/","timeout_s":-1}', "timeout_s"),
])
def test_rejections_say_why(payload, fragment):
    with pytest.raises(ControlError, match=fragment):
        parse_control(payload)
