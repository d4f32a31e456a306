"""The one typed Event every live component publishes, and its one JSON-lines encoding.

Events are the only thing the live side records; scoring reads them back later, so the
encoding must be stable and lossless: one compact JSON object per line, keys sorted.
"""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any

#: Bumped when the meaning of an Event field changes; written into every bundle manifest.
EVENT_SCHEMA_VERSION = 1

#: Caps on what one event may carry (texts from outside -- an RTMP publisher's onMetaData, a
#: control message's key names -- are echoed into payloads; one of 1.2 MB once poisoned the outbox).
MAX_TEXT_CHARS = 4096
MAX_KEY_CHARS = 256
MAX_ITEMS = 10_000
MAX_DEPTH = 32
#: Total characters of text in one payload; past it, further texts are emptied.
MAX_PAYLOAD_CHARS = 256 << 10
#: Set in a payload whose content was cut by the caps above.
TRUNCATED_KEY = "_truncated"


class EventDecodeError(ValueError):
    """A line that is not a valid encoded Event (torn write, garbage, wrong types)."""


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened, stamped when it was observed.

    `mono_ns` orders events and measures latencies within a run (it never jumps);
    `wall_time` (UTC seconds) lets people line a run up with the outside world.
    """

    seq: int
    mono_ns: int
    wall_time: float
    source: str
    kind: str
    payload: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        """One line of compact JSON (no trailing newline); keys sorted so equal events are equal bytes."""
        return json.dumps(
            {
                "seq": self.seq,
                "mono_ns": self.mono_ns,
                "wall_time": self.wall_time,
                "source": self.source,
                "kind": self.kind,
                "payload": self.payload,
            },
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
            default=_json_default,
        )

    @classmethod
    def from_json(cls, line: str | bytes) -> Event:
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise EventDecodeError(f"not JSON: {exc}") from None
        return cls.from_dict(obj)

    @classmethod
    def from_dict(cls, obj: Any) -> Event:
        if not isinstance(obj, dict):
            raise EventDecodeError("an event must be a JSON object")
        try:
            seq, mono_ns, wall = obj["seq"], obj["mono_ns"], obj["wall_time"]
            source, kind, payload = obj["source"], obj["kind"], obj.get("payload", {})
        except KeyError as exc:
            raise EventDecodeError(f"missing key {exc.args[0]!r}") from None
        if not (isinstance(seq, int) and isinstance(mono_ns, int) and isinstance(wall, (int, float))):
            raise EventDecodeError("seq and mono_ns must be integers, wall_time a number")
        if not (isinstance(source, str) and isinstance(kind, str) and isinstance(payload, dict)):
            raise EventDecodeError("source and kind must be strings, payload an object")
        return cls(seq, mono_ns, float(wall), source, kind, payload)

    def to_dict(self) -> dict[str, Any]:
        return json.loads(self.to_json())


def _json_default(obj: Any) -> Any:
    """Make numpy scalars and paths encodable without every producer remembering to convert."""
    if hasattr(obj, "item"):
        return obj.item()
    if hasattr(obj, "__fspath__"):
        return str(obj)
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


class _Budget:
    __slots__ = ("chars", "cut")

    def __init__(self) -> None:
        self.chars = 0
        self.cut = False


def _cap_text(text: str, limit: int, budget: _Budget) -> str:
    room = max(0, min(limit, MAX_PAYLOAD_CHARS - budget.chars))
    if len(text) > room:
        budget.cut = True
        text = f"{text[:room]}…[+{len(text) - room} chars]" if room else ""
    budget.chars += len(text)
    return text


_SCALARS = frozenset({int, float, bool, type(None)})


def _cap(value: Any, depth: int, budget: _Budget) -> Any:
    if type(value) in _SCALARS:
        return value
    if isinstance(value, str):
        return _cap_text(value, MAX_TEXT_CHARS, budget) if len(value) > 64 or budget.chars > MAX_PAYLOAD_CHARS - 64 \
            else _count(value, budget)
    if isinstance(value, dict):
        if depth >= MAX_DEPTH:
            budget.cut = True
            return {}
        items = list(value.items())
        if len(items) > MAX_ITEMS:
            budget.cut = True
            items = items[:MAX_ITEMS]
        return {_cap_text(str(k), MAX_KEY_CHARS, budget): _cap(v, depth + 1, budget) for k, v in items}
    if isinstance(value, (list, tuple)):
        if depth >= MAX_DEPTH:
            budget.cut = True
            return []
        if len(value) > MAX_ITEMS:
            budget.cut = True
            value = value[:MAX_ITEMS]
        if all(type(v) in _SCALARS for v in value):  # the usual list: numbers
            return value
        capped = [_cap(v, depth + 1, budget) for v in value]
        return tuple(capped) if isinstance(value, tuple) else capped
    if isinstance(value, (bytes, bytearray)):
        budget.cut = True
        return f"<{len(value)} bytes>"
    return value


def _count(text: str, budget: _Budget) -> str:
    budget.chars += len(text)
    return text


def cap_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """A copy of `payload` within the caps; `_truncated: true` added when anything was cut.

    Why at the factory: every producer (the ingest, observers, the daemon's control errors) stamps
    its events here, so no single message from outside can make an event too big to publish."""
    budget = _Budget()
    out = _cap(payload, 0, budget)
    if budget.cut:
        out[TRUNCATED_KEY] = True
    return out


class EventFactory:
    """Stamps events with a run-wide sequence number and both clocks.

    One factory per run, so sequence numbers are gap-free within a bundle and a subscriber
    (the MQTT feed, a test) can prove nothing was lost.
    """

    def __init__(self, start_seq: int = 0) -> None:
        self._counter = itertools.count(start_seq)

    def make(self, source: str, kind: str, payload: dict[str, Any] | None = None,
             mono_ns: int | None = None) -> Event:
        return Event(
            seq=next(self._counter),
            mono_ns=time.monotonic_ns() if mono_ns is None else mono_ns,
            wall_time=time.time(),
            source=source,
            kind=kind,
            payload=cap_payload(payload) if payload else {},
        )
