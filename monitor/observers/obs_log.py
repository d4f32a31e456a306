"""Follow OBS's own log file and turn obs-websocket's connection/request log into bus events.

Why a log follower and not the observer's websocket: obs-websocket v5 has no request that lists
other clients or what they sent. Its log does: every connect/disconnect (with the remote
address:port) at INFO level, and with `--websocket_debug` (obs-websocket 5.1, `Config::Load`)
every decoded incoming message as a pretty-printed JSON block. Task T17 ("build the scenes with
a script, not the GUI") needs exactly that: which requests reached OBS, and from whom.

What obs-websocket 5.1 writes (checked against its source and a real OBS 29.0.2 here), each log
line prefixed `HH:MM:SS.mmm: ` by OBS:

    [obs-websocket] [WebSocketServer::onOpen] New WebSocket client has connected from [::ffff:127.0.0.1]:57530
    [obs-websocket] [debug] [WebSocketServer::onMessage] Incoming message (decoded):
    {                                      <- json.dump(2), one log line per JSON line
      "d": {"requestId": 955, "requestType": "CreateScene", "requestData": {...}},
      "op": 6
    }
    [obs-websocket] [WebSocketServer::onClose] WebSocket client `[::ffff:127.0.0.1]:57540` has disconnected with code `1000` and reason: ...

With debug on obs-websocket also logs every reply (`Outgoing message:`, op 7, with requestId,
requestType and requestStatus) and every low-volume event it broadcasts, from a thread pool. OBS
29.0.2 does not serialise those writes: lines of two messages interleave and lines tear.
monitor/observers/obs_log_blocks.py reassembles the messages; each request is then reported
once, when its reply is read (so the event says whether it worked), or a second after its message
when no reply can be read; a reply whose request message was torn beyond repair still reports
the request (`recovered: "reply"`, without names).

Incoming messages carry no client address, so a request is attributed by its requestId: tally's
read-only requester numbers every request `tally-<n>` (monitor/observers/obs_client.py), so
those are `client: "tally"`; everything else is `client: "other"` (the agent's script, or any
other program). Connections are numbered (`session`) in the order the log shows them.

Secrets: the Hello/Identify blocks hold the auth challenge, salt and the client's
`authentication` hash, and requests may carry settings (stream keys). None of that is emitted:
a request event carries its type, id and a few name fields (scene/input/source/transition names
and the input kind) only. Nothing else from a JSON block leaves this module.

UI interaction: OBS logs "Settings changed (video, ...)" only when its Settings dialog is
confirmed, so that line becomes `ui/settings_changed`. Most GUI edits (adding a source through
the dialog, dragging a transform) log the same "User added source ..." lines a websocket request
produces, so they cannot be told apart here.

Events (source `obs`): `ws/log` {file, debug}, `ws/client_connected` {session, remote},
`ws/client_identified` {session, event_subscriptions, rpc_version}, `ws/request` {request_type,
request_id, client, batch, log_time, names, ok, code[, truncated][, recovered]},
`ws/client_disconnected` {session, remote, code},
`ui/settings_changed` {changed, log_time}. docs/obs.md describes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from monitor.aio import cancel_and_wait
from monitor.bus import EventBus
from monitor.observers.obs_log_blocks import Block, BlockDemux, distance_ms, split_segments
from verifiers.evidence import ObsLogWsRequest, ObsWsLog

SOURCE = "obs"
#: requestId prefix of tally's own read-only requester (monitor/observers/obs_client.py)
TALLY_REQUEST_PREFIX = "tally-"
#: requestData fields that name things; copied into events (strings only, capped). Nothing else is.
NAME_FIELDS = ("sceneName", "inputName", "inputKind", "sourceName", "transitionName", "filterName",
               "sceneCollectionName", "profileName")
MAX_NAME_CHARS = 200
#: how much of a log file's head is read for the command line / debug flag when following from its end
HEAD_BYTES = 256 * 1024

_CONNECT = re.compile(r"\[WebSocketServer::onOpen\] New WebSocket client has connected from (\S+)")
_CLOSE = re.compile(r"\[WebSocketServer::onClose\] WebSocket client `([^`]*)` has disconnected with code `(-?\d+)`")
#: message headers -> the Block kind they open
_HEADERS = (("[WebSocketServer::onMessage] Incoming message (decoded):", "in"),
            ("[WebSocketServer::onMessage] Outgoing message:", "out"),
            ("[WebSocketServer::BroadcastEvent] Outgoing event:", "event"))
_WS_TAG = "[obs-websocket]"
_SETTINGS = re.compile(r"^Settings changed \((.*)\)\s*$")
_RE_OP = re.compile(r'^  "op": (\d+)', re.M)
_RE_TYPE = re.compile(r'"requestType": "((?:[^"\\]|\\.)*)"')
_RE_NAME = re.compile(r'^      "(' + "|".join(NAME_FIELDS) + r')": "((?:[^"\\]|\\.)*)"', re.M)
_RE_ID = re.compile(r'^    "requestId": ("(?:[^"\\]|\\.)*"|-?\d+)', re.M)
_RE_RESULT = re.compile(r'^      "result": (true|false)', re.M)
_RE_CODE = re.compile(r'^      "code": (\d+)', re.M)
#: obs-websocket op codes -> who sent the message (1 Identify, 6 Request, 8 RequestBatch from the
#: client; 2 Identified, 7 RequestResponse, 9 RequestBatchResponse, 5 Event from OBS)
_OP_KINDS = {1: "in", 6: "in", 8: "in", 2: "out", 7: "out", 9: "out", 5: "event"}
#: a request whose reply has not been seen is reported after this long (log time or wall time)
PENDING_MS = 1000
#: a reply whose id was torn is paired with a pending request of its type read this close before it
MATCH_BY_TYPE_MS = 100
#: requests reported without their reply are remembered (at most this many, for this long after
#: their message), so that a reply logged after PENDING_MS (OBS busy: seen in CI on a loaded
#: machine) is not reported as a second request
REPORTED_MEMORY = 256
LATE_REPLY_MS = 10_000


def normalise_remote(addr: str) -> str:
    """`[::ffff:127.0.0.1]:57530` -> `127.0.0.1:57530`; other IPv6 stays bracketed."""
    m = re.fullmatch(r"\[(?:::ffff:)?(\d+\.\d+\.\d+\.\d+)\]:(\d+)", addr)
    return f"{m.group(1)}:{m.group(2)}" if m else addr


def client_of(request_id: Any) -> str:
    """"tally" for tally's own requester's ids (`tally-<n>`), else "other" (shared with the proxy)."""
    return "tally" if isinstance(request_id, str) and request_id.startswith(TALLY_REQUEST_PREFIX) else "other"


def request_names(data: Any) -> dict[str, str]:
    """The NAME_FIELDS of a requestData, capped: the only part of a request that leaves tally."""
    if not isinstance(data, dict):
        return {}
    return {k: data[k][:MAX_NAME_CHARS] for k in NAME_FIELDS if isinstance(data.get(k), str)}


def torn_id_of(rid: Any, request_id: Any) -> bool:
    """True when `rid` (read from a reply) is `request_id` cut short by a torn line (`303` read as
    `30`, `tally-12` as `tally-1`): a strict prefix of the same kind of id."""
    if rid is None or request_id is None or isinstance(rid, str) != isinstance(request_id, str):
        return False
    full, cut = str(request_id), str(rid)
    return len(cut) < len(full) and full.startswith(cut)


def _rid(rid: Any) -> Any:
    return rid if isinstance(rid, (int, float)) else _str(rid)


@dataclass
class _Pending:
    """A request read from its incoming message, waiting for its reply (which says if it worked)."""

    request_type: str | None
    request_id: Any
    names: dict[str, str]
    log_time: str
    truncated: bool
    since_s: float | None


class WsLogParser:
    """OBS log lines in, (kind, payload) out. Incremental: feed lines as they arrive.

    A request is reported once, when its reply is read (the reply gives `ok`/`code`, and the
    request type when the request's own message was torn), or PENDING_MS after its message when
    no reply shows up (`ok: null`). A reply whose request message was lost entirely still reports
    the request (`recovered: "reply"`, no names): OBS logs each request twice, and tearing rarely
    takes both.
    """

    def __init__(self) -> None:
        self._sessions: dict[str, int] = {}
        self._next_session = 1
        self._unidentified: deque[int] = deque()
        self._demux = BlockDemux()
        self._pending: list[_Pending] = []
        #: (type, id) of requests already reported without a reply, newest last
        self._reported: deque[tuple[str | None, Any, str]] = deque(maxlen=REPORTED_MEMORY)
        self.debug_seen = False

    def feed(self, line: str, now_s: float | None = None) -> list[tuple[str, dict[str, Any]]]:
        """One physical log line (without its newline); returns the events it completes.
        `now_s` (monotonic seconds) lets `expire` report requests whose reply never came."""
        out: list[tuple[str, dict[str, Any]]] = []
        segments = split_segments(line)
        for i, (stamp, text) in enumerate(segments):
            taken, finished = self._demux.offer(stamp, text, torn=i + 1 < len(segments))
            for block in finished:
                out.extend(self._finish(block, now_s))
            if stamp is not None:
                out.extend(self._expire_by_log(stamp))
            if not taken:
                out.extend(self._line(stamp or "", text, now_s))
        return out

    def expire(self, now_s: float) -> list[tuple[str, dict[str, Any]]]:
        """Report requests read more than PENDING_MS ago (wall time) whose reply has not come."""
        due = [p for p in self._pending if p.since_s is not None and now_s - p.since_s > PENDING_MS / 1000]
        return self._report(due)

    def close(self) -> list[tuple[str, dict[str, Any]]]:
        """End of input: pending blocks are parsed as far as they go, pending requests reported."""
        out: list[tuple[str, dict[str, Any]]] = []
        for block in self._demux.drain():
            out.extend(self._finish(block, None))
        return out + self._report(list(self._pending))

    # ---- one plain line ------------------------------------------------------------------
    def _line(self, log_time: str, text: str, now_s: float | None) -> list[tuple[str, dict[str, Any]]]:
        if _WS_TAG in text:
            if "[debug]" in text or "--websocket_debug passed" in text:
                self.debug_seen = True
            for header, kind in _HEADERS:
                if text.endswith(header):
                    out: list[tuple[str, dict[str, Any]]] = []
                    for block in self._demux.start(kind, log_time or None):
                        out.extend(self._finish(block, now_s))
                    return out
            if (m := _CONNECT.search(text)) is not None:
                remote = normalise_remote(m.group(1))
                session = self._next_session
                self._next_session += 1
                self._sessions[remote] = session
                self._unidentified.append(session)
                return [("ws/client_connected", {"session": session, "remote": remote, "log_time": log_time})]
            if (m := _CLOSE.search(text)) is not None:
                remote = normalise_remote(m.group(1))
                session = self._sessions.pop(remote, None)
                with contextlib.suppress(ValueError):
                    self._unidentified.remove(session)  # type: ignore[arg-type]
                return [("ws/client_disconnected", {"session": session, "remote": remote,
                                                    "code": int(m.group(2)), "log_time": log_time})]
            return []
        if (m := _SETTINGS.match(text)) is not None:
            changed = [c.strip() for c in m.group(1).split(",") if c.strip()]
            return [("ui/settings_changed", {"changed": changed, "log_time": log_time})]
        return []

    # ---- one message ---------------------------------------------------------------------
    def _finish(self, block: Block, now_s: float | None) -> list[tuple[str, dict[str, Any]]]:
        log_time = block.stamp or block.last_stamp or ""
        msg: Any = None
        if block.done:
            with contextlib.suppress(json.JSONDecodeError):
                msg = json.loads(block.text)
        kind = _kind_of(msg, block)
        if kind == "in":
            if not isinstance(msg, dict):
                return self._salvage_incoming(block.text, log_time, now_s)
            d = msg.get("d")
            if not isinstance(d, dict):
                return []
            if msg.get("op") == 1:
                return [self._identified(d, log_time)]
            if msg.get("op") == 6:
                self._pending.append(_Pending(_str(d.get("requestType")), _rid(d.get("requestId")),
                                              request_names(d.get("requestData")), log_time, False, now_s))
                return []
            if msg.get("op") == 8:
                batch_id = _rid(d.get("requestId"))
                reqs = d.get("requests") if isinstance(d.get("requests"), list) else []
                return [self._event(_str(r.get("requestType")), batch_id, request_names(r.get("requestData")), log_time,
                                    batch=True) for r in reqs if isinstance(r, dict)]
            return []
        if kind == "out":
            if isinstance(msg, dict) and isinstance(msg.get("d"), dict):
                if msg.get("op") != 7:
                    return []
                d = msg["d"]
                status = d.get("requestStatus") if isinstance(d.get("requestStatus"), dict) else {}
                ok = status.get("result") if isinstance(status.get("result"), bool) else None
                code = status.get("code") if isinstance(status.get("code"), int) else None
                return self._reply(_str(d.get("requestType")), _rid(d.get("requestId")), ok, code, log_time)
            return self._salvage_reply(block.text, log_time)
        return []  # events: not needed

    def _salvage_incoming(self, text: str, log_time: str, now_s: float | None) -> list[tuple[str, dict[str, Any]]]:
        """A torn or cut-off request message: a batch is reported now, a single request waits for
        its reply (see _salvaged)."""
        pending, batch = _salvaged(text, log_time, now_s)
        if pending is not None:
            self._pending.append(pending)
        return [self._event(t, rid, {}, log_time, batch=True, truncated=True) for t, rid in batch]

    def _salvage_reply(self, text: str, log_time: str) -> list[tuple[str, dict[str, Any]]]:
        """A torn reply still names its request when requestId and requestType survived."""
        if (m := _RE_OP.search(text)) is not None and m.group(1) != "7":
            return []
        types, rid_m = _RE_TYPE.findall(text), _RE_ID.search(text)
        if len(types) != 1 or rid_m is None:
            return []
        try:
            rid = json.loads(rid_m.group(1))
        except json.JSONDecodeError:
            return []
        res, code = _RE_RESULT.search(text), _RE_CODE.search(text)
        return self._reply(types[0], _rid(rid), res.group(1) == "true" if res else None,
                           int(code.group(1)) if code else None, log_time)

    def _reply(self, rtype: str | None, rid: Any, ok: bool | None, code: int | None,
               log_time: str) -> list[tuple[str, dict[str, Any]]]:
        """Pair a reply with its request. A torn reply may have lost its type, carry another
        message's type (a reply logged while the client's next request is logged can take that
        request's "requestType" line) or a torn id (`303` read as `30`). In order: the pending
        request with this id, whatever its type (its own type wins); the request message still
        open with this id; a pending request of this type whose id starts with the reply's (a
        torn id, however late the reply); a pending request of this type and client read within
        MATCH_BY_TYPE_MS (a script waits for each reply, so there is rarely more than one); a
        pending one whose own id was lost; an open one without an id line from the same moment.
        A reply to a request already reported without its reply (the reply came after
        PENDING_MS) adds nothing. A reply that names no type and matches nothing is dropped: it
        says nothing about what was done."""
        client = client_of(rid) if rid is not None else None
        match = (self._take_pending(lambda p: p.request_id is not None and p.request_id == rid)
                 or self._claim_open_request(rtype, rid, log_time, by_id_only=True)
                 or self._take_pending(lambda p: rtype in (None, p.request_type) and torn_id_of(rid, p.request_id))
                 or (self._take_pending(lambda p: p.request_type == rtype
                                        and (client is None or p.request_id is None
                                             or client_of(p.request_id) == client)
                                        and distance_ms(p.log_time or None, log_time or None) <= MATCH_BY_TYPE_MS)
                     if rtype is not None else None)
                 or self._take_pending(lambda p: p.request_id is None
                                       and (rtype is None or p.request_type in (None, rtype)))
                 or self._claim_open_request(rtype, rid, log_time, by_id_only=False))
        if match is None and self._already_reported(rtype, rid, log_time):
            return []
        if match is None:  # the request's own message was lost: the reply still says it was made
            if rtype is None:
                return []
            return [self._event(rtype, rid, {}, log_time, ok=ok, code=code, recovered="reply")]
        rid_out = match.request_id if match.request_id is not None else rid
        return [self._event(match.request_type or rtype, rid_out, match.names, match.log_time, ok=ok, code=code,
                            truncated=match.truncated)]

    def _already_reported(self, rtype: str | None, rid: Any, log_time: str) -> bool:
        """Whether a reply belongs to a request reported before its reply came (same id, or the
        reply's id torn from it, no other type, message at most LATE_REPLY_MS before the reply)."""
        return rid is not None and any(
            rtype in (None, t) and (r == rid or torn_id_of(rid, r))
            and distance_ms(at or None, log_time or None) <= LATE_REPLY_MS for t, r, at in self._reported)

    def _take_pending(self, pred: Callable[[_Pending], bool]) -> _Pending | None:
        """Remove and return the oldest pending request matching `pred`."""
        match = next((p for p in self._pending if pred(p)), None)
        if match is not None:
            self._pending.remove(match)
        return match

    def _claim_open_request(self, rtype: str | None, rid: Any, log_time: str, *,
                            by_id_only: bool) -> _Pending | None:
        """A reply whose request message is still open in the demux (torn, so it never closed):
        obs-websocket logs a request before handling it, so that message is as complete as it will
        get. Take the open message naming this requestId, else (not `by_id_only`) the oldest open
        one with no requestId line from the same moment (±50 ms), and salvage it now."""
        rid_line = f'    "requestId": {json.dumps(rid)}'
        opened = [b for b in self._demux.open if b.kind == "in"]
        block = next((b for b in opened if rid is not None and rid_line in b.text), None)
        if block is None and not by_id_only:
            block = next((b for b in opened if '"requestId"' not in b.text
                          and distance_ms(b.stamp, log_time or None) <= 50
                          and set(_RE_TYPE.findall(b.text)) <= {rtype}), None)
        if block is None:
            return None
        self._demux.open.remove(block)
        return _salvaged(block.text, block.stamp or log_time, None)[0]

    def _expire_by_log(self, stamp: str) -> list[tuple[str, dict[str, Any]]]:
        due = [p for p in self._pending if distance_ms(p.log_time, stamp) > PENDING_MS]
        return self._report(due)

    def _report(self, due: list[_Pending]) -> list[tuple[str, dict[str, Any]]]:
        for p in due:
            self._pending.remove(p)
            self._reported.append((p.request_type, p.request_id, p.log_time))
        return [self._event(p.request_type, p.request_id, p.names, p.log_time, truncated=p.truncated) for p in due]

    def _identified(self, d: dict[str, Any], log_time: str) -> tuple[str, dict[str, Any]]:
        # No address in the message: the oldest connection not yet identified is the best guess
        # (tally's clients connect one after another, each waiting for Identified).
        session = self._unidentified.popleft() if self._unidentified else None
        subs = d.get("eventSubscriptions")
        return ("ws/client_identified", {"session": session,
                                         "event_subscriptions": subs if isinstance(subs, int) else None,
                                         "rpc_version": d.get("rpcVersion"), "log_time": log_time})

    def _event(self, rtype: str | None, rid: Any, names: dict[str, str], log_time: str, *, batch: bool = False,
               truncated: bool = False, ok: bool | None = None, code: int | None = None,
               recovered: str | None = None) -> tuple[str, dict[str, Any]]:
        client = client_of(rid) if rid is not None or not truncated else "unknown"
        ev = ObsLogWsRequest(rtype, rid, client, batch, names, ok, code, log_time=log_time,
                             truncated=True if truncated else None, recovered=recovered or None)
        return (ev.KIND, ev.to_payload())


def _salvaged(text: str, log_time: str, now_s: float | None
              ) -> tuple[_Pending | None, list[tuple[str | None, Any]]]:
    """What survives of a torn or cut-off request message (OBS cuts a message at 8 KiB;
    nlohmann::json sorts keys, so a big requestData comes before requestId/requestType and the cut
    takes them): a single request as a pending one (its reply usually supplies the rest), or a
    batch's (type, batch id) pairs; (None, []) when the text is not a request at all."""
    m = _RE_OP.search(text)
    types = _RE_TYPE.findall(text)
    if not types and '"requestData"' not in text and '"requests"' not in text:
        return None, []  # not a request (Identify and Reidentify are never this long)
    rid_m = _RE_ID.search(text)
    rid: Any = None
    if rid_m is not None:
        with contextlib.suppress(json.JSONDecodeError):
            rid = json.loads(rid_m.group(1))
    if (m is not None and m.group(1) == "8") or len(types) > 1 or '"requests"' in text:
        return None, [(t, _rid(rid)) for t in types or [None]]
    names = {k: v for k, v in _RE_NAME.findall(text)}
    return _Pending(types[0] if types else None, _rid(rid), names, log_time, True, now_s), []


def _kind_of(msg: Any, block: Block) -> str:
    """What a message is, by its op code when it parsed (a torn header can put a request's lines
    under another header), else by the header that opened it."""
    op = msg.get("op") if isinstance(msg, dict) else None
    return _OP_KINDS.get(op, block.kind) if isinstance(op, int) else block.kind


def _str(v: Any) -> str | None:
    return str(v)[:MAX_NAME_CHARS] if v is not None else None


def newest_log(log_dir: Path) -> Path | None:
    """OBS names its logs `YYYY-MM-DD HH-MM-SS.txt`: the newest by mtime, then by name."""
    try:
        logs = [p for p in log_dir.glob("*.txt") if p.is_file()]
    except OSError:
        return None
    return max(logs, key=lambda p: (p.stat().st_mtime, p.name)) if logs else None


def _head_says_debug(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(HEAD_BYTES)
    except OSError:
        return False
    return b"--websocket_debug" in head or b"[obs-websocket] [debug]" in head


class ObsLogFollower:
    """Tails the newest OBS log in `log_dir` while a run lasts; read-only (opens files for reading).

    from_start=False (a run): the file current at start is read from its end, so lines from before
    the run (the launcher's readiness probe, earlier sessions) are not the run's evidence; a log
    file that appears later (OBS restarted) is read from its beginning. A file once left is not
    read again (two OBS instances writing to one log folder: the follower stays with the first).
    """

    def __init__(self, bus: EventBus, log_dir: Path, *, poll_s: float = 0.2, from_start: bool = False,
                 max_read_bytes: int = 1 << 20) -> None:
        self.bus, self.log_dir, self.poll_s = bus, Path(log_dir), poll_s
        self.from_start = from_start
        self.max_read_bytes = max_read_bytes
        self.current: Path | None = None
        self.lines_read = 0
        self._parser = WsLogParser()
        self._pos = 0
        self._partial = b""
        self._task: asyncio.Task[None] | None = None
        #: the log that was already there when following began: read from its end (unless from_start)
        self._initial: Path | None = None
        self._initial_taken = False
        self._seen: set[Path] = set()

    async def start(self, bus: EventBus | None = None) -> None:
        if bus is not None:
            self.bus = bus
        self.mark_start()
        self._task = asyncio.get_running_loop().create_task(self._run(), name="obs-log-follower")

    async def stop(self) -> None:
        """Read what is left (OBS logs the last disconnects while closing), then stop."""
        await cancel_and_wait(self._task)
        self._task = None
        self.poll_once()
        self._emit(self._parser.close())

    async def _run(self) -> None:
        while True:
            self.poll_once()
            await asyncio.sleep(self.poll_s)

    def mark_start(self) -> None:
        """Remember which log exists now: only that one is read from its end."""
        if not self._initial_taken:
            self._initial, self._initial_taken = newest_log(self.log_dir), True

    def poll_once(self) -> int:
        """Switch to a newer log file if one appeared, read new complete lines; returns lines read."""
        self.mark_start()
        newest = newest_log(self.log_dir)
        if newest is not None and newest != self.current and newest not in self._seen:
            self._open(newest)  # never back to a file already read: no event is emitted twice
        if self.current is None:
            return 0
        try:
            with open(self.current, "rb") as f:
                f.seek(self._pos)
                chunk = f.read(self.max_read_bytes)
        except OSError:
            return 0
        now_s = time.monotonic()
        if not chunk:
            self._emit(self._parser.expire(now_s))
            return 0
        self._pos += len(chunk)
        data = self._partial + chunk
        *lines, self._partial = data.split(b"\n")
        for raw in lines:
            self._emit(self._parser.feed(raw.decode("utf-8", errors="replace").rstrip("\r"), now_s))
        self._emit(self._parser.expire(now_s))
        self.lines_read += len(lines)
        return len(lines)

    def _emit(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        for kind, payload in events:
            self.bus.emit(SOURCE, kind, payload)

    def _open(self, path: Path) -> None:
        if self.current is not None:  # finish the old file's last line and pending block
            if self._partial:
                self._emit(self._parser.feed(self._partial.decode("utf-8", errors="replace")))
            self._emit(self._parser.close())
        from_end = not self.from_start and path == self._initial
        self._seen.add(path)
        self.current, self._partial, self._parser = path, b"", WsLogParser()
        try:
            self._pos = path.stat().st_size if from_end else 0
        except OSError:
            self._pos = 0
        log = ObsWsLog(path.name, _head_says_debug(path), from_end)
        self.bus.emit(log.SOURCE, log.KIND, log.to_payload())
