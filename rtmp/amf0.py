"""AMF0 encoding and decoding, in full.

Decoded types: number → float, boolean → bool, string/long string → str, object → dict,
null → None, undefined → `UNDEFINED`, reference → the referenced object, ECMA array →
`EcmaArray` (a dict subclass, so metadata reads like an object), strict array → list,
date → `AmfDate`, XML document → `XmlDocument`, typed object → `TypedObject`,
unsupported → `UNSUPPORTED`. Everything malformed raises `AmfError`, nothing else: the decoder
never recurses deeper than `MAX_DEPTH` and never trusts a declared count beyond the bytes left.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from typing import Any

from rtmp.errors import AmfError

MAX_DEPTH = 64

NUMBER, BOOLEAN, STRING, OBJECT, MOVIECLIP, NULL, UNDEFINED_M, REFERENCE, ECMA_ARRAY, OBJECT_END, \
    STRICT_ARRAY, DATE, LONG_STRING, UNSUPPORTED_M, RECORDSET, XML_DOCUMENT, TYPED_OBJECT, AVMPLUS = range(18)


class _Singleton:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


UNDEFINED = _Singleton("UNDEFINED")
UNSUPPORTED = _Singleton("UNSUPPORTED")


class EcmaArray(dict):  # type: ignore[type-arg]
    """An AMF0 ECMA (associative) array; onMetaData usually arrives as one."""


@dataclass(frozen=True)
class AmfDate:
    """Milliseconds since the Unix epoch plus the (ignored by everyone) timezone field."""

    epoch_ms: float
    tz_min: int = 0


@dataclass(frozen=True)
class XmlDocument:
    text: str


@dataclass
class TypedObject:
    class_name: str
    values: dict[str, Any] = field(default_factory=dict)


class _Decoder:
    __slots__ = ("data", "pos", "refs")

    def __init__(self, data: bytes, pos: int) -> None:
        self.data = data
        self.pos = pos
        self.refs: list[Any] = []

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if end > len(self.data):
            raise AmfError(f"truncated AMF0: need {n} bytes at offset {self.pos}")
        chunk = self.data[self.pos:end]
        self.pos = end
        return chunk

    def u8(self) -> int:
        return self.take(1)[0]

    def u16(self) -> int:
        return struct.unpack(">H", self.take(2))[0]

    def u32(self) -> int:
        return struct.unpack(">I", self.take(4))[0]

    def utf8(self, n: int) -> str:
        try:
            return self.take(n).decode("utf-8")
        except UnicodeDecodeError:
            raise AmfError("string is not valid UTF-8") from None

    def short_string(self) -> str:
        return self.utf8(self.u16())

    def value(self, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise AmfError(f"AMF0 nested deeper than {MAX_DEPTH}")
        marker = self.u8()
        if marker == NUMBER:
            return struct.unpack(">d", self.take(8))[0]
        if marker == BOOLEAN:
            return self.u8() != 0
        if marker == STRING:
            return self.short_string()
        if marker == OBJECT:
            obj: dict[str, Any] = {}
            self.refs.append(obj)
            self.properties(obj, depth)
            return obj
        if marker == NULL:
            return None
        if marker == UNDEFINED_M:
            return UNDEFINED
        if marker == REFERENCE:
            idx = self.u16()
            if idx >= len(self.refs):
                raise AmfError(f"AMF0 reference {idx} to an unknown object")
            return self.refs[idx]
        if marker == ECMA_ARRAY:
            self.u32()  # advisory count; the end marker is what terminates it (ffmpeg writes 0 sometimes)
            arr = EcmaArray()
            self.refs.append(arr)
            self.properties(arr, depth)
            return arr
        if marker == STRICT_ARRAY:
            count = self.u32()
            if count > len(self.data) - self.pos:  # every element takes at least one byte
                raise AmfError(f"strict array of {count} elements cannot fit")
            items: list[Any] = []
            self.refs.append(items)
            for _ in range(count):
                items.append(self.value(depth + 1))
            return items
        if marker == DATE:
            ms = struct.unpack(">d", self.take(8))[0]
            tz = struct.unpack(">h", self.take(2))[0]
            return AmfDate(ms, tz)
        if marker == LONG_STRING:
            return self.utf8(self.u32())
        if marker == UNSUPPORTED_M:
            return UNSUPPORTED
        if marker == XML_DOCUMENT:
            return XmlDocument(self.utf8(self.u32()))
        if marker == TYPED_OBJECT:
            typed = TypedObject(self.short_string())
            self.refs.append(typed)
            self.properties(typed.values, depth)
            return typed
        if marker == AVMPLUS:
            raise AmfError("AMF3 value inside AMF0 is not supported")
        raise AmfError(f"unknown or reserved AMF0 marker {marker}")

    def properties(self, target: dict[str, Any], depth: int) -> None:
        while True:
            key = self.short_string()
            if key == "":
                end = self.u8()
                if end != OBJECT_END:
                    raise AmfError(f"expected object end marker, got {end}")
                return
            target[key] = self.value(depth + 1)


def decode_one(data: bytes, pos: int = 0) -> tuple[Any, int]:
    """Decode one value at `pos`; return it and the position after it."""
    dec = _Decoder(bytes(data), pos)
    value = dec.value(0)
    return value, dec.pos


def decode_all(data: bytes) -> list[Any]:
    """Decode a sequence of values (a command or data message body) to the end."""
    dec = _Decoder(bytes(data), 0)
    out: list[Any] = []
    while dec.pos < len(dec.data):
        out.append(dec.value(0))
    return out


def _encode_str_body(s: str) -> bytes:
    raw = s.encode("utf-8")
    if len(raw) > 0xFFFF:
        raise ValueError("key longer than 65535 bytes")
    return struct.pack(">H", len(raw)) + raw


def _encode_props(obj: dict[str, Any], out: list[bytes], depth: int) -> None:
    for k, v in obj.items():
        out.append(_encode_str_body(str(k)))
        _encode(v, out, depth + 1)
    out.append(b"\x00\x00\x09")


def _encode(value: Any, out: list[bytes], depth: int) -> None:
    if depth > MAX_DEPTH:
        raise ValueError("value nested too deep for AMF0")
    if value is None:
        out.append(b"\x05")
    elif value is UNDEFINED:
        out.append(b"\x06")
    elif value is UNSUPPORTED:
        out.append(b"\x0d")
    elif isinstance(value, bool):
        out.append(b"\x01\x01" if value else b"\x01\x00")
    elif isinstance(value, (int, float)):
        out.append(b"\x00" + struct.pack(">d", float(value)))
    elif isinstance(value, str):
        raw = value.encode("utf-8")
        if len(raw) <= 0xFFFF:
            out.append(b"\x02" + struct.pack(">H", len(raw)) + raw)
        else:
            out.append(b"\x0c" + struct.pack(">I", len(raw)) + raw)
    elif isinstance(value, AmfDate):
        out.append(b"\x0b" + struct.pack(">dh", value.epoch_ms, value.tz_min))
    elif isinstance(value, XmlDocument):
        raw = value.text.encode("utf-8")
        out.append(b"\x0f" + struct.pack(">I", len(raw)) + raw)
    elif isinstance(value, TypedObject):
        out.append(b"\x10" + _encode_str_body(value.class_name))
        _encode_props(value.values, out, depth)
    elif isinstance(value, EcmaArray):
        out.append(b"\x08" + struct.pack(">I", len(value)))
        _encode_props(value, out, depth)
    elif isinstance(value, dict):
        out.append(b"\x03")
        _encode_props(value, out, depth)
    elif isinstance(value, (list, tuple)):
        out.append(b"\x0a" + struct.pack(">I", len(value)))
        for item in value:
            _encode(item, out, depth + 1)
    else:
        raise TypeError(f"cannot encode {type(value).__name__} as AMF0")


def encode(*values: Any) -> bytes:
    """Encode values back to back (as a command or data message body)."""
    out: list[bytes] = []
    for v in values:
        _encode(v, out, 0)
    return b"".join(out)


def same(a: Any, b: Any) -> bool:
    """Equality that treats NaN as equal to NaN (for round-trip tests)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return type(a) is type(b) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
