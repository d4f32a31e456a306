"""Typed RTMP messages: meaning for the raw messages of the chunk layer, and builders for replies.

Media messages (8 audio, 9 video) stay as raw bodies: they are parsed by `codecs` and counted
by `stats`, and wrapping each in another object would cost CPU on the hot path.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from rtmp import amf0
from rtmp.chunk import RawMessage
from rtmp.errors import AmfError, MessageError

SET_CHUNK_SIZE = 1
ABORT = 2
ACKNOWLEDGEMENT = 3
USER_CONTROL = 4
WINDOW_ACK_SIZE = 5
SET_PEER_BANDWIDTH = 6
AUDIO = 8
VIDEO = 9
DATA_AMF3 = 15
SHARED_OBJECT_AMF3 = 16
COMMAND_AMF3 = 17
DATA_AMF0 = 18
SHARED_OBJECT_AMF0 = 19
COMMAND_AMF0 = 20
AGGREGATE = 22

#: Chunk stream ids the server uses for what it sends.
CSID_CONTROL = 2
CSID_COMMAND = 3

USER_STREAM_BEGIN = 0
USER_STREAM_EOF = 1
USER_PING_REQUEST = 6
USER_PING_RESPONSE = 7


@dataclass(slots=True)
class Control:
    """Protocol control / user control message with its integer fields."""

    type_id: int
    values: tuple[int, ...]


@dataclass(slots=True)
class Command:
    """An AMF command: `connect`, `publish`, `_result`, `onStatus`, ..."""

    name: str
    transaction_id: float
    command_object: Any
    args: list[Any] = field(default_factory=list)
    stream_id: int = 0


@dataclass(slots=True)
class Data:
    """A data message such as `@setDataFrame onMetaData {...}`."""

    values: list[Any]
    stream_id: int = 0
    timestamp_ms: int = 0


def _amf_body(raw: RawMessage) -> bytes:
    body = raw.body
    if raw.type_id in (COMMAND_AMF3, DATA_AMF3):
        # AMF3 command/data messages are AMF0 after one format byte (0): skip it.
        body = body[1:]
    return body


def decode_command(raw: RawMessage) -> Command:
    try:
        values = amf0.decode_all(_amf_body(raw))
    except AmfError as exc:
        raise MessageError(f"undecodable command: {exc}") from None
    if len(values) < 2 or not isinstance(values[0], str) or not isinstance(values[1], float):
        raise MessageError("command must start with a name and a transaction id")
    cmd_obj = values[2] if len(values) > 2 else None
    return Command(values[0], values[1], cmd_obj, values[3:], raw.stream_id)


def decode_data(raw: RawMessage) -> Data:
    try:
        values = amf0.decode_all(_amf_body(raw))
    except AmfError as exc:
        raise MessageError(f"undecodable data message: {exc}") from None
    return Data(values, raw.stream_id, raw.timestamp_ms)


def decode_control(raw: RawMessage) -> Control:
    body = raw.body
    t = raw.type_id
    try:
        if t in (SET_CHUNK_SIZE, ABORT, ACKNOWLEDGEMENT, WINDOW_ACK_SIZE):
            return Control(t, struct.unpack_from(">I", body))
        if t == SET_PEER_BANDWIDTH:
            return Control(t, struct.unpack_from(">IB", body))
        if t == USER_CONTROL:
            event = struct.unpack_from(">H", body)[0]
            if len(body) >= 6:
                return Control(t, (event, struct.unpack_from(">I", body, 2)[0]))
            return Control(t, (event,))
    except struct.error:
        raise MessageError(f"control message type {t} too short ({len(body)} bytes)") from None
    raise MessageError(f"type {t} is not a control message")


def split_aggregate(raw: RawMessage) -> list[RawMessage]:
    """An aggregate message is FLV tags back to back; timestamps are relative to the first."""
    out: list[RawMessage] = []
    body = raw.body
    pos = 0
    base: int | None = None
    while pos + 11 <= len(body):
        tag_type = body[pos]
        size = int.from_bytes(body[pos + 1:pos + 4], "big")
        ts = int.from_bytes(body[pos + 4:pos + 7], "big") | (body[pos + 7] << 24)
        if pos + 11 + size + 4 > len(body):
            raise MessageError("aggregate message truncated")
        if base is None:
            base = ts
        out.append(RawMessage(raw.csid, tag_type, raw.stream_id, raw.timestamp_ms + ts - base,
                              body[pos + 11:pos + 11 + size]))
        pos += 11 + size + 4
    return out


# --- builders for what the server sends -------------------------------------------------------

def control(type_id: int, *values: int) -> RawMessage:
    if type_id == SET_PEER_BANDWIDTH:
        body = struct.pack(">IB", values[0], values[1])
    else:
        body = struct.pack(">I", values[0])
    return RawMessage(CSID_CONTROL, type_id, 0, 0, body)


def user_control(event: int, value: int) -> RawMessage:
    return RawMessage(CSID_CONTROL, USER_CONTROL, 0, 0, struct.pack(">HI", event, value))


def command(name: str, transaction_id: float, command_object: Any, *args: Any, stream_id: int = 0,
            csid: int = CSID_COMMAND) -> RawMessage:
    return RawMessage(csid, COMMAND_AMF0, stream_id, 0,
                      amf0.encode(name, float(transaction_id), command_object, *args))


def status(code: str, description: str, level: str = "status", stream_id: int = 1,
           **extra: Any) -> RawMessage:
    info = {"level": level, "code": code, "description": description, **extra}
    return command("onStatus", 0, None, info, stream_id=stream_id, csid=5)


#: Longest string an event carries from a peer's AMF value; longer ones are cut and marked.
MAX_TEXT_CHARS = 1024
#: Most values (all levels together) one to_jsonable call turns into JSON; the rest is dropped.
MAX_JSON_NODES = 2000


def _cut(text: str) -> str:
    if len(text) <= MAX_TEXT_CHARS:
        return text
    return text[:MAX_TEXT_CHARS] + f"…[truncated {len(text) - MAX_TEXT_CHARS} chars]"


def to_jsonable(value: Any, depth: int = 0, _budget: list[int] | None = None) -> Any:
    """AMF values as plain JSON types for event payloads, bounded in size.

    Why bounded: any publisher chooses its onMetaData, and an event echoing a 1.2 MB string
    poisoned the MQTT outbox (issue 20). Strings over MAX_TEXT_CHARS are cut and marked, at most
    200 items per container, depth 8 and MAX_JSON_NODES values in all.
    """
    budget = [MAX_JSON_NODES] if _budget is None else _budget
    budget[0] -= 1
    if depth > 8 or budget[0] < 0:
        return "…"
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in list(value.items())[:200]:
            if budget[0] <= 0:
                out["…"] = "truncated"
                break
            out[_cut(str(k))] = to_jsonable(v, depth + 1, budget)
        return out
    if isinstance(value, list):
        items = []
        for v in value[:200]:
            if budget[0] <= 0:
                items.append("…")
                break
            items.append(to_jsonable(v, depth + 1, budget))
        return items
    if isinstance(value, amf0.AmfDate):
        return {"epoch_ms": to_jsonable(value.epoch_ms, depth + 1, budget)}
    if isinstance(value, amf0.TypedObject):
        return {"class": _cut(value.class_name), **to_jsonable(value.values, depth + 1, budget)}
    return _cut(repr(value))
