"""Minimal OBS event feed for scenarios: obs-websocket events → bus Events (source "obs").

Why it exists: the scenario engine judges expectations from OBS events with their receipt times,
and the full read-only observer (monitor/observers/obs) was not available when this was written.
It publishes the same shape the engine's evaluator reads: kind = the OBS event type
(CurrentProgramSceneChanged, InputMuteStateChanged, ReplayBufferSaved, ...) with OBS's own
eventData as payload, plus one `state` event at start (program scene, mute states of the named
inputs). Only Get* requests are ever sent (an allow-list is enforced before sending).

Each event is stamped with time.monotonic_ns() right after the frame is read on the reader thread,
before any parsing or hand-over to the loop, so latency measurements are not inflated by the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from typing import Any
from urllib.parse import urlparse

#: The only requests this feed may send (read-only by construction).
ALLOWED_REQUESTS = frozenset({"GetVersion", "GetCurrentProgramScene", "GetInputMute", "GetSceneList"})


class ObsFeedError(RuntimeError):
    """OBS is unreachable, refused authentication, or a non-read-only request was attempted."""


def parse_ws_url(url: str) -> tuple[str, int]:
    u = urlparse(url)
    if u.scheme not in ("ws", "wss") or not u.hostname:
        raise ObsFeedError(f"OBS websocket URL must look like ws://127.0.0.1:4455 (got {url!r})")
    try:
        port = u.port or 4455
    except ValueError:
        raise ObsFeedError(f"bad port in OBS websocket URL {url!r}") from None
    return u.hostname, port


def _quiet() -> None:
    # obsws-python logs connection parameters (password included) at INFO; never let them out.
    for name in ("obsws_python", "obsws_python.baseclient", "obsws_python.baseclient.ObsClient"):
        logging.getLogger(name).setLevel(logging.WARNING)


class ObsEventFeed:
    """Connect, publish a `state` snapshot, then every OBS event, until `stop()`."""

    def __init__(self, bus: Any, url: str = "ws://127.0.0.1:4455", password: str = "",
                 inputs: tuple[str, ...] = (), timeout_s: float = 5.0) -> None:
        self.bus = bus
        self.host, self.port = parse_ws_url(url)
        self._password = password
        self.inputs = inputs
        self.timeout_s = timeout_s
        self._client: Any = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.events_received = 0

    def _connect(self, subs: int) -> Any:
        from obsws_python.baseclient import ObsClient
        _quiet()
        try:
            client = ObsClient(host=self.host, port=self.port, password=self._password, subs=subs,
                               timeout=self.timeout_s)
            client.authenticate()
        except Exception as exc:
            raise ObsFeedError(f"cannot connect to OBS at ws://{self.host}:{self.port}: "
                               f"{type(exc).__name__}: {exc}".replace(self._password or "\0", "***")) from None
        return client

    def _request(self, client: Any, req: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
        if req not in ALLOWED_REQUESTS:
            raise ObsFeedError(f"request {req!r} is not on the read-only allow-list")
        resp = client.req(req, data)
        if not resp.get("requestStatus", {}).get("result"):
            raise ObsFeedError(f"{req} failed: {resp.get('requestStatus')}")
        return dict(resp.get("responseData") or {})

    def snapshot(self) -> dict[str, Any]:
        """Program scene and mute states now, over a short-lived request connection."""
        client = self._connect(0)
        try:
            state: dict[str, Any] = {
                "program_scene": self._request(client, "GetCurrentProgramScene").get("currentProgramSceneName"),
                "inputs_muted": {}}
            for name in self.inputs:
                with contextlib.suppress(ObsFeedError):
                    state["inputs_muted"][name] = bool(
                        self._request(client, "GetInputMute", {"inputName": name}).get("inputMuted"))
            return state
        finally:
            with contextlib.suppress(Exception):
                client.ws.close()

    async def start(self) -> None:
        from obsws_python.subs import Subs
        self._loop = asyncio.get_running_loop()
        self._client = await asyncio.to_thread(self._connect, int(Subs.LOW_VOLUME))
        self._thread = threading.Thread(target=self._reader, name="obs-feed", daemon=True)
        self._thread.start()
        state = await asyncio.to_thread(self.snapshot)
        self.bus.emit("obs", "state", state)

    def _reader(self) -> None:
        ws = self._client.ws
        ws.settimeout(0.5)
        while not self._stop.is_set():
            try:
                raw = ws.recv()
            except Exception as exc:
                if type(exc).__name__ == "WebSocketTimeoutException":
                    continue
                if not self._stop.is_set() and self._loop is not None:
                    self._loop.call_soon_threadsafe(self.bus.emit, "obs", "gap",
                                                    {"reason": f"{type(exc).__name__}"})
                return
            t_ns = time.monotonic_ns()
            try:
                msg = json.loads(raw)
            except (ValueError, TypeError):
                continue
            if msg.get("op") != 5:
                continue
            d = msg.get("d") or {}
            kind, data = d.get("eventType"), d.get("eventData") or {}
            if isinstance(kind, str) and self._loop is not None:
                self.events_received += 1
                self._loop.call_soon_threadsafe(self.bus.emit, "obs", kind, dict(data), t_ns)

    async def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join, 2.0)
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.ws.close()
