"""Which streams exist: keyed on (app, key without ?query), with allow-list and replacement rules.

The registry only decides and remembers; sessions do the I/O. Ended streams stay listed (up to
`max_history`) so the API can show what happened after a publisher left; an ended stream keeps
only its final snapshot and API view, computed once when it ends (its measurement windows are
released), so listing a thousand ended streams costs no recomputation.

Allow-list entries are `APP/KEY` (exactly that app and key) or a bare `KEY` (that key on any
app: the embedding API's older form; the CLI turns a bare `--key K` into `live/K`).
"""

from __future__ import annotations

import json
import re
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from rtmp.health import StreamHealth
from rtmp.platforms import Profile
from rtmp.stats import StreamStats
from rtmp.tap import DEFAULT_MAX_PENDING_BYTES as TAP_MAX_PENDING_BYTES
from rtmp.tap import TagTap, flv_tag

MAX_NAME_BYTES = 128
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def split_key(raw: str) -> str:
    """Stream key without its `?query` (tokens some services append)."""
    return raw.split("?", 1)[0]


def name_problem(name: str) -> str | None:
    """Why `name` (an app or key) is unsafe as a registry key and a path component, or None."""
    if not name:
        return "empty"
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        return f"longer than {MAX_NAME_BYTES} bytes"
    if ".." in name or name == ".":
        return "contains '..'"
    if "/" in name or "\\" in name:
        return "contains a path separator"
    if _CONTROL.search(name):
        return "contains control characters"
    return None


@dataclass
class StreamRecord:
    """One publish of (app, key), live or ended."""

    app: str
    key: str
    client: str
    started_at: float
    stats: StreamStats = field(default_factory=StreamStats)
    health: StreamHealth = field(default_factory=lambda: StreamHealth([]))
    state: str = "live"
    ended_at: float | None = None
    end_reason: str | None = None
    recording: str | None = None
    #: Called to drop this publisher when a new one takes the key over.
    drop: Callable[[str], None] | None = field(default=None, repr=False)
    #: live tag taps (rtmp.tap) and the tags a late tap needs first: metadata, sequence headers
    taps: list[TagTap] = field(default_factory=list, repr=False)
    _tap_init: dict[str, tuple[int, int, bytes]] = field(default_factory=dict, repr=False)
    _final_snapshot: dict[str, Any] | None = field(default=None, repr=False)
    _final_view: dict[str, Any] | None = field(default=None, repr=False)
    _final_json: str | None = field(default=None, repr=False)

    def open_tap(self, max_pending_bytes: int = TAP_MAX_PENDING_BYTES) -> TagTap:
        preamble = b"".join(flv_tag(*self._tap_init[k]) for k in ("meta", "video", "audio") if k in self._tap_init)
        tap = TagTap(preamble, max_pending_bytes)
        if self.state != "live":
            tap.end()
        else:
            self.taps.append(tap)
        return tap

    def tap_tag(self, tag_type: int, ts_ms: int, body: bytes, init: str | None = None) -> None:
        """Hand one tag to every tap; `init` ('meta', 'video', 'audio') also keeps it for late taps."""
        if init is not None:
            self._tap_init[init] = (tag_type, ts_ms, body)
        if self.taps:
            for tap in self.taps:
                tap.push(tag_type, ts_ms, body)
            if any(t.ended for t in self.taps):
                self.taps = [t for t in self.taps if not t.ended]

    def end_taps(self) -> None:
        for tap in self.taps:
            tap.end()
        self.taps = []
        self._tap_init = {}

    def freeze(self) -> None:
        """Ended: compute the final snapshot and view once and release the live measurement."""
        if self._final_snapshot is None:
            self._final_snapshot = self.stats.snapshot()
            self._final_view = None
            self._final_view = self._view(self._final_snapshot)
            self.stats = StreamStats()  # the windows of the ended stream are garbage now

    def final_snapshot(self) -> dict[str, Any]:
        return self._final_snapshot if self._final_snapshot is not None else self.stats.snapshot()

    def api_view(self) -> dict[str, Any]:
        """The exact shape `GET /api/streams` promises for one stream."""
        if self._final_view is not None:
            return self._final_view
        return self._view(self.stats.snapshot())

    def api_json(self) -> str:
        """api_view as JSON text; an ended stream's is encoded once (a page of 1000 is then a join)."""
        if self._final_view is None:
            return json.dumps(self._view(self.stats.snapshot()))
        if self._final_json is None:
            self._final_json = json.dumps(self._final_view)
        return self._final_json

    def _view(self, snap: dict[str, Any]) -> dict[str, Any]:
        v, a = snap["video"], snap["audio"]
        return {
            "app": self.app,
            "key": self.key,
            "state": self.state,
            "client": self.client,
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.started_at))
            + f".{int(self.started_at * 1000) % 1000:03d}Z",
            "duration_s": snap["duration_s"],
            "bytes": snap["bytes"],
            "recording": self.recording,
            "health": self.health.view(),
            "video": {
                "codec": v["codec"],
                "profile": v.get("profile"),
                "width": v.get("width"),
                "height": v.get("height"),
                "fps": v["fps"],
                "bitrate_bps": v["bitrate_bps"],
                "keyframe_interval_s": v["keyframe_interval_s"],
            },
            "audio": {
                "codec": a["codec"],
                "sample_rate_hz": a.get("sample_rate_hz"),
                "channels": a.get("channels"),
                "bitrate_bps": a["bitrate_bps"],
            },
        }


class PublishRefused(Exception):
    """Publish not allowed; `code` is the NetStream status code to send."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


def parse_allowed(entries: Iterable[str]) -> tuple[set[tuple[str, str]], set[str]]:
    """Split allow-list entries into exact (app, key) pairs and bare keys (any app)."""
    pairs: set[tuple[str, str]] = set()
    bare: set[str] = set()
    for entry in entries:
        app, sep, key = entry.rpartition("/")
        if sep:
            pairs.add((app.strip("/"), key))
        else:
            bare.add(entry)
    return pairs, bare


class StreamRegistry:
    def __init__(self, allowed_keys: set[str] | None = None, allow_any: bool = False,
                 max_history: int = 1000, profiles: list[Profile] | None = None) -> None:
        if not allow_any and not allowed_keys:
            raise ValueError("give allowed keys or allow_any")
        self.allowed_keys = set(allowed_keys or ())
        self.allowed_pairs, self.allowed_bare = parse_allowed(self.allowed_keys)
        self.allow_any = allow_any
        self.profiles = list(profiles or [])
        self.max_history = max_history
        self.live: dict[tuple[str, str], StreamRecord] = {}
        #: ended streams, oldest first (bounded); live ones are in `live`
        self.ended: deque[StreamRecord] = deque(maxlen=max_history)

    def check(self, app: str, raw_key: str) -> str:
        """Return the registry key for a publish or raise PublishRefused (BadName)."""
        key = split_key(raw_key)
        problem = name_problem(key)
        if problem:
            raise PublishRefused("NetStream.Publish.BadName", f"unsafe stream key: {problem}")
        problem = name_problem(app)
        if problem:
            raise PublishRefused("NetStream.Publish.BadName", f"unsafe app name: {problem}")
        if not self.allow_any and key not in self.allowed_bare and (app, key) not in self.allowed_pairs:
            raise PublishRefused("NetStream.Publish.BadName", "stream key not allowed on this app")
        return key

    def start(self, app: str, key: str, client: str) -> StreamRecord:
        """Register a new live stream. The caller has already dropped any stale publisher."""
        stale = self.live.pop((app, key), None)
        if stale is not None:
            self.end(stale, "replaced")
        rec = StreamRecord(app, key, client, time.time(), health=StreamHealth(self.profiles))
        self.live[(app, key)] = rec
        return rec

    def end(self, rec: StreamRecord, reason: str) -> bool:
        """Mark ended; False if it already was (exactly one unpublish per stream)."""
        if rec.state != "live":
            return False
        rec.state = "ended"
        rec.ended_at = time.time()
        rec.end_reason = reason
        if self.live.get((rec.app, rec.key)) is rec:
            del self.live[(rec.app, rec.key)]
        rec.end_taps()
        rec.freeze()
        self.ended.append(rec)
        return True

    def all(self) -> list[StreamRecord]:
        """Every listed stream in start order: ended (oldest first, at most max_history), then live."""
        return sorted([*self.ended, *self.live.values()], key=lambda r: r.started_at)

    def page(self, offset: int = 0, limit: int | None = None, state: str | None = None) -> tuple[list[StreamRecord], int]:
        """A slice of `all()` (optionally only `live` or `ended`) and the total it was cut from."""
        if state == "live":
            recs = sorted(self.live.values(), key=lambda r: r.started_at)
        elif state == "ended":
            recs = list(self.ended)
        else:
            recs = self.all()
        end = None if limit is None else offset + limit
        return recs[offset:end], len(recs)
