"""JSON Schema of every typed event payload; `python -m verifiers.evidence.schema` rewrites
docs/evidence.schema.json (a test fails when the committed file and the dataclasses differ)."""

from __future__ import annotations

import dataclasses
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any

from verifiers.evidence import obs
from verifiers.evidence.base import REGISTRY, EvidenceEvent, Payload, key_of
from verifiers.evidence.rtmp import RtmpStats, StreamSnapshot

#: every typed event (the classes register themselves on import; the package imports every module),
#: by source and kind: the schema and the round-trip tests cover exactly these
EVENTS: tuple[type[EvidenceEvent], ...] = tuple(REGISTRY[k] for k in sorted(REGISTRY))
#: the data of the obs-websocket event types read here (`obs/event` payload `data`, by `type`)
OBS_EVENT_DATA = obs.OBS_EVENT_DATA
DOC = Path(__file__).resolve().parents[2] / "docs" / "evidence.schema.json"


def _type(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [_type(a, defs) for a in args]}
    if tp is type(None):
        return {"type": "null"}
    if isinstance(tp, type) and issubclass(tp, Payload):
        name = tp.__name__
        if name not in defs:
            defs[name] = {}
            defs[name] = object_schema(tp, defs)
        return {"$ref": f"#/$defs/{name}"}
    simple = {float: "number", int: "integer", str: "string", bool: "boolean"}
    if tp in simple:
        return {"type": simple[tp]}
    if origin is dict or tp is dict:
        if len(args) == 2 and args[1] is not Any:
            return {"type": "object", "additionalProperties": _type(args[1], defs)}
        return {"type": "object"}
    if origin is list:
        return {"type": "array", "items": _type(args[0], defs) if args else {}}
    if tp is Any:
        return {}
    raise TypeError(f"no JSON Schema for {tp}")


def object_schema(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    props, required = {}, []
    for f in dataclasses.fields(cls):
        props[key_of(f)] = _type(hints[f.name], defs)
        if f.metadata.get("doc"):
            props[key_of(f)]["description"] = f.metadata["doc"]
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(key_of(f))
    out: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = required
    if cls.__doc__ and not cls.__doc__.startswith(f"{cls.__name__}("):  # not dataclass's generated one
        out["description"] = " ".join(cls.__doc__.split())
    return out


def schema() -> dict[str, Any]:
    defs: dict[str, Any] = {}
    events = {}
    for cls in EVENTS:
        body = object_schema(cls, defs)
        if cls is RtmpStats:  # flat: app/key/client beside the snapshot's own keys
            snap = object_schema(StreamSnapshot, defs)
            body["properties"] = {k: v for k, v in body["properties"].items() if k != "snapshot"} | snap["properties"]
            body["required"] = [k for k in body.get("required", []) if k != "snapshot"]
        events[f"{cls.SOURCE}/{cls.KIND}"] = body
    obs_data = {etype: _type(cls, defs) for etype, cls in sorted(OBS_EVENT_DATA.items())}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "tally event payloads",
            "description": "payload of each recorded event, by source/kind (verifiers/evidence)",
            "events": events, "obs_event_data": obs_data, "$defs": dict(sorted(defs.items()))}


def render() -> str:
    return json.dumps(schema(), indent=2, sort_keys=False) + "\n"


if __name__ == "__main__":
    DOC.write_text(render(), encoding="utf-8")
    print(f"wrote {DOC}", file=sys.stderr)
