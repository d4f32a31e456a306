"""Read-only vMix observer: polls `GET /api` and listens to TCP tally/activators, publishing Events.

Two channels, because they answer different questions:

* HTTP (`GET /api`, default 5 Hz): the full state. Differences between consecutive polls become
  events: program/preview, inputs added/removed, title text, overlay channels, output flags
  (recording, streaming, external, multiCorder, ...), master audio. Latency ≤ one poll interval.
* TCP 8099 (`SUBSCRIBE TALLY`, `SUBSCRIBE ACTS`): vMix pushes a line the moment program/preview or
  an activator changes, so cuts are timed to a few ms instead of a poll interval.

Each event says which channel saw it (`payload["via"]`), so a cut normally appears twice: once via
tcp (fast) and once via http (authoritative, with titles). Scorers pick the channel they need.

Read-only is enforced in code, not by convention: every HTTP request goes through `http_get`, which
allows only `GET /api` with no query (no `Function=`), and every TCP command through
`send_tcp_command`, which allows only `XML`, `TALLY`, `SUBSCRIBE TALLY` and `SUBSCRIBE ACTS`.
Anything else raises `ReadOnlyViolation` before a byte is sent.

Failures never crash the observer: a refused or dropped connection emits `gap.start` (and
`gap.end` with the gap length when it comes back) and reconnects with exponential backoff;
malformed XML, a garbled tally or a line torn by a disconnect emits `error` and carries on.

Event kinds (source "vmix"): snapshot, program, preview, tally, input.added, input.removed,
title.text, overlay, output, audio.master, connected, gap.start, gap.end, error.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import Any

import aiohttp

from monitor.bus import EventBus
from verifiers.apps.vmix import (
    OUTPUT_NAMES,
    VmixState,
    VmixXmlError,
    parse_api_xml,
    parse_tally,
)
from verifiers.evidence import EvidenceEvent, VmixOutput, VmixPreview, VmixProgram, VmixSnapshot, VmixTally

SOURCE = "vmix"
#: the kinds with an evidence type: emitted as that type's payload (VmixObserver._emit)
_TYPED: dict[str, type[EvidenceEvent]] = {"snapshot": VmixSnapshot, "program": VmixProgram, "preview": VmixPreview,
                                          "output": VmixOutput, "tally": VmixTally}
#: The only TCP commands the observer may send (exact, case-sensitive).
ALLOWED_TCP_COMMANDS = frozenset({"XML", "TALLY", "SUBSCRIBE TALLY", "SUBSCRIBE ACTS"})
#: Activator names (SUBSCRIBE ACTS) that map to output flags.
ACTIVATOR_OUTPUTS = {"Recording": "recording", "Streaming": "streaming", "External": "external",
                     "MultiCorder": "multiCorder", "Fullscreen": "fullscreen", "PlayList": "playList",
                     "FadeToBlack": "fadeToBlack"}
MAX_TCP_LINE_BYTES = 64 * 1024
MAX_XML_BYTES = 64 * 1024 * 1024


class HttpStatusError(Exception):
    """vMix answered `GET /api` with a status other than 200: reachable, but no state to read."""


class ReadOnlyViolation(RuntimeError):
    """The observer was asked to send something that could change vMix state. Nothing was sent."""


def check_http_request(method: str, path: str, query: str = "") -> None:
    """Raise ReadOnlyViolation unless this is exactly `GET /api` with no query string."""
    if method.upper() != "GET" or path.rstrip("/") != "/api" or query:
        raise ReadOnlyViolation(f"read-only vMix observer refuses HTTP {method} {path}{'?' + query if query else ''}")


def check_tcp_command(command: str) -> None:
    """Raise ReadOnlyViolation unless the command is one of ALLOWED_TCP_COMMANDS."""
    if command not in ALLOWED_TCP_COMMANDS:
        raise ReadOnlyViolation(f"read-only vMix observer refuses TCP command {command.split(' ', 1)[0]!r}")


@dataclass
class VmixObserverConfig:
    host: str = "127.0.0.1"
    http_port: int = 8088
    tcp_port: int = 8099
    poll_hz: float = 5.0
    use_http: bool = True
    use_tcp: bool = True
    request_timeout_s: float = 2.0
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 10.0


def _input_brief(state: VmixState, number: int | None) -> dict[str, Any]:
    inp = state.input_by_number(number)
    if inp is None:
        return {"number": number}
    return {"number": inp.number, "key": inp.key, "title": inp.title, "type": inp.type}


def diff_states(old: VmixState, new: VmixState) -> list[tuple[str, dict[str, Any]]]:
    """The events that turn `old` into `new` (kind, payload), in a stable order. Pure, for tests."""
    out: list[tuple[str, dict[str, Any]]] = []
    for kind, attr in (("program", "active"), ("preview", "preview")):
        before, after = getattr(old, attr), getattr(new, attr)
        if before != after:
            out.append((kind, {"input": _input_brief(new, after), "previous": _input_brief(old, before)}))
    old_keys = {i.key: i for i in old.inputs}
    new_keys = {i.key: i for i in new.inputs}
    for key, inp in new_keys.items():
        if key not in old_keys:
            out.append(("input.added", {"input": _input_brief(new, inp.number)}))
    for key, inp in old_keys.items():
        if key not in new_keys:
            out.append(("input.removed", {"input": _input_brief(old, inp.number)}))
    for key, inp in new_keys.items():
        prev = old_keys.get(key)
        if prev is None:
            continue
        before = {(t.index, t.name): t.value for t in prev.text}
        for t in inp.text:
            if before.get((t.index, t.name)) != t.value:
                out.append(("title.text", {"input": _input_brief(new, inp.number), "index": t.index,
                                           "name": t.name, "value": t.value,
                                           "previous": before.get((t.index, t.name))}))
    old_ov = {c.number: c for c in old.overlays or []}
    for ch in new.overlays or []:
        prev_ch = old_ov.get(ch.number)
        if prev_ch is None or prev_ch.input != ch.input or prev_ch.preview != ch.preview:
            out.append(("overlay", {"channel": ch.number, "input": _input_brief(new, ch.input) if ch.input else None,
                                    "preview": ch.preview,
                                    "previous": prev_ch.input if prev_ch is not None else None}))
    for name in OUTPUT_NAMES:
        before, after = old.output(name), new.output(name)
        if before != after and after is not None:
            out.append(("output", {"name": name, "active": after, "previous": before}))
    om, nm = old.master, new.master
    if nm is not None and (om is None or om.volume != nm.volume or om.muted != nm.muted):
        out.append(("audio.master", {"volume": nm.volume, "muted": nm.muted,
                                     "previous_volume": om.volume if om else None,
                                     "previous_muted": om.muted if om else None}))
    return out


def snapshot_payload(state: VmixState) -> dict[str, Any]:
    """A compact summary of a whole state, emitted on the first good poll after (re)connecting."""
    return {
        "version": state.version, "edition": state.edition, "preset": state.preset,
        "active": state.active, "preview": state.preview,
        "inputs": [{"number": i.number, "key": i.key, "type": i.type, "title": i.title,
                    **({"text": {t.name: t.value for t in i.text}} if i.text else {})} for i in state.inputs],
        "overlays": {str(c.number): c.input for c in state.overlays or [] if c.input is not None},
        "outputs": {k: v.active for k, v in state.outputs.items()},
        "master": ({"volume": state.master.volume, "muted": state.master.muted} if state.master else None),
    }


class _Channel:
    """Up/down bookkeeping for one channel, so gaps are reported once per outage."""

    def __init__(self, name: str, bus: EventBus) -> None:
        self.name, self.bus = name, bus
        self.down_since_ns: int | None = None
        self.ever_up = False
        self.last_error: str | None = None

    def down(self, reason: str) -> None:
        if self.down_since_ns is None:
            self.down_since_ns = time.monotonic_ns()
            self.bus.emit(SOURCE, "gap.start", {"channel": self.name, "reason": reason})

    def up(self, info: dict[str, Any]) -> None:
        if self.down_since_ns is not None:
            gap_s = (time.monotonic_ns() - self.down_since_ns) / 1e9
            self.bus.emit(SOURCE, "gap.end", {"channel": self.name, "gap_s": round(gap_s, 6)})
            self.down_since_ns = None
        self.ever_up = True
        self.bus.emit(SOURCE, "connected", {"channel": self.name, **info})

    def error(self, message: str, **extra: Any) -> None:
        self.bus.emit(SOURCE, "error", {"channel": self.name, "error": message, **extra})


class VmixObserver:
    """Watches one vMix instance; `await start()`, later `await stop()`. Never sends a write."""

    def __init__(self, bus: EventBus, config: VmixObserverConfig | None = None) -> None:
        self.bus = bus
        self.config = config or VmixObserverConfig()
        if self.config.poll_hz <= 0:
            raise ValueError("poll_hz must be > 0")
        self.state: VmixState | None = None  # latest good HTTP (or TCP XML) state
        self.tcp_program: list[int] = []
        self.tcp_preview: list[int] = []
        self._http = _Channel("http", bus)
        self._tcp = _Channel("tcp", bus)
        self._session: aiohttp.ClientSession | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._writer: asyncio.StreamWriter | None = None
        self.polls = 0

    # -- guarded I/O: the only two ways anything leaves this process

    async def http_get(self, path: str = "/api", query: str = "", method: str = "GET") -> bytes:
        """Fetch `GET /api`; anything else raises ReadOnlyViolation before a request is made."""
        check_http_request(method, path, query)
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.config.request_timeout_s))
        url = f"http://{self.config.host}:{self.config.http_port}/api"
        async with self._session.get(url, allow_redirects=False) as resp:
            if resp.status != 200:
                raise HttpStatusError(f"GET /api answered HTTP {resp.status}")
            return await resp.read()

    async def send_tcp_command(self, command: str) -> None:
        """Write one allowed command line; anything else raises ReadOnlyViolation, nothing sent."""
        check_tcp_command(command)
        if self._writer is None:
            raise ConnectionError("no TCP connection to vMix")
        self._writer.write(command.encode("ascii") + b"\r\n")
        await self._writer.drain()

    # -- lifecycle

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        if self.config.use_http:
            self._tasks.append(loop.create_task(self._poll_loop(), name="vmix-http"))
        if self.config.use_tcp:
            self._tasks.append(loop.create_task(self._tcp_loop(), name="vmix-tcp"))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> VmixObserver:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- HTTP polling

    async def _poll_loop(self) -> None:
        period_s = 1.0 / self.config.poll_hz
        backoff_s = self.config.backoff_initial_s
        loop = asyncio.get_running_loop()
        next_t = loop.time()
        connected = False
        while True:
            try:
                body = await self.http_get()
            except (TimeoutError, aiohttp.ClientError, OSError) as exc:
                reason = f"{type(exc).__name__}: {exc}".strip()[:200]
                self._http.down(reason)
                connected = False
                await asyncio.sleep(backoff_s)
                backoff_s = min(backoff_s * 2, self.config.backoff_max_s)
                next_t = loop.time()
                continue
            except HttpStatusError as exc:
                body = None
                message = str(exc)
            else:
                message = None
            backoff_s = self.config.backoff_initial_s
            self.polls += 1
            try:
                if body is None:
                    raise VmixXmlError(message or "no body")
                new = parse_api_xml(body)
            except VmixXmlError as exc:
                # Keep the last good state: a bad document is evidence of a problem, not of a change.
                if self._http.last_error != str(exc):
                    self._http.error(str(exc), bytes=len(body) if body is not None else None)
                self._http.last_error = str(exc)
            else:
                self._http.last_error = None
                if not connected:
                    # After an outage, also report what changed while we could not see (flagged).
                    missed = diff_states(self.state, new) if self._http.ever_up and self.state else []
                    self._http.up({"version": new.version, "edition": new.edition})
                    connected = True
                    self._emit("snapshot", {"via": "http", **snapshot_payload(new)})
                    for kind, payload in missed:
                        self._emit(kind, {"via": "http", "after_gap": True, **payload})
                elif self.state is not None:
                    for kind, payload in diff_states(self.state, new):
                        self._emit(kind, {"via": "http", **payload})
                self.state = new
            next_t += period_s
            delay = next_t - loop.time()
            if delay < 0:  # fell behind (slow vMix): skip missed ticks rather than burst
                next_t = loop.time()
                delay = 0
            await asyncio.sleep(delay)

    # -- TCP session

    async def _tcp_loop(self) -> None:
        backoff_s = self.config.backoff_initial_s
        while True:
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(self.config.host, self.config.tcp_port, limit=MAX_TCP_LINE_BYTES),
                    self.config.request_timeout_s)
            except (TimeoutError, OSError) as exc:
                self._tcp.down(f"{type(exc).__name__}: {exc}".strip()[:200])
                await asyncio.sleep(backoff_s)
                backoff_s = min(backoff_s * 2, self.config.backoff_max_s)
                continue
            self._writer = writer
            try:
                reason = await self._tcp_session(reader)
            except (OSError, asyncio.IncompleteReadError) as exc:
                reason = f"{type(exc).__name__}: {exc}".strip()[:200]
            finally:
                self._writer = None
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()
            self._tcp.down(reason)
            self.tcp_program, self.tcp_preview = [], []
            await asyncio.sleep(backoff_s)
            backoff_s = min(backoff_s * 2, self.config.backoff_max_s)
            if self._tcp.ever_up:
                backoff_s = self.config.backoff_initial_s

    async def _tcp_session(self, reader: asyncio.StreamReader) -> str:
        """Subscribe, then read pushed lines until the connection ends; returns why it ended."""
        # vMix greets with VERSION OK; subscribe at once (each reply is awaited in the read loop,
        # and we send the next command only after the previous command's reply arrived).
        pending = ["SUBSCRIBE ACTS", "XML"]
        await self.send_tcp_command("SUBSCRIBE TALLY")
        awaiting = "SUBSCRIBE"
        version: str | None = None
        while True:
            try:
                if awaiting is None:
                    line_b = await reader.readuntil(b"\n")
                else:  # a peer that never answers our handshake is not a working vMix
                    line_b = await asyncio.wait_for(reader.readuntil(b"\n"), self.config.request_timeout_s)
            except TimeoutError:
                self._tcp.error(f"no reply to {awaiting} within {self.config.request_timeout_s:g} s")
                return f"no reply to {awaiting}"
            except asyncio.IncompleteReadError as exc:
                if exc.partial:
                    self._tcp.error("connection closed mid-line", partial=exc.partial[:200].decode("utf-8", "replace"))
                return "connection closed by vMix"
            except asyncio.LimitOverrunError:
                self._tcp.error(f"line longer than {MAX_TCP_LINE_BYTES} bytes")
                return "protocol error: overlong line"
            mono_ns = time.monotonic_ns()
            line = line_b.decode("utf-8", "replace").rstrip("\r\n")
            word, _, rest = line.partition(" ")
            if word == "VERSION":
                version = rest.removeprefix("OK ").strip()
                continue
            if word == "XML" and rest.strip().isdigit():
                size = int(rest.strip())
                if size > MAX_XML_BYTES:
                    self._tcp.error(f"XML reply of {size} bytes exceeds limit")
                    return "protocol error: XML too large"
                try:
                    body = await asyncio.wait_for(reader.readexactly(size), self.config.request_timeout_s + size / 1e6)
                except (asyncio.IncompleteReadError, TimeoutError) as exc:
                    got = len(exc.partial) if isinstance(exc, asyncio.IncompleteReadError) else None
                    self._tcp.error(f"XML reply cut short: announced {size} bytes", received=got)
                    return "XML reply cut short"
                self._on_tcp_xml(body)
            elif word == "TALLY":
                self._on_tally(rest, mono_ns)
            elif word == "ACTS":
                self._on_acts(rest, mono_ns)
            elif word in ("SUBSCRIBE", "XML") and rest.startswith("ER"):
                self._tcp.error(f"vMix refused {word}: {rest[2:].strip()}")
            elif word == "SUBSCRIBE" and rest.startswith("OK"):
                pass
            elif line.strip():
                self._tcp.error("unexpected line", line=line[:200])
            if awaiting is not None and word == awaiting:
                if pending:
                    nxt = pending.pop(0)
                    awaiting = nxt.split(" ", 1)[0]
                    await self.send_tcp_command(nxt)
                else:
                    awaiting = None
                    self._tcp.up({"version": version, "subscriptions": ["TALLY", "ACTS"]})

    def _on_tcp_xml(self, body: bytes) -> None:
        try:
            state = parse_api_xml(body)
        except VmixXmlError as exc:
            self._tcp.error(str(exc))
            return
        if self.state is None:
            self.state = state

    def _emit(self, kind: str, payload: dict[str, Any], mono_ns: int | None = None) -> None:
        """Emit one event; kinds with an evidence type (verifiers.evidence.vmix: snapshot, program,
        preview, output, tally) go out as that type's payload, the shape scorers and the dashboard
        parse (tests/architecture/test_evidence_producers.py proves the diff payloads fit exactly)."""
        cls = _TYPED.get(kind)
        self.bus.emit(SOURCE, kind, cls.from_payload(payload, f"vmix/{kind}").to_payload() if cls else payload, mono_ns)

    def _title(self, number: int) -> dict[str, Any]:
        return _input_brief(self.state, number) if self.state is not None else {"number": number}

    def _on_tally(self, rest: str, mono_ns: int) -> None:
        status, _, digits = rest.partition(" ")
        if status != "OK":
            self._tcp.error(f"TALLY {status}: {digits.strip()}")
            return
        try:
            program, preview = parse_tally(digits)
        except VmixXmlError as exc:
            self._tcp.error(str(exc))
            return
        self._emit("tally", {"via": "tcp", "program": program, "preview": preview}, mono_ns)
        self._set_tcp("program", program, mono_ns, "TALLY")
        self._set_tcp("preview", preview, mono_ns, "TALLY")

    def _set_tcp(self, kind: str, numbers: list[int], mono_ns: int, via_line: str) -> None:
        attr = "tcp_program" if kind == "program" else "tcp_preview"
        before: list[int] = getattr(self, attr)
        if numbers == before:
            return
        setattr(self, attr, numbers)
        if not numbers:
            return  # e.g. preview cleared mid-transition; the next line completes the picture
        self._emit(kind, {
            "via": "tcp", "line": via_line, "input": self._title(numbers[0]),
            "inputs": numbers, "previous": {"number": before[0]} if before else None,
        }, mono_ns)

    def _on_acts(self, rest: str, mono_ns: int) -> None:
        parts = rest.split()
        if not parts or parts[0] != "OK" or len(parts) < 3:
            self._tcp.error("malformed ACTS line", line=("ACTS " + rest)[:200])
            return
        name, args = parts[1], parts[2:]
        try:
            if name in ("Input", "InputPreview") and len(args) == 2:
                number, value = int(args[0]), float(args[1])
                kind = "program" if name == "Input" else "preview"
                if value >= 1:
                    self._set_tcp(kind, [number], mono_ns, "ACTS")
            elif name.startswith("Overlay") and name[7:].isdigit() and len(args) == 2:
                number, value = int(args[0]), float(args[1])
                self.bus.emit(SOURCE, "overlay", {"via": "tcp", "channel": int(name[7:]),
                                                  "input": self._title(number) if value >= 1 else None,
                                                  "previous": None if value >= 1 else number}, mono_ns)
            elif name in ACTIVATOR_OUTPUTS and len(args) == 1:
                self._emit("output", {"via": "tcp", "name": ACTIVATOR_OUTPUTS[name], "active": float(args[0]) >= 1},
                           mono_ns)
            elif name == "MasterAudio" and len(args) == 1:
                self.bus.emit(SOURCE, "audio.master", {"via": "tcp", "muted": float(args[0]) < 1}, mono_ns)
            elif name == "MasterVolume" and len(args) == 1:
                self.bus.emit(SOURCE, "audio.master", {"via": "tcp", "volume": round(float(args[0]) * 100, 3)},
                              mono_ns)
            # Other activators (InputPlaying, InputVolume, ...) are not needed yet: ignored.
        except ValueError:
            self._tcp.error("malformed ACTS line", line=("ACTS " + rest)[:200])
