"""AMF0: every type round-trips, and hand-written bytes decode to what the spec says."""

from __future__ import annotations

import struct

import pytest

from rtmp import amf0
from rtmp.errors import AmfError


@pytest.mark.parametrize("value", [
    0.0, -1.5, 1e300, True, False, "", "héllo", "x" * 70000, None, amf0.UNDEFINED, amf0.UNSUPPORTED,
    {"a": 1.0, "b": {"c": [1.0, "two", None]}}, amf0.EcmaArray(width=1920.0, height=1080.0), [],
    [1.0, [2.0, [3.0]]], amf0.AmfDate(1.7e12, 60), amf0.XmlDocument("<a/>"),
    amf0.TypedObject("flex.Foo", {"x": 1.0}),
])
def test_round_trip(value: object) -> None:
    data = amf0.encode(value)
    decoded, end = amf0.decode_one(data)
    assert end == len(data)
    assert amf0.same(decoded, value)
    assert type(decoded) is type(value) or isinstance(value, int)


def test_known_bytes() -> None:
    assert amf0.encode("connect", 1) == b"\x02\x00\x07connect" + b"\x00" + struct.pack(">d", 1.0)
    # Long string marker 0x0c above 65535 bytes.
    assert amf0.encode("y" * 65536)[0] == 0x0C
    # ECMA array whose count says 0 (ffmpeg does this) still holds its properties.
    data = b"\x08\x00\x00\x00\x00" + b"\x00\x05width" + b"\x00" + struct.pack(">d", 640) + b"\x00\x00\x09"
    assert amf0.decode_one(data)[0] == {"width": 640.0}
    # References count complex values in order: 0 is the strict array, 1 the object inside it.
    data = b"\x0a\x00\x00\x00\x02" + b"\x03\x00\x01k\x05\x00\x00\x09" + b"\x07\x00\x01"
    outer = amf0.decode_one(data)[0]
    assert outer[1] is outer[0] == {"k": None}
    with pytest.raises(AmfError):
        amf0.decode_one(b"")


@pytest.mark.parametrize("data, why", [
    (b"\x00\x01", "truncated"), (b"\x02\x00\x05ab", "truncated"),
    (b"\x11\x01", "AMF3"), (b"\x04", "reserved"), (b"\x0e", "reserved"), (b"\x63", "unknown"),
    (b"\x07\x00\x05", "reference"), (b"\x0a\xff\xff\xff\xff", "cannot fit"),
    (b"\x03\x00\x00\x05", "end marker"), (b"\x02\x00\x02\xff\xfe", "UTF-8"),
    (b"\x03\x00\x01a" * 100, "deeper"),
])
def test_malformed_raises_amf_error(data: bytes, why: str) -> None:
    with pytest.raises(AmfError, match=why):
        amf0.decode_all(data)


def test_decode_all_command() -> None:
    body = amf0.encode("publish", 5, None, "key?x=1", "live")
    assert amf0.decode_all(body) == ["publish", 5.0, None, "key?x=1", "live"]
