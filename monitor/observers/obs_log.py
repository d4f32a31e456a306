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
request_id, client, batch, log_time, names}, `ws/client_disconnected` {session, remote, code},
`ui/settings_changed` {changed, log_time}. docs/obs.md describes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections import deque
from pathlib import Path
from typing import Any

from monitor.bus import EventBus

SOURCE = "obs"
#: requestId prefix of tally's own read-only requester (monitor/observers/obs_client.py)
TALLY_REQUEST_PREFIX = "tally-"
#: requestData fields that name things; copied into events (strings only, capped). Nothing else is.
NAME_FIELDS = ("sceneName", "inputName", "inputKind", "sourceName", "transitionName", "filterName",
               "sceneCollectionName", "profileName")
MAX_NAME_CHARS = 200
#: one logged message is at most 8 KiB (OBS's do_log buffer); a block longer than this is junk
MAX_BLOCK_CHARS = 64 * 1024
#: how much of a log file's head is read for the command line / debug flag when following from its end
HEAD_BYTES = 256 * 1024

_PREFIX = re.compile(r"^(\d\d:\d\d:\d\d\.\d{3}): ?(.*)$")
_CONNECT = re.compile(r"\[WebSocketServer::onOpen\] New WebSocket client has connected from (\S+)")
_CLOSE = re.compile(r"\[WebSocketServer::onClose\] WebSocket client `([^`]*)` has disconnected with code `(-?\d+)`")
_INCOMING = "[WebSocketServer::onMessage] Incoming message (decoded):"
_WS_TAG = "[obs-websocket]"
_SETTINGS = re.compile(r"^Settings changed \((.*)\)\s*$")
_RE_OP = re.compile(r'^  "op": (\d+)', re.M)
_RE_TYPE = re.compile(r'"requestType": "((?:[^"\\]|\\.)*)"')
_RE_NAME = re.compile(r'^      "(' + "|".join(NAME_FIELDS) + r')": "((?:[^"\\]|\\.)*)"', re.M)
_RE_ID = re.compile(r'^    "requestId": ("(?:[^"\\]|\\.)*"|-?\d+)', re.M)


def normalise_remote(addr: str) -> str:
    """`[::ffff:127.0.0.1]:57530` -> `127.0.0.1:57530`; other IPv6 stays bracketed."""
    m = re.fullmatch(r"\[(?:::ffff:)?(\d+\.\d+\.\d+\.\d+)\]:(\d+)", addr)
    return f"{m.group(1)}:{m.group(2)}" if m else addr


def _client_of(request_id: Any) -> str:
    return "tally" if isinstance(request_id, str) and request_id.startswith(TALLY_REQUEST_PREFIX) else "other"


def _names(data: Any) -> dict[str, str]:
    if not isinstance(data, dict):
        return {}
    return {k: data[k][:MAX_NAME_CHARS] for k in NAME_FIELDS if isinstance(data.get(k), str)}


class WsLogParser:
    """OBS log lines in, (kind, payload) out. Pure and incremental: feed lines as they arrive."""

    def __init__(self) -> None:
        self._sessions: dict[str, int] = {}
        self._next_session = 1
        self._unidentified: deque[int] = deque()
        self._block: list[str] | None = None
        self._block_chars = 0
        self._block_time = ""
        self.debug_seen = False

    def feed(self, line: str) -> list[tuple[str, dict[str, Any]]]:
        """One log line (without its newline); returns the events it completes."""
        m = _PREFIX.match(line)
        log_time, text = (m.group(1), m.group(2)) if m else ("", line)
        out: list[tuple[str, dict[str, Any]]] = []
        if self._block is not None:
            if text.startswith((" ", "{", "}", "]")) and not text.startswith(_WS_TAG):
                self._block.append(text)
                self._block_chars += len(text) + 1
                if text == "}" or self._block_chars > MAX_BLOCK_CHARS:
                    out.extend(self._finish_block())
                return out
            if _WS_TAG in text:  # the next websocket message: the block was cut short (8 KiB cap)
                out.extend(self._finish_block())
            # otherwise another thread's line landed inside the block: handle it, keep the block
        out.extend(self._line(log_time, text))
        return out

    def close(self) -> list[tuple[str, dict[str, Any]]]:
        """End of input: a pending block is parsed as far as it goes."""
        return self._finish_block() if self._block is not None else []

    # ---- one plain line ------------------------------------------------------------------
    def _line(self, log_time: str, text: str) -> list[tuple[str, dict[str, Any]]]:
        if _WS_TAG in text:
            if "[debug]" in text or "--websocket_debug passed" in text:
                self.debug_seen = True
            if text.endswith(_INCOMING):
                self._block, self._block_chars, self._block_time = [], 0, log_time
                return []
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

    # ---- one incoming message ------------------------------------------------------------
    def _finish_block(self) -> list[tuple[str, dict[str, Any]]]:
        text = "\n".join(self._block or [])
        log_time = self._block_time
        self._block, self._block_chars = None, 0
        try:
            msg = json.loads(text)
        except json.JSONDecodeError:
            return self._salvage(text, log_time)
        if not isinstance(msg, dict) or not isinstance(msg.get("d"), dict):
            return []
        op, d = msg.get("op"), msg["d"]
        if op == 1:
            return [self._identified(d, log_time)]
        if op == 6:
            return [self._request(d.get("requestType"), d.get("requestId"), d.get("requestData"), log_time)]
        if op == 8:
            batch_id = d.get("requestId")
            reqs = d.get("requests") if isinstance(d.get("requests"), list) else []
            return [self._request(r.get("requestType"), batch_id, r.get("requestData"), log_time, batch=True)
                    for r in reqs if isinstance(r, dict)]
        return []

    def _salvage(self, text: str, log_time: str) -> list[tuple[str, dict[str, Any]]]:
        """A cut-off block (OBS cuts a log message at 8 KiB). nlohmann::json sorts keys, so a big
        requestData comes before requestId/requestType and the cut usually takes them: such a
        request is still reported, with request_type None and the names that survived."""
        m = _RE_OP.search(text)
        types = _RE_TYPE.findall(text)
        if not types and '"requestData"' not in text and '"requests"' not in text:
            return []  # not a request (Identify and Reidentify are never this long)
        rid_m = _RE_ID.search(text)
        rid: Any = None
        if rid_m is not None:
            with contextlib.suppress(json.JSONDecodeError):
                rid = json.loads(rid_m.group(1))
        names = {k: v for k, v in _RE_NAME.findall(text)} if len(types) <= 1 else {}
        batch = (m is not None and m.group(1) == "8") or len(types) > 1 or '"requests"' in text
        return [self._request(t, rid, names, log_time, batch=batch, truncated=True) for t in (types or [None])]

    def _identified(self, d: dict[str, Any], log_time: str) -> tuple[str, dict[str, Any]]:
        # No address in the message: the oldest connection not yet identified is the best guess
        # (tally's clients connect one after another, each waiting for Identified).
        session = self._unidentified.popleft() if self._unidentified else None
        subs = d.get("eventSubscriptions")
        return ("ws/client_identified", {"session": session,
                                         "event_subscriptions": subs if isinstance(subs, int) else None,
                                         "rpc_version": d.get("rpcVersion"), "log_time": log_time})

    def _request(self, rtype: Any, rid: Any, data: Any, log_time: str, *, batch: bool = False,
                 truncated: bool = False) -> tuple[str, dict[str, Any]]:
        rid_out = rid if isinstance(rid, (int, float)) else (str(rid)[:MAX_NAME_CHARS] if rid is not None else None)
        payload: dict[str, Any] = {"request_type": str(rtype)[:MAX_NAME_CHARS] if rtype is not None else None,
                                   "request_id": rid_out, "client": _client_of(rid) if rid is not None or not truncated
                                   else "unknown", "batch": batch,
                                   "log_time": log_time, "names": _names(data)}
        if truncated:
            payload["truncated"] = True
        return ("ws/request", payload)


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
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self.poll_once()
        for kind, payload in self._parser.close():
            self.bus.emit(SOURCE, kind, payload)

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
        if not chunk:
            return 0
        self._pos += len(chunk)
        data = self._partial + chunk
        *lines, self._partial = data.split(b"\n")
        for raw in lines:
            for kind, payload in self._parser.feed(raw.decode("utf-8", errors="replace").rstrip("\r")):
                self.bus.emit(SOURCE, kind, payload)
        self.lines_read += len(lines)
        return len(lines)

    def _open(self, path: Path) -> None:
        if self.current is not None:  # finish the old file's last line and pending block
            if self._partial:
                for kind, payload in self._parser.feed(self._partial.decode("utf-8", errors="replace")):
                    self.bus.emit(SOURCE, kind, payload)
            for kind, payload in self._parser.close():
                self.bus.emit(SOURCE, kind, payload)
        from_end = not self.from_start and path == self._initial
        self._seen.add(path)
        self.current, self._partial, self._parser = path, b"", WsLogParser()
        try:
            self._pos = path.stat().st_size if from_end else 0
        except OSError:
            self._pos = 0
        self.bus.emit(SOURCE, "ws/log", {"file": path.name, "debug": _head_says_debug(path),
                                         "from_end": from_end})
