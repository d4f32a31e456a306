"""A vMix API emulator: HTTP `GET /api` and the TCP API (port 8099), state from a scripted timeline.

vMix cannot run here, so tests of the vMix observer (and of scorers reading its events) need a
stand-in that speaks the documented protocols byte for byte (docs/vmix.md):

* HTTP: `GET /api` → the state XML; `GET /api?Function=...` is recorded in `function_calls` and a
  few common functions are applied, so a test can prove an observer never sends one.
* TCP: `VERSION OK <version>` greeting; `XML` → `XML <len>\\r\\n` + body; `TALLY` → `TALLY OK 0121`;
  `SUBSCRIBE TALLY|ACTS` → `SUBSCRIBE OK <name> Subscribed` then pushed `TALLY OK ...` /
  `ACTS OK <Activator> [input] <value>` lines on every change; `UNSUBSCRIBE`, `ACTS`, `FUNCTION`, `QUIT`.
  Every line ends in CRLF.

The state follows a script (YAML or JSON; format in docs/vmix.md): inputs, then steps at given
times (cuts, preview, overlays, outputs on/off, title text, inputs added/removed, master audio, and
faults such as malformed XML or a half-sent TCP line). `time_scale` shrinks the timeline for fast
tests. Every applied change is recorded in `changes` with its monotonic time, so a test can
measure observer latency against the moment the emulator changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import yaml
from aiohttp import web

from monitor.aio import cancel_and_wait
from verifiers.apps.vmix import (
    OUTPUT_NAMES,
    VmixAudioBus,
    VmixInput,
    VmixOutput,
    VmixOverlayChannel,
    VmixState,
    VmixText,
    VmixTransition,
    state_to_xml,
    tally_string,
)

DEFAULT_VERSION = "27.0.0.49"
#: Input types that carry audio in vMix (their XML has muted/volume/balance/solo/audiobusses/meters).
AUDIO_TYPES = {"Capture", "Video", "VideoList", "AudioFile", "Audio", "NDI", "Stream", "SRT", "VLC",
               "VideoCall", "Replay", "DVD", "Browser"}
#: Script keys that toggle outputs, mapped to the activator names vMix pushes over `SUBSCRIBE ACTS`.
ACTIVATORS = {"recording": "Recording", "streaming": "Streaming", "external": "External",
              "multiCorder": "MultiCorder", "fullscreen": "Fullscreen", "playList": "PlayList",
              "fadeToBlack": "FadeToBlack"}
STEP_KEYS = {"at_s", "cut", "program", "preview", "overlay", "text", "add_input", "remove_input", "master",
             "http_fault", "tcp_drop", "tcp_garbage", *OUTPUT_NAMES}
HTTP_FAULTS = {"malformed", "truncated", "status500", "empty"}


class ScriptError(ValueError):
    """An emulator script that cannot be used; the message names the step and the problem."""


@dataclass
class Step:
    """One timeline entry: at `at_s` (script seconds) apply `actions` (every key but at_s)."""

    at_s: float
    actions: dict[str, Any]


@dataclass
class Script:
    initial: VmixState
    steps: list[Step]
    duration_s: float | None = None


@dataclass
class AppliedChange:
    """What the emulator did and when (monotonic ns): the truth tests compare observer events with."""

    mono_ns: int
    actions: dict[str, Any]
    active: int | None
    preview: int | None
    tally: str


# ---------------------------------------------------------------------------------------- script


def _input_from_spec(spec: Any, number: int) -> VmixInput:
    if isinstance(spec, str):
        spec = {"title": spec}
    if not isinstance(spec, dict) or not isinstance(spec.get("title"), str) or not spec["title"]:
        raise ScriptError(f"input {number}: needs at least a non-empty 'title'")
    unknown = set(spec) - {"title", "type", "key", "short_title", "state", "text", "layers", "muted",
                           "volume", "audio"}
    if unknown:
        raise ScriptError(f"input {spec['title']!r}: unknown keys {sorted(unknown)}")
    itype = str(spec.get("type", "Capture"))
    title = spec["title"]
    # A stable key per (number, title) so repeated runs of one script give identical XML.
    key = str(spec.get("key") or uuid.uuid5(uuid.NAMESPACE_URL, f"tally-vmix-emulator/{number}/{title}"))
    inp = VmixInput(key=key, number=number, type=itype, title=title,
                    short_title=str(spec.get("short_title", title)), state=str(spec.get("state", "Running")),
                    position_ms=0, duration_ms=0, loop=False, content=title)
    if spec.get("audio", itype in AUDIO_TYPES):
        inp.muted = bool(spec.get("muted", False))
        inp.volume = float(spec.get("volume", 100))
        inp.balance, inp.solo, inp.audiobusses = 0.0, False, "M"
        inp.extra_attrs = {"meterF1": "0", "meterF2": "0", "gainDb": "0"}
    text = spec.get("text") or {}
    if not isinstance(text, dict):
        raise ScriptError(f"input {title!r}: 'text' must map field names to values")
    inp.text = [VmixText(i, str(k), str(v)) for i, (k, v) in enumerate(text.items())]
    if text:
        inp.selected_index = 0
    return inp


def default_state(version: str = DEFAULT_VERSION, edition: str = "4K") -> VmixState:
    """An empty vMix as the API shows it: 4 overlay + 4 stinger channels, 4 transitions, all off."""
    return VmixState(
        version=version, edition=edition, preset="C:\\Users\\tally\\AppData\\Roaming\\last.vmix",
        overlays=[VmixOverlayChannel(n) for n in range(1, 9)], preview=None, active=None,
        transitions=[VmixTransition(1, "Fade", 500), VmixTransition(2, "Merge", 1000),
                     VmixTransition(3, "Wipe", 1000), VmixTransition(4, "CubeZoom", 1000)],
        outputs={name: VmixOutput(False) for name in OUTPUT_NAMES},
        audio={"master": VmixAudioBus("master", 100.0, False, 0.0, 0.0, {"headphonesVolume": "100"})},
    )


def script_from_dict(obj: Any) -> Script:
    """Validate a parsed script (see docs/vmix.md) into initial state + sorted steps."""
    if not isinstance(obj, dict):
        raise ScriptError("script must be a mapping with 'inputs' and optional 'initial', 'timeline'")
    unknown = set(obj) - {"version", "edition", "preset", "inputs", "initial", "timeline", "duration_s"}
    if unknown:
        raise ScriptError(f"unknown top-level keys {sorted(unknown)}")
    state = default_state(str(obj.get("version", DEFAULT_VERSION)), str(obj.get("edition", "4K")))
    if "preset" in obj:
        state.preset = str(obj["preset"])
    specs = obj.get("inputs") or []
    if not isinstance(specs, list) or not specs:
        raise ScriptError("'inputs' must be a non-empty list")
    state.inputs = [_input_from_spec(spec, n) for n, spec in enumerate(specs, start=1)]
    initial = obj.get("initial") or {}
    if not isinstance(initial, dict):
        raise ScriptError("'initial' must be a mapping of step actions")
    state.active, state.preview = 1, 2 if len(state.inputs) > 1 else 1
    emu = _StateOps(state)
    try:
        emu.apply(initial)
    except ScriptError as exc:
        raise ScriptError(f"initial: {exc}") from None
    steps: list[Step] = []
    for i, raw in enumerate(obj.get("timeline") or []):
        if not isinstance(raw, dict) or "at_s" not in raw:
            raise ScriptError(f"timeline[{i}]: each step needs 'at_s' and at least one action")
        try:
            at_s = float(raw["at_s"])
        except (TypeError, ValueError):
            raise ScriptError(f"timeline[{i}]: at_s must be a number") from None
        if at_s < 0 or at_s != at_s:
            raise ScriptError(f"timeline[{i}]: at_s must be >= 0")
        bad = set(raw) - STEP_KEYS
        if bad or len(raw) < 2:
            raise ScriptError(f"timeline[{i}]: unknown or missing actions {sorted(bad)}")
        steps.append(Step(at_s, {k: v for k, v in raw.items() if k != "at_s"}))
    steps.sort(key=lambda s: s.at_s)
    # Dry-run every step on a copy so a bad reference fails at load time, not 30 s into a run.
    dry = _StateOps(copy.deepcopy(state))
    for s in steps:
        try:
            dry.apply(s.actions)
        except ScriptError as exc:
            raise ScriptError(f"timeline step at {s.at_s:g} s: {exc}") from None
    duration = obj.get("duration_s")
    return Script(state, steps, float(duration) if duration is not None else None)


def load_script(path: str | Path) -> Script:
    """Read a YAML or JSON script file (JSON is YAML, but .json gets JSON's stricter errors)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"{p}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ScriptError(f"{p}: not UTF-8 text") from None
    try:
        obj = json.loads(text) if p.suffix.lower() == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ScriptError(f"{p}: not valid {'JSON' if p.suffix.lower() == '.json' else 'YAML'}: "
                          f"{str(exc).splitlines()[0]}") from None
    try:
        return script_from_dict(obj)
    except ScriptError as exc:
        raise ScriptError(f"{p}: {exc}") from None


# ---------------------------------------------------------------------------------------- state ops


class _StateOps:
    """Applies script actions to a VmixState; shared by load-time validation and the live emulator."""

    def __init__(self, state: VmixState) -> None:
        self.state = state
        self.http_fault: str | None = None

    def ref(self, value: Any) -> VmixInput:
        """An input by number, key or title (numbers as int; strings try title, then key)."""
        st = self.state
        hit = None
        if isinstance(value, bool):
            hit = None
        elif isinstance(value, int):
            hit = st.input_by_number(value)
        elif isinstance(value, str):
            hit = st.input_by_title(value) or st.input_by_key(value)
        if hit is None:
            raise ScriptError(f"no input {value!r}")
        return hit

    def apply(self, actions: dict[str, Any]) -> None:
        st = self.state
        if "add_input" in actions:
            st.inputs.append(_input_from_spec(actions["add_input"], len(st.inputs) + 1))
        if "remove_input" in actions:
            self._remove(self.ref(actions["remove_input"]))
        if "preview" in actions:
            st.preview = self.ref(actions["preview"]).number
        if "program" in actions:
            # CutDirect: straight to program, preview untouched.
            st.active = self.ref(actions["program"]).number
        if "cut" in actions:
            # vMix Cut: the chosen input goes to program and the old program becomes preview.
            target = self.ref(actions["cut"]).number
            st.preview, st.active = st.active, target
        if "overlay" in actions:
            ov = actions["overlay"]
            if not isinstance(ov, dict) or not isinstance(ov.get("channel"), int) or "input" not in ov:
                raise ScriptError("overlay needs {channel: 1-8, input: <input or null>}")
            chan = next((c for c in st.overlays or [] if c.number == ov["channel"]), None)
            if chan is None:
                raise ScriptError(f"no overlay channel {ov['channel']}")
            chan.input = None if ov["input"] is None else self.ref(ov["input"]).number
        if "text" in actions:
            tx = actions["text"]
            if not isinstance(tx, dict) or not {"input", "name", "value"} <= set(tx):
                raise ScriptError("text needs {input, name, value}")
            inp = self.ref(tx["input"])
            field_ = next((t for t in inp.text if t.name == tx["name"] or t.name.rsplit(".", 1)[0] == tx["name"]),
                          None)
            if field_ is None:
                raise ScriptError(f"input {inp.title!r} has no text field {tx['name']!r}")
            field_.value = str(tx["value"])
        for name in OUTPUT_NAMES:
            if name in actions:
                if not isinstance(actions[name], bool):
                    raise ScriptError(f"{name} must be true or false")
                st.outputs[name] = VmixOutput(actions[name], st.outputs.get(name, VmixOutput(False)).attrs)
        if "master" in actions:
            m = actions["master"]
            bus = st.master
            if not isinstance(m, dict) or bus is None or not set(m) <= {"volume", "muted"}:
                raise ScriptError("master needs {volume: 0-100, muted: true/false}")
            if "volume" in m:
                bus.volume = float(m["volume"])
            if "muted" in m:
                bus.muted = bool(m["muted"])
        if "http_fault" in actions:
            fault = actions["http_fault"]
            if fault is not None and fault not in HTTP_FAULTS:
                raise ScriptError(f"http_fault must be one of {sorted(HTTP_FAULTS)} or null")
            self.http_fault = fault

    def _remove(self, inp: VmixInput) -> None:
        """Remove an input; vMix renumbers the ones after it and moves program/preview with them."""
        st = self.state
        gone = inp.number
        st.inputs.remove(inp)

        def renum(n: int | None) -> int | None:
            if n is None or n == gone:
                return None if n == gone else n
            return n - 1 if n > gone else n

        for i in st.inputs:
            if i.number > gone:
                i.number -= 1
        st.active, st.preview = renum(st.active), renum(st.preview)
        for ch in st.overlays or []:
            ch.input = renum(ch.input)


# ---------------------------------------------------------------------------------------- functions


def _function_actions(name: str, params: dict[str, str]) -> dict[str, Any] | None:
    """The handful of vMix shortcut functions the emulator executes; None = recorded but unknown."""
    inp: Any = params.get("Input")
    if inp is not None and inp.isdigit():
        inp = int(inp)
    lname = name.lower()
    if lname == "previewinput" and inp is not None:
        return {"preview": inp}
    if lname in ("cutdirect", "activeinput") and inp is not None:
        return {"program": inp}
    if lname in ("cut", "fade", "merge", "wipe", "stinger1", "stinger2", "transition1", "transition2"):
        return {"cut": inp if inp is not None else "__preview__"}
    for key, act in ACTIVATORS.items():
        low = act.lower()
        if lname == f"start{low}":
            return {key: True}
        if lname == f"stop{low}":
            return {key: False}
        if lname == f"startstop{low}":
            return {key: "__toggle__"}
    if lname == "settext" and inp is not None and "Value" in params:
        return {"text": {"input": inp, "name": params.get("SelectedName", ""), "value": params["Value"]}}
    if lname.startswith("overlayinput") and lname[12:13].isdigit():
        chan, verb = int(lname[12]), lname[13:]
        if verb in ("in", "") and inp is not None:
            return {"overlay": {"channel": chan, "input": inp}}
        if verb in ("out", "off"):
            return {"overlay": {"channel": chan, "input": None}}
    if lname == "setmastervolume" and "Value" in params:
        return {"master": {"volume": float(params["Value"])}}
    if lname in ("masteraudioon", "masteraudiooff"):
        return {"master": {"muted": lname.endswith("off")}}
    return None


# ---------------------------------------------------------------------------------------- emulator


@dataclass
class _TcpClient:
    writer: asyncio.StreamWriter
    subscriptions: set[str] = field(default_factory=set)


class VmixEmulator:
    """HTTP + TCP vMix API on 127.0.0.1, following a Script. Ports 0 pick free ports (see `http_port`)."""

    def __init__(self, script: Script, *, http: tuple[str, int] | None = ("127.0.0.1", 8088),
                 tcp: tuple[str, int] | None = ("127.0.0.1", 8099), time_scale: float = 1.0,
                 run_timeline: bool = True) -> None:
        self.script = script
        self._ops = _StateOps(copy.deepcopy(script.initial))
        self._http_addr, self._tcp_addr = http, tcp
        self.time_scale = time_scale
        self._run_timeline = run_timeline
        self.changes: list[AppliedChange] = []
        self.function_calls: list[str] = []  # every write attempt, HTTP or TCP, verbatim
        self.requests: list[str] = []  # every HTTP path+query and TCP command line received
        self.http_port: int | None = None
        self.tcp_port: int | None = None
        self.t0_ns: int | None = None
        self._runner: web.AppRunner | None = None
        self._tcp_server: asyncio.base_events.Server | None = None
        self._clients: list[_TcpClient] = []
        self._timeline_task: asyncio.Task[None] | None = None
        self.on_change: list[Callable[[AppliedChange], None]] = []

    @property
    def state(self) -> VmixState:
        return self._ops.state

    def xml(self) -> str:
        return state_to_xml(self.state)

    # -- lifecycle

    async def start(self) -> None:
        """Bind both APIs and start the timeline; on failure (port in use) nothing is left open."""
        try:
            await self._start()
        except BaseException:
            await self.stop()
            raise

    async def _start(self) -> None:
        if self._http_addr is not None:
            app = web.Application()
            app.router.add_get("/api", self._http_api)
            app.router.add_get("/api/", self._http_api)
            self._runner = web.AppRunner(app, access_log=None)
            await self._runner.setup()
            site = web.TCPSite(self._runner, self._http_addr[0], self._http_addr[1])
            await site.start()
            self.http_port = int(self._runner.addresses[0][1])
        if self._tcp_addr is not None:
            await self.start_tcp()
        self.t0_ns = time.monotonic_ns()
        if self._run_timeline and self.script.steps:
            self._timeline_task = asyncio.get_running_loop().create_task(self._timeline())

    async def start_tcp(self) -> None:
        """(Re)open the TCP API; a restart after `stop_tcp` reuses the same port when it was fixed."""
        assert self._tcp_addr is not None
        port = self.tcp_port if self.tcp_port is not None else self._tcp_addr[1]
        self._tcp_server = await asyncio.start_server(self._tcp_client, self._tcp_addr[0], port,
                                                      reuse_address=True)
        self.tcp_port = int(self._tcp_server.sockets[0].getsockname()[1])

    async def stop_tcp(self) -> None:
        """Close the TCP listener and every client: the next connect is refused (a vMix restart)."""
        if self._tcp_server is not None:
            self._tcp_server.close()
            self.drop_tcp_clients()
            await self._tcp_server.wait_closed()
            self._tcp_server = None

    async def stop(self) -> None:
        await cancel_and_wait(self._timeline_task)
        self._timeline_task = None
        await self.stop_tcp()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> VmixEmulator:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def wait_timeline(self) -> None:
        """Return when every scripted step has been applied (at once if there are none)."""
        if self._timeline_task is not None:
            await asyncio.shield(self._timeline_task)

    def timeline_end_s(self) -> float:
        """Wall seconds from start to the end of the (scaled) script."""
        last = max([s.at_s for s in self.script.steps] + [self.script.duration_s or 0.0])
        return last * self.time_scale

    async def _timeline(self) -> None:
        assert self.t0_ns is not None
        for step in self.script.steps:
            due_ns = self.t0_ns + int(step.at_s * self.time_scale * 1e9)
            delay_s = (due_ns - time.monotonic_ns()) / 1e9
            if delay_s > 0:
                await asyncio.sleep(delay_s)
            self.apply(step.actions)

    # -- changing state

    def apply(self, actions: dict[str, Any]) -> AppliedChange:
        """Apply script actions now and push the resulting TALLY/ACTS lines to TCP subscribers."""
        before = copy.deepcopy(self.state)
        actions = dict(actions)
        if actions.get("cut") == "__preview__":
            actions["cut"] = self.state.preview if self.state.preview is not None else self.state.active
        for key in ACTIVATORS:
            if actions.get(key) == "__toggle__":
                actions[key] = not bool(self.state.output(key))
        self._ops.apply(actions)
        if actions.get("tcp_drop"):
            self.drop_tcp_clients()
        if isinstance(actions.get("tcp_garbage"), str):
            self.send_tcp_raw(actions["tcp_garbage"].encode("utf-8"))
        change = AppliedChange(time.monotonic_ns(), actions, self.state.active, self.state.preview,
                               tally_string(self.state))
        self._broadcast(before, self.state)
        self.changes.append(change)
        for cb in self.on_change:
            cb(change)
        return change

    def _broadcast(self, old: VmixState, new: VmixState) -> None:
        lines_tally: list[str] = []
        if tally_string(old) != tally_string(new):
            lines_tally.append(f"TALLY OK {tally_string(new)}")
        acts: list[str] = []
        if old.active != new.active:
            if old.active is not None and new.input_by_number(old.active) is not None:
                acts.append(f"ACTS OK Input {old.active} 0")
            if new.active is not None:
                acts.append(f"ACTS OK Input {new.active} 1")
        if old.preview != new.preview:
            if old.preview is not None and new.input_by_number(old.preview) is not None:
                acts.append(f"ACTS OK InputPreview {old.preview} 0")
            if new.preview is not None:
                acts.append(f"ACTS OK InputPreview {new.preview} 1")
        for o, n in zip(old.overlays or [], new.overlays or [], strict=False):
            if o.input != n.input:
                if o.input is not None:
                    acts.append(f"ACTS OK Overlay{n.number} {o.input} 0")
                if n.input is not None:
                    acts.append(f"ACTS OK Overlay{n.number} {n.input} 1")
        for key, act in ACTIVATORS.items():
            if old.output(key) != new.output(key):
                acts.append(f"ACTS OK {act} {int(bool(new.output(key)))}")
        om, nm = old.master, new.master
        if om is not None and nm is not None:
            if om.muted != nm.muted:
                acts.append(f"ACTS OK MasterAudio {int(not nm.muted)}")
            if om.volume != nm.volume and nm.volume is not None:
                acts.append(f"ACTS OK MasterVolume {nm.volume / 100:g}")
        for client in list(self._clients):
            out = []
            if "TALLY" in client.subscriptions:
                out.extend(lines_tally)
            if "ACTS" in client.subscriptions:
                out.extend(acts)
            if out:
                self._write(client, "".join(line + "\r\n" for line in out).encode("utf-8"))

    # -- fault injection for tests

    def send_tcp_raw(self, data: bytes) -> None:
        """Write raw bytes to every TCP client (e.g. half a line, to test torn-line handling)."""
        for client in list(self._clients):
            self._write(client, data)

    def drop_tcp_clients(self) -> None:
        for client in list(self._clients):
            with contextlib.suppress(Exception):
                client.writer.close()
        self._clients.clear()

    def set_http_fault(self, fault: str | None) -> None:
        self._ops.apply({"http_fault": fault})

    # -- HTTP

    async def _http_api(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(request.path_qs)
        query = {k: v for k, v in request.query.items()}
        function = next((v for k, v in query.items() if k.lower() == "function"), None)
        if function is not None:
            self.function_calls.append(f"HTTP {request.path_qs}")
            params = {k: v for k, v in query.items() if k.lower() != "function"}
            acts = _function_actions(function, params)
            if acts is None:
                return web.Response(status=500, text=f"Function {function} is not emulated")
            try:
                self.apply(acts)
            except ScriptError as exc:
                return web.Response(status=500, text=str(exc))
            return web.Response(text="Function completed successfully.")
        fault = self._ops.http_fault
        if fault == "status500":
            return web.Response(status=500, text="Internal Server Error")
        body = self.xml()
        if fault == "malformed":
            body = body.replace("</inputs>", "</inputz>", 1)
        elif fault == "truncated":
            body = body[: len(body) // 2]
        elif fault == "empty":
            body = ""
        return web.Response(body=body.encode("utf-8"), content_type="text/xml", charset="utf-8")

    # -- TCP

    def _write(self, client: _TcpClient, data: bytes) -> None:
        if client.writer.is_closing():
            with contextlib.suppress(ValueError):
                self._clients.remove(client)
            return
        client.writer.write(data)

    async def _tcp_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        client = _TcpClient(writer)
        self._clients.append(client)
        try:
            self._write(client, f"VERSION OK {self.state.version}\r\n".encode())
            while True:
                line = await reader.readline()
                if not line:
                    break
                if not line.endswith(b"\n"):
                    break  # a torn command at EOF: vMix ignores it
                cmd = line.decode("utf-8", "replace").strip()
                if not cmd:
                    continue
                self.requests.append(f"TCP {cmd}")
                if not self._tcp_command(client, cmd):
                    break
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            with contextlib.suppress(ValueError):
                self._clients.remove(client)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _tcp_command(self, client: _TcpClient, cmd: str) -> bool:
        """Answer one command; False means close the connection (QUIT)."""
        word, _, rest = cmd.partition(" ")
        word = word.upper()
        reply: str
        if word == "QUIT":
            return False
        if word == "XML":
            body = self.xml().encode("utf-8") + b"\r\n"
            self._write(client, f"XML {len(body)}\r\n".encode() + body)
            return True
        if word == "TALLY":
            reply = f"TALLY OK {tally_string(self.state)}"
        elif word in ("SUBSCRIBE", "UNSUBSCRIBE"):
            what = rest.strip().upper()
            if what not in ("TALLY", "ACTS"):
                reply = f"{word} ER Unknown subscription {rest.strip()}"
            elif word == "SUBSCRIBE":
                client.subscriptions.add(what)
                reply = f"SUBSCRIBE OK {what} Subscribed"
                if what == "TALLY":
                    reply += f"\r\nTALLY OK {tally_string(self.state)}"
            else:
                client.subscriptions.discard(what)
                reply = f"UNSUBSCRIBE OK {what} Unsubscribed"
        elif word == "ACTS":
            reply = self._acts_query(rest.split())
        elif word == "FUNCTION":
            self.function_calls.append(f"TCP {cmd}")
            name, _, query = rest.strip().partition(" ")
            acts = _function_actions(name, dict(parse_qsl(query)))
            if acts is None:
                reply = f"FUNCTION ER Function {name} is not emulated"
            else:
                try:
                    self.apply(acts)
                    reply = "FUNCTION OK Completed"
                except ScriptError as exc:
                    reply = f"FUNCTION ER {exc}"
        else:
            reply = f"{word} ER Unknown command"
        self._write(client, (reply + "\r\n").encode("utf-8"))
        return True

    def _acts_query(self, args: list[str]) -> str:
        if not args:
            return "ACTS ER Missing activator"
        name, st = args[0], self.state
        number = int(args[1]) if len(args) > 1 and args[1].isdigit() else None
        current = {"Input": st.active, "InputPreview": st.preview}
        for ch in st.overlays or []:
            current[f"Overlay{ch.number}"] = ch.input
        if name in current:
            n = number if number is not None else current[name]
            if n is None:
                return "ACTS ER No Input"
            return f"ACTS OK {name} {n} {int(current[name] == n)}"
        for key, act in ACTIVATORS.items():
            if name == act:
                return f"ACTS OK {act} {int(bool(st.output(key)))}"
        if name == "MasterAudio" and st.master is not None:
            return f"ACTS OK MasterAudio {int(not st.master.muted)}"
        return f"ACTS ER Unknown activator {name}"
