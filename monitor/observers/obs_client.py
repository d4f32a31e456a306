"""Read-only obs-websocket v5 access on top of obsws-python, for the OBS observer.

Two synchronous connections, each owned by one thread:
- `ReadOnlyRequester`: requests only, eventSubscriptions=0, so every frame it receives is a reply.
  The allow-list is checked before a byte is sent; a lock serialises callers (obsws-python's
  clients are not thread-safe: they take the next frame as the reply). Replies are matched by
  requestId, not by arrival order.
- `EventReader`: one daemon thread reading event frames and handing them to a callback with
  their receipt time (monotonic ns taken right after recv()).

obsws-python does the connect and the v5 authentication handshake (its `ObsClient`); we do not
use its `ReqClient.send` (random ids in 1..1000, no id check) nor `EventClient` (dispatch by
method name, so "every event" would need one callback per name).
"""

from __future__ import annotations

import collections
import itertools
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from monitor.obs.quiet import quiet_obsws_logging

#: obs-websocket v5 requests an observer may send: reads only. Exact names; anything else is
#: refused before sending. GetStreamServiceSettings (carries the stream key) is deliberately absent.
ALLOWED_REQUESTS: frozenset[str] = frozenset({
    "GetVersion", "GetStats", "GetHotkeyList", "GetStudioModeEnabled", "GetVideoSettings",
    "GetProfileList", "GetSceneCollectionList", "GetRecordDirectory",
    "GetSceneList", "GetGroupList", "GetCurrentProgramScene", "GetCurrentPreviewScene",
    "GetSceneSceneTransitionOverride",
    "GetSceneItemList", "GetGroupSceneItemList", "GetSceneItemId", "GetSceneItemTransform",
    "GetSceneItemEnabled", "GetSceneItemLocked", "GetSceneItemIndex", "GetSceneItemBlendMode",
    "GetSceneItemSource",
    "GetInputList", "GetInputKindList", "GetSpecialInputs", "GetInputSettings",
    "GetInputDefaultSettings", "GetInputMute", "GetInputVolume", "GetInputAudioBalance",
    "GetInputAudioSyncOffset", "GetInputAudioMonitorType", "GetInputAudioTracks",
    "GetMediaInputStatus", "GetSourceActive", "GetSourceScreenshot",
    "GetSourceFilterList", "GetSourceFilter", "GetSourceFilterDefaultSettings", "GetSourceFilterKindList",
    "GetTransitionKindList", "GetSceneTransitionList", "GetCurrentSceneTransition",
    "GetCurrentSceneTransitionCursor",
    "GetOutputList", "GetOutputStatus", "GetStreamStatus", "GetRecordStatus", "GetReplayBufferStatus",
    "GetVirtualCamStatus", "GetLastReplayBufferReplay",
})

#: eventSubscriptions: all low-volume categories (General..Ui = 0x7FF) plus the item/input
#: state changes we want (InputActiveStateChanged 1<<17, InputShowStateChanged 1<<18,
#: SceneItemTransformChanged 1<<19). Volume meters (1<<16, 20 per second) only on request.
EVENTS_DEFAULT = 0x7FF | (1 << 17) | (1 << 18) | (1 << 19)
EVENTS_VOLUME_METERS = 1 << 16

#: Payload keys whose values never leave the observer (recursively, case-insensitive).
SECRET_KEYS = frozenset({"password", "passwd", "server_password", "serverpassword", "authentication",
                         "auth", "stream_key", "bearer_token", "secret"})


class ReadOnlyViolation(PermissionError):
    """A request outside the allow-list was asked for; nothing was sent to OBS."""


class ObsConnectionLost(ConnectionError):
    """The websocket closed, timed out, or answered with something that is not a reply."""


class ObsRequestFailed(RuntimeError):
    """OBS answered a request with requestStatus.result = false (e.g. 604: no audio on input)."""

    def __init__(self, request: str, code: int, comment: str | None) -> None:
        self.request, self.code, self.comment = request, code, comment
        super().__init__(f"{request} failed with code {code}: {comment or ''}".rstrip(": "))


def load_password(env_var: str = "TALLY_OBS_PASSWORD", env_file: str | os.PathLike[str] | None = ".env") -> str:
    """The websocket password: the env var if set, else KEY=VALUE in the .env file, else ""."""
    value = os.environ.get(env_var)
    if value is not None:
        return value
    if env_file is None:
        return ""
    p = Path(env_file)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return ""
    for line in lines:
        line = line.strip()
        if line.startswith("export "):
            line = line[7:].lstrip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, val = line.partition("=")
        if key.strip() == env_var:
            val = val.strip()
            if len(val) >= 2 and val[0] == val[-1] and val[0] in "'\"":
                val = val[1:-1]
            return val
    return ""


def scrub(obj: Any) -> Any:
    """A copy of obj with values under secret-looking keys replaced by "***"."""
    if isinstance(obj, dict):
        return {k: ("***" if isinstance(k, str) and k.lower() in SECRET_KEYS else scrub(v))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [scrub(v) for v in obj]
    return obj


def _connect(host: str, port: int, password: str, subs: int, timeout_s: float) -> Any:
    """obsws-python's ObsClient: TCP + Hello + Identify (auth). Raises ObsConnectionLost."""
    from obsws_python.baseclient import ObsClient
    from obsws_python.error import OBSSDKError

    quiet_obsws_logging()
    try:
        client = ObsClient(host=host, port=port, password=password, subs=subs, timeout=timeout_s)
    except Exception as exc:  # refused, timeout, DNS: all mean "not there (yet)"
        raise ObsConnectionLost(f"cannot connect to obs-websocket at {host}:{port}: {type(exc).__name__}") from None
    try:
        identified = client.authenticate()
    except (OBSSDKError, OSError, ValueError, KeyError) as exc:
        client.ws.close()
        msg = "authentication failed" if "auth" in str(exc).lower() or isinstance(exc, KeyError) else type(exc).__name__
        raise ObsConnectionLost(f"obs-websocket at {host}:{port}: {msg}") from None
    except Exception as exc:
        client.ws.close()
        raise ObsConnectionLost(f"obs-websocket at {host}:{port}: {type(exc).__name__}") from None
    client.identified = identified
    return client


class ReadOnlyRequester:
    """Request-only connection; `request()` refuses anything not in ALLOWED_REQUESTS."""

    def __init__(self, host: str, port: int, password: str, timeout_s: float = 5.0,
                 allowed: frozenset[str] = ALLOWED_REQUESTS) -> None:
        self.allowed = allowed
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        #: frames we sent after identification, in all and per request type (bounded by the
        #: allow-list): tests prove a refusal sent nothing even while background polls run
        self.sent_by_type: collections.Counter[str] = collections.Counter()
        self._client = _connect(host, port, password, 0, timeout_s)

    @property
    def frames_sent(self) -> int:
        """Frames sent after identification, all request types together."""
        return sum(self.sent_by_type.values())

    @property
    def negotiated_rpc_version(self) -> int:
        return int(self._client.identified.get("negotiatedRpcVersion", 1))

    def request(self, name: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one allowed request and return its responseData ({} when none).

        Raises ReadOnlyViolation (nothing sent), ObsRequestFailed (OBS said no) or
        ObsConnectionLost (socket trouble; the connection is then unusable).
        """
        if name not in self.allowed:
            raise ReadOnlyViolation(f"request {name!r} is not on the read-only allow-list; not sent")
        from websocket import WebSocketException

        with self._lock:
            rid = f"tally-{next(self._ids)}"
            frame: dict[str, Any] = {"op": 6, "d": {"requestType": name, "requestId": rid}}
            if data:
                frame["d"]["requestData"] = data
            try:
                self._client.ws.send(json.dumps(frame))
                self.sent_by_type[name] += 1
                while True:
                    raw = self._client.ws.recv()
                    if not raw:
                        raise ObsConnectionLost("obs-websocket closed the connection")
                    msg = json.loads(raw)
                    if msg.get("op") == 7 and msg.get("d", {}).get("requestId") == rid:
                        break
            except (WebSocketException, OSError, json.JSONDecodeError) as exc:
                raise ObsConnectionLost(f"{name}: {type(exc).__name__}") from None
        d = msg["d"]
        status = d.get("requestStatus", {})
        if not status.get("result"):
            raise ObsRequestFailed(name, int(status.get("code", 0)), status.get("comment"))
        return d.get("responseData") or {}

    def try_request(self, name: str, data: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """Like request() but None when OBS refuses (unsupported on this input, output missing)."""
        try:
            return self.request(name, data)
        except ObsRequestFailed:
            return None

    def close(self) -> None:
        try:
            self._client.ws.close()
        except Exception:  # closing a dead socket
            pass


EventCallback = Callable[[str, dict[str, Any], int, float], None]


class EventReader:
    """Event-only connection read by one daemon thread.

    on_event(event_type, event_data, receipt_mono_ns, receipt_wall) and on_closed(reason) are
    called from the reader thread; the observer forwards them with loop.call_soon_threadsafe.
    """

    def __init__(self, host: str, port: int, password: str, on_event: EventCallback,
                 on_closed: Callable[[str], None], subs: int = EVENTS_DEFAULT, timeout_s: float = 5.0) -> None:
        self._client = _connect(host, port, password, subs, timeout_s)
        self._client.ws.settimeout(1.0)
        self._on_event, self._on_closed = on_event, on_closed
        self._stop = threading.Event()
        self.events_received = 0
        self._thread = threading.Thread(target=self._run, name=f"obs-events-{port}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from websocket import (
            WebSocketConnectionClosedException,
            WebSocketException,
            WebSocketTimeoutException,
        )

        reason = "stopped"
        while not self._stop.is_set():
            try:
                raw = self._client.ws.recv()
            except WebSocketTimeoutException:
                continue
            except (WebSocketConnectionClosedException, WebSocketException, OSError) as exc:
                reason = f"connection lost ({type(exc).__name__})"
                break
            mono_ns, wall = time.monotonic_ns(), time.time()
            if not raw:
                reason = "connection closed by OBS"
                break
            try:
                msg = json.loads(raw)
            except json.JSONDecodeError:
                continue
            if msg.get("op") != 5:
                continue
            d = msg.get("d", {})
            self.events_received += 1
            try:
                self._on_event(str(d.get("eventType", "")), d.get("eventData") or {}, mono_ns, wall)
            except Exception:  # a broken consumer must not kill the reader thread
                continue
        if not self._stop.is_set():
            self._on_closed(reason)

    def close(self) -> None:
        self._stop.set()
        try:
            self._client.ws.close()
        except Exception:
            pass
        if threading.current_thread() is not self._thread:
            self._thread.join(3.0)
