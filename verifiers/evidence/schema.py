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

from verifiers.evidence import audit, obs, probe, rubric, scenario, ui, vmix
from verifiers.evidence.base import EvidenceEvent, Payload
from verifiers.evidence.rtmp import (
    RtmpHealth,
    RtmpListening,
    RtmpPublish,
    RtmpStats,
    RtmpUnpublish,
    StreamSnapshot,
)

#: every typed event, by module; the schema (and the round-trip tests) cover exactly these
EVENTS: tuple[type[EvidenceEvent], ...] = (
    RtmpListening, RtmpPublish, RtmpStats, RtmpUnpublish, RtmpHealth,
    obs.ObsConnected, obs.ObsGap, obs.ObsEvent, obs.ObsSnapshot, obs.ObsStats, obs.ObsFiltersChanged, obs.ObsScreenshot,
    obs.ObsWsLog, obs.ObsLogWsRequest, obs.ProxyWsRequest,
    scenario.ScenarioAction, scenario.ScenarioExpectation,
    audit.AuditStarted, audit.AuditWrite,
    probe.AudioMeter, probe.VideoFrame,
    vmix.VmixSnapshot, vmix.VmixProgram, vmix.VmixPreview, vmix.VmixOutput, vmix.VmixTally,
    rubric.RubricJudgment,
    ui.XInputStarted, ui.XInputUnavailable, ui.XInput, ui.ObsSettingsChanged,
)
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
        props[f.name] = _type(hints[f.name], defs)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
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
