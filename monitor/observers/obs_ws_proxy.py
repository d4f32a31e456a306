"""A pass-through obs-websocket proxy that records every request a client sends, exactly.

Why: task T17 ("build the scenes with a script over obs-websocket") needs to know which requests
reached OBS. OBS's own log (monitor/observers/obs_log.py) says so only with `--websocket_debug`,
and OBS 29 tears and interleaves those lines: about 1 request in 25 has no readable reply there.
A proxy between the agent's script and OBS sees each message whole. The task's `.env` gives the
script the proxy's port; the log follower stays as the check on a script that goes around it.

What passes: every frame, both ways, unchanged (text and binary), with the subprotocol the
client offered and OBS chose, and the close code. The proxy never answers for OBS and never
injects anything, so a script cannot tell it is there except by its port. Authentication passes
through too: the client hashes OBS's challenge itself; the proxy needs no password.

What is recorded (source `obs-proxy`), from JSON text frames only:
- `listening` {host, port, upstream} once (the same kind as the ingest's, so `tally serve` repeats it into
  each run);
- `ws/client_connected` {session, remote, protocol}, `ws/client_disconnected` {session, code};
- `ws/client_identified` {session, rpc_version, event_subscriptions} (op 1; never `authentication`);
- `ws/request` {session, request_type, request_id, client, batch, names, ok, code, comment} when the
  reply arrives (op 7, or each result of op 9), or with `ok: null` when the connection closes first;
- `ws/proxy_unreadable` {session, frames, why} once per session for frames it forwarded but could
  not read (msgpack subprotocol, garbage JSON): the count says how blind it was;
- `ws/proxy_error` {session, error} when OBS cannot be reached (the client is closed with 1011).

Secrets: Hello's challenge and salt, Identify's `authentication`, and every requestData value
except the name fields (monitor/observers/obs_log.NAME_FIELDS) stay inside this module, as in the
log follower; a request event is the same shape as the log follower's, so T17 reads either.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from monitor.aio import cancel_and_wait
from monitor.bus import EventBus
from monitor.observers.obs_log import client_of, request_names
from verifiers.evidence import ProxyWsRequest

SOURCE = "obs-proxy"
#: a comment from OBS in a failed reply is copied, capped (it names what was wrong, never a secret)
MAX_COMMENT_CHARS = 200
#: the largest frame relayed; obs-websocket itself accepts 16 MiB messages
MAX_FRAME_BYTES = 16 * 1024 * 1024
#: how long the proxy waits for OBS to accept the upstream half of a client's connection
CONNECT_TIMEOUT_S = 5.0
#: how long a close handshake may take when the proxy itself ends a connection
CLOSE_TIMEOUT_S = 2.0


@dataclass
class _Sent:
    """A request on its way to OBS: what the event will say once the reply comes."""

    request_type: str | None
    request_id: Any
    names: dict[str, str]
    batch: bool


@dataclass
class _Session:
    """One client connection: its number, and its requests still waiting for OBS's reply."""

    number: int
    #: request key -> requests sent under it, oldest first (a client may reuse an id)
    pending: dict[Any, list[_Sent]] = field(default_factory=dict)
    unreadable: int = 0
    unreadable_why: str = ""


def _status(status: Any) -> tuple[bool | None, int | None, str | None]:
    if not isinstance(status, dict):
        return None, None, None
    ok = status.get("result") if isinstance(status.get("result"), bool) else None
    code = status.get("code") if isinstance(status.get("code"), int) else None
    comment = status.get("comment")
    return ok, code, comment[:MAX_COMMENT_CHARS] if isinstance(comment, str) else None


class ObsWsProxy:
    """Listen on host:port, relay each websocket to ws://upstream_host:upstream_port, record requests."""

    def __init__(self, bus: EventBus, upstream_host: str, upstream_port: int, *, host: str = "127.0.0.1",
                 port: int = 0) -> None:
        self.bus = bus
        self.upstream = f"ws://{upstream_host}:{upstream_port}"
        self.host, self.port = host, port
        self._runner: web.AppRunner | None = None
        self._http: aiohttp.ClientSession | None = None
        self._sessions = 0
        self._relays: set[asyncio.Task[Any]] = set()

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        await web.TCPSite(self._runner, self.host, self.port).start()
        self.port = self._runner.addresses[0][1]  # the port the OS chose when 0 was asked for
        self._http = aiohttp.ClientSession()
        self._emit("listening", {"host": self.host, "port": self.port, "upstream": self.upstream})

    async def stop(self) -> None:
        for task in list(self._relays):
            await cancel_and_wait(task)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._http is not None:
            await self._http.close()
            self._http = None

    def _emit(self, kind: str, payload: dict[str, Any]) -> None:
        self.bus.emit(SOURCE, kind, payload)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self._sessions += 1
        session = _Session(self._sessions)
        offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
        assert self._http is not None
        try:
            upstream = await asyncio.wait_for(
                self._http.ws_connect(self.upstream, protocols=offered, max_msg_size=MAX_FRAME_BYTES, autoping=True,
                                      timeout=aiohttp.ClientWSTimeout(ws_close=5)), CONNECT_TIMEOUT_S)
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            self._emit("ws/proxy_error", {"session": session.number,
                                          "error": f"OBS at {self.upstream} cannot be reached: {exc or type(exc).__name__}"})
            refused = web.WebSocketResponse(protocols=offered[:1])
            await refused.prepare(request)
            await refused.close(code=aiohttp.WSCloseCode.INTERNAL_ERROR, message=b"OBS not reachable")
            return refused
        client = web.WebSocketResponse(protocols=(upstream.protocol,) if upstream.protocol else (),
                                       max_msg_size=MAX_FRAME_BYTES, autoping=True)
        await client.prepare(request)
        peer = request.transport.get_extra_info("peername") if request.transport is not None else None
        remote = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) and len(peer) >= 2 else request.remote
        self._emit("ws/client_connected", {"session": session.number, "remote": remote,
                                           "protocol": upstream.protocol})
        task = asyncio.current_task()
        if task is not None:
            self._relays.add(task)
        pumps = [asyncio.ensure_future(self._pump(client, upstream, session, from_client=True)),
                 asyncio.ensure_future(self._pump(upstream, client, session, from_client=False))]
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        finally:
            # first the record (a stop() cancels this handler: nothing after the first await is sure
            # to run), then the closes, each bounded: a peer that stopped reading never answers one
            code = client.close_code or upstream.close_code
            self._finish(session, code if code is not None else aiohttp.WSCloseCode.GOING_AWAY)
            if task is not None:
                self._relays.discard(task)
            for pump in pumps:
                pump.cancel()
            for ws in (upstream, client):
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await asyncio.wait_for(ws.close(code=aiohttp.WSCloseCode.GOING_AWAY), CLOSE_TIMEOUT_S)
        return client

    async def _pump(self, src: Any, dst: Any, session: _Session, *, from_client: bool) -> None:
        """Relay src -> dst until src closes (then close dst with the same code); read text frames."""
        async for msg in src:
            if msg.type == aiohttp.WSMsgType.TEXT:
                self._read(msg.data, session, from_client)
                await dst.send_str(msg.data)
            elif msg.type == aiohttp.WSMsgType.BINARY:
                self._unreadable(session, "binary frames (msgpack subprotocol) are relayed unread")
                await dst.send_bytes(msg.data)
            elif msg.type == aiohttp.WSMsgType.ERROR:
                break
        with contextlib.suppress(Exception):
            await dst.close(code=src.close_code or aiohttp.WSCloseCode.OK)

    def _unreadable(self, session: _Session, why: str) -> None:
        session.unreadable += 1
        session.unreadable_why = session.unreadable_why or why

    def _read(self, text: str, session: _Session, from_client: bool) -> None:
        try:
            msg = json.loads(text)
        except ValueError:
            self._unreadable(session, "a text frame that is not JSON")
            return
        if not isinstance(msg, dict) or not isinstance(msg.get("d"), dict):
            self._unreadable(session, "a JSON frame without an op/d object")
            return
        op, d = msg.get("op"), msg["d"]
        if from_client and op == 1:
            subs = d.get("eventSubscriptions")
            self._emit("ws/client_identified", {"session": session.number, "rpc_version": d.get("rpcVersion"),
                                                "event_subscriptions": subs if isinstance(subs, int) else None})
        elif from_client and op == 6:
            self._sent(session, d.get("requestId"), d, d.get("requestId"), batch=False)
        elif from_client and op == 8:
            for i, r in enumerate(d.get("requests") or []):
                if isinstance(r, dict):
                    rid = r.get("requestId")
                    self._sent(session, (d.get("requestId"), i if rid is None else rid), r, rid, batch=True)
        elif not from_client and op == 7:
            self._answered(session, self._take(session, d.get("requestId")), d, d.get("requestId"))
        elif not from_client and op == 9:
            bid = d.get("requestId")
            for i, r in enumerate(d.get("results") or []):
                if isinstance(r, dict):
                    rid = r.get("requestId")
                    sent = self._take(session, (bid, i if rid is None else rid)) or self._take(session, (bid, i))
                    self._answered(session, sent, r, rid, batch=True)

    def _sent(self, session: _Session, key: Any, r: dict[str, Any], rid: Any, *, batch: bool) -> None:
        rtype = r.get("requestType") if isinstance(r.get("requestType"), str) else None
        session.pending.setdefault(_hashable(key), []).append(_Sent(rtype, rid, request_names(r.get("requestData")), batch))

    def _take(self, session: _Session, key: Any) -> _Sent | None:
        queue = session.pending.get(_hashable(key))
        if not queue:
            return None
        sent = queue.pop(0)
        if not queue:
            del session.pending[_hashable(key)]
        return sent

    def _answered(self, session: _Session, sent: _Sent | None, d: dict[str, Any], rid: Any = None, *,
                  batch: bool = False) -> None:
        if sent is None:  # a reply to nothing we read (its request frame was unreadable): OBS still ran it
            rtype = d.get("requestType") if isinstance(d.get("requestType"), str) else None
            sent = _Sent(rtype, rid, {}, batch)
        ok, code, comment = _status(d.get("requestStatus"))
        self._request(session, sent, ok, code, comment)

    def _request(self, session: _Session, sent: _Sent, ok: bool | None, code: int | None,
                 comment: str | None) -> None:
        rid = sent.request_id
        ev = ProxyWsRequest(sent.request_type, rid if isinstance(rid, (int, float, str)) else None, client_of(rid),
                            sent.batch, sent.names, ok, code, session=session.number, comment=comment)
        self._emit(ev.KIND, ev.to_payload())

    def _finish(self, session: _Session, code: int | None) -> None:
        for queue in session.pending.values():
            for sent in queue:
                self._request(session, sent, None, None, "connection closed before OBS replied")
        session.pending.clear()
        if session.unreadable:
            self._emit("ws/proxy_unreadable", {"session": session.number, "frames": session.unreadable,
                                               "why": session.unreadable_why})
        self._emit("ws/client_disconnected", {"session": session.number, "code": code})


def _hashable(key: Any) -> Any:
    """Request ids are JSON scalars; anything else (a list, a dict) is keyed by its JSON text."""
    if isinstance(key, tuple):
        return tuple(_hashable(k) for k in key)
    return key if isinstance(key, (str, int, float, bool, type(None))) else json.dumps(key, sort_keys=True)
