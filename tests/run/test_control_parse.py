"""Control messages: garbage of any shape is a ControlError (one line), never another exception."""

from __future__ import annotations

import json
from pathlib import Path

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


def _start(work, gt, **extra) -> bytes:
    return json.dumps({"cmd": "start", "task": "T", "workdir": str(work), "gt": str(gt), **extra}).encode()


def test_paths_must_be_distinct_non_overlapping_and_allowed(tmp_path):
    from monitor.mqtt.control import PathPolicy

    work, gt, elsewhere = tmp_path / "w", tmp_path / "g", tmp_path / "x"
    for d in (work, gt, elsewhere, work / "sub", gt / "sub"):
        d.mkdir()
    (tmp_path / "link").symlink_to(work)
    cases = [(_start(work, work), "gt is the work dir"), (_start(work, work / "sub"), "inside the work dir"),
             (_start(gt / "sub", gt), "work dir is inside gt"), (_start(tmp_path / "link", work / "sub"), "inside"),
             (_start("/", gt), "is /"), (_start("/etc", gt), "system directory"), (_start(work, "/usr/share"), "system"),
             (_start("/tmp", gt), "top-level"), (_start(work, gt, timeout_s=0), "timeout_s"),
             (_start(work, gt, timeout_s=1e308 * 10), "Infinity"), (_start(work, gt, timeout_s=10**400), "timeout_s")]
    for payload, fragment in cases:
        with pytest.raises(ControlError, match=fragment):
            parse_control(payload)
    allow = PathPolicy.of([tmp_path / "w", tmp_path / "g"])
    assert parse_control(_start(work, gt), allow).workdir == work.resolve()
    with pytest.raises(ControlError, match="outside every --allow-root"):
        parse_control(_start(elsewhere, gt), allow)
    with pytest.raises(ControlError, match="is /"):
        parse_control(_start("/", gt), PathPolicy.of([Path("/")]))


def test_size_depth_and_constants_are_replies_not_exceptions():
    for payload, fragment in [(b'{"cmd":"done","' + b"k" * 70_000 + b'":1}', "byte limit"),
                              (b"[" * 100_000 + b"]" * 100_000, "byte limit"),
                              (b'{"cmd":"done","x":' + b"[" * 20_000 + b"]" * 20_000 + b"}", "nested deeper"),
                              (b'{"cmd":"start","timeout_s":NaN}', "NaN"),
                              (b'{"cmd":"done","' + b"k" * 5000 + b'":1}', "unknown key")]:
        with pytest.raises(ControlError, match=fragment) as info:
            parse_control(payload)
        assert len(str(info.value)) < 300
