"""The base of typed evidence: payload <-> dataclass, strictly typed, with a JSON Schema per type.

`to_payload()` gives the exact dict a producer emits (key order kept; `None` fields listed in
`_omit_none` are left out, as producers leave out what they never learned). `from_payload()` checks
every declared field's type and ignores keys it does not declare (newer producers may add some);
a missing required key or a wrong type is an EvidenceError naming the event and the key.
A field may carry its payload key in its metadata (`key_of`): a file's key stays as its writer
spells it while the field's name carries the unit (`horizon_y` read into `horizon_y_px`).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

E = TypeVar("E", bound="Payload")


class EvidenceError(ValueError):
    """A recorded payload does not fit its declared type (missing key, wrong type)."""


def key_of(f: dataclasses.Field) -> str:
    """The payload key of a dataclass field: `metadata["key"]` when given, else its name."""
    return f.metadata.get("key", f.name)


class Payload:
    """A dataclass that is (part of) an event payload."""

    _omit_none: ClassVar[tuple[str, ...]] = ()

    def to_payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            if v is None and f.name in self._omit_none:
                continue
            out[key_of(f)] = _dump(v)
        return out

    @classmethod
    def from_payload(cls: type[E], raw: Any, where: str = "") -> E:
        where = where or cls.__name__
        if not isinstance(raw, Mapping):
            raise EvidenceError(f"{where}: payload must be an object, got {type(raw).__name__}")
        hints = typing.get_type_hints(cls)
        kw = {}
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            key = key_of(f)
            if key not in raw:
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    raise EvidenceError(f"{where}: missing key {key!r}")
                continue
            kw[f.name] = _load(raw[key], hints[f.name], f"{where}.{key}")
        return cls(**kw)


#: every typed event by (source, kind), filled as the classes are defined (`EvidenceEvent.__init_subclass__`):
#: the schema, the round-trip tests and readers look types up here, never in a list written again
REGISTRY: dict[tuple[str, str], type[EvidenceEvent]] = {}


class EvidenceEvent(Payload):
    """A payload with its event identity: one recorded event of `SOURCE`/`KIND`. A class that sets
    both registers itself (an abstract base that sets neither, like a family's shared matcher, does not);
    two classes claiming one (source, kind) is an error at import."""

    SOURCE: ClassVar[str]
    KIND: ClassVar[str]

    def __init_subclass__(cls, *, source: str | None = None, kind: str | None = None, **kw: Any) -> None:
        """`class RtmpDone(EvidenceEvent, source="rtmp", kind="done")` sets SOURCE and KIND (and registers)."""
        super().__init_subclass__(**kw)
        if source is not None and kind is not None:
            cls.SOURCE, cls.KIND = source, kind
        if "SOURCE" in cls.__dict__ and "KIND" in cls.__dict__:
            key = (cls.SOURCE, cls.KIND)
            old = REGISTRY.get(key)
            if old is not None and (old.__module__, old.__qualname__) != (cls.__module__, cls.__qualname__):
                raise TypeError(f"{cls.__qualname__}: {key[0]}/{key[1]} is already {old.__module__}.{old.__qualname__}")
            REGISTRY[key] = cls

    @classmethod
    def matches(cls, e: Mapping[str, Any]) -> bool:
        return e.get("source") == cls.SOURCE and e.get("kind") == cls.KIND

    @classmethod
    def from_event(cls: type[E], e: Mapping[str, Any]) -> E:
        if not cls.matches(e):  # type: ignore[attr-defined]
            raise EvidenceError(f"{cls.__name__}: event is {e.get('source')}/{e.get('kind')}, "
                                f"not {cls.SOURCE}/{cls.KIND}")  # type: ignore[attr-defined]
        return cls.from_payload(e.get("payload"), f"{cls.SOURCE}/{cls.KIND}")  # type: ignore[attr-defined]

    def event(self, t_ms: float = 0.0) -> dict[str, Any]:
        """The recorded event (as in events.jsonl, without seq/wall time) for synthetic instances."""
        return {"source": self.SOURCE, "kind": self.KIND, "mono_ns": round(t_ms * 1e6), "payload": self.to_payload()}


def _dump(v: Any) -> Any:
    if isinstance(v, Payload):
        return v.to_payload()
    if isinstance(v, Mapping):
        return {k: _dump(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_dump(x) for x in v]
    return v


def _load(v: Any, tp: Any, where: str) -> Any:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any:
        return v
    if origin in (typing.Union, types.UnionType):
        if v is None and type(None) in args:
            return None
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return _load(v, a, where)
            except EvidenceError as exc:
                errors.append(str(exc))
        raise EvidenceError(errors[0] if len(errors) == 1 else f"{where}: {v!r} is not {tp}")
    if isinstance(tp, type) and issubclass(tp, Payload):
        return tp.from_payload(v, where)
    if tp is float:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    elif tp is int:
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    elif tp in (str, bool):
        if isinstance(v, tp):
            return v
    elif origin is dict or tp is dict:
        if isinstance(v, Mapping):
            if len(args) == 2 and args[1] is not Any:
                return {k: _load(x, args[1], f"{where}[{k!r}]") for k, x in v.items()}
            return dict(v)
    elif origin is list:
        if isinstance(v, list):
            return [_load(x, args[0], f"{where}[{i}]") for i, x in enumerate(v)] if args else list(v)
    else:
        raise TypeError(f"{where}: unsupported evidence field type {tp}")
    raise EvidenceError(f"{where}: {v!r} is not {getattr(tp, '__name__', tp)}")
