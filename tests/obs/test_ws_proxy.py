"""tally's obs-websocket proxy (monitor/observers/obs_ws_proxy.py).

Unit tests put a small obs-websocket stand-in (Hello, Identify, replies, batches, a msgpack-style
binary frame) behind the proxy and check what passes, what is recorded, and what never leaves it.
The real test runs OBS 29 with a password, builds the Weekly Stream through the proxy with
obsws-python (T17's oracle script), and checks that the proxy saw every request with OBS's answer,
while OBS's own debug log of the same run, read beside it, may miss some.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import socket
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from monitor.bus import EventBus
from monitor.events import Event
from monitor.observers.obs_ws_proxy import SOURCE, ObsWsProxy

SALT, CHALLENGE, AUTH = "SALT-s3cr3t", "CHALLENGE-c4ll", "AUTH-h4sh="


class FakeObs:
    """Enough of obs-websocket 5 to relay through: Hello with auth, Identified, replies, batches."""

    def __init__(self) -> None:
        self.received: list[Any] = []
        self.protocols_offered: list[str] = []
        self.runner: web.AppRunner | None = None
        self.port = 0

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/", self.handle)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        assert self.runner is not None
        await self.runner.cleanup()

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        self.protocols_offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",")
                                  if p.strip()]
        ws = web.WebSocketResponse(protocols=("obswebsocket.json", "obswebsocket.msgpack"))
        await ws.prepare(request)
        await ws.send_json({"op": 0, "d": {"obsWebSocketVersion": "5.1.0", "rpcVersion": 1,
                                           "authentication": {"challenge": CHALLENGE, "salt": SALT}}})
        async for msg in ws:
            if msg.type == aiohttp.WSMsgType.BINARY:
                self.received.append(msg.data)
                await ws.send_bytes(msg.data[::-1])
                continue
            m = json.loads(msg.data) if msg.data.startswith("{") else msg.data
            self.received.append(m)
            if not isinstance(m, dict):
                continue
            op, d = m["op"], m["d"]
            if op == 1:
                await ws.send_json({"op": 2, "d": {"negotiatedRpcVersion": 1}})
            elif op == 6:
                if d["requestType"] == "Hang":
                    continue  # never answered: the proxy reports it at close with ok None
                ok = d["requestType"] != "CreateScene" or d["requestData"]["sceneName"] != "Live"
                await ws.send_json({"op": 7, "d": {"requestType": d["requestType"], "requestId": d["requestId"],
                                                   "requestStatus": {"result": ok, "code": 100 if ok else 601,
                                                                     **({} if ok else {"comment": "exists"})}}})
            elif op == 8:
                results = [{"requestType": r["requestType"], **({"requestId": r["requestId"]} if "requestId" in r
                                                                else {}),
                            "requestStatus": {"result": True, "code": 100}} for r in d["requests"]]
                await ws.send_json({"op": 9, "d": {"requestId": d["requestId"], "results": results}})
        return ws


async def started(bus: EventBus, upstream_port: int) -> ObsWsProxy:
    proxy = ObsWsProxy(bus, "127.0.0.1", upstream_port)
    await proxy.start()
    return proxy


def record() -> tuple[EventBus, list[Event]]:
    bus = EventBus()
    got: list[Event] = []
    bus.add_sink(got.append)
    return bus, got


async def test_requests_replies_batches_and_secrets() -> None:
    obs = FakeObs()
    await obs.start()
    bus, got = record()
    proxy = await started(bus, obs.port)
    try:
        async with aiohttp.ClientSession() as http, http.ws_connect(
                f"ws://127.0.0.1:{proxy.port}", protocols=("obswebsocket.json",)) as ws:
            assert ws.protocol == "obswebsocket.json"          # OBS's choice, relayed
            hello = await ws.receive_json()
            assert hello["d"]["authentication"] == {"challenge": CHALLENGE, "salt": SALT}   # unchanged
            await ws.send_json({"op": 1, "d": {"rpcVersion": 1, "authentication": AUTH, "eventSubscriptions": 33}})
            assert (await ws.receive_json())["op"] == 2
            sent = [("CreateScene", 1, {"sceneName": "Starting Soon"}),
                    ("CreateScene", 2, {"sceneName": "Live"}),                 # OBS says no (601)
                    ("CreateInput", "a", {"sceneName": "Live", "inputName": "Cam", "inputKind": "v4l2_input",
                                          "inputSettings": {"device_id": "/dev/video0", "stream_key": "KEY-1"}}),
                    ("CreateScene", 1, {"sceneName": "BRB"})]                 # an id used again
            for rtype, rid, data in sent:
                await ws.send_json({"op": 6, "d": {"requestType": rtype, "requestId": rid, "requestData": data}})
            replies = [await ws.receive_json() for _ in sent]
            assert [r["d"]["requestStatus"]["result"] for r in replies] == [True, False, True, True]
            await ws.send_json({"op": 8, "d": {"requestId": "b1", "requests": [
                {"requestType": "SetInputMute", "requestData": {"inputName": "Mic", "inputMuted": True}},
                {"requestType": "Sleep", "requestId": "s", "requestData": {"sleepMillis": 1}}]}})
            assert (await ws.receive_json())["op"] == 9
            await ws.send_json({"op": 6, "d": {"requestType": "Hang", "requestId": 9}})
            await ws.send_str("not json")
            await ws.send_bytes(b"\x81\xa2op")
            assert await ws.receive_bytes() == b"po\xa2\x81"         # binary relayed both ways, unread
            local = ws.get_extra_info("sockname")
            await ws.close()
        await asyncio.sleep(0.2)
    finally:
        await proxy.stop()
        await obs.stop()
    assert obs.protocols_offered == ["obswebsocket.json"]
    assert obs.received[0]["d"]["authentication"] == AUTH          # the client's answer reached OBS unchanged
    assert "not json" in obs.received
    ev = [(e.kind, e.payload) for e in got]
    assert all(e.source == SOURCE for e in got)
    reqs = [p for k, p in ev if k == "ws/request"]
    assert [(r["request_type"], r["request_id"], r["ok"], r["code"], r["batch"]) for r in reqs] == [
        ("CreateScene", 1, True, 100, False), ("CreateScene", 2, False, 601, False),
        ("CreateInput", "a", True, 100, False), ("CreateScene", 1, True, 100, False),
        ("SetInputMute", None, True, 100, True), ("Sleep", "s", True, 100, True),
        ("Hang", 9, None, None, False)]
    assert reqs[0]["names"] == {"sceneName": "Starting Soon"} and reqs[3]["names"] == {"sceneName": "BRB"}
    assert reqs[1]["comment"] == "exists" and reqs[6]["comment"] == "connection closed before OBS replied"
    assert reqs[2]["names"] == {"sceneName": "Live", "inputName": "Cam", "inputKind": "v4l2_input"}
    kinds = [k for k, _ in ev]
    assert kinds[:3] == ["listening", "ws/client_connected", "ws/client_identified"]
    assert kinds[-2:] == ["ws/proxy_unreadable", "ws/client_disconnected"]
    assert ev[-2][1]["frames"] == 3                         # "not json", and the binary frame each way
    assert ev[2][1] == {"session": 1, "rpc_version": 1, "event_subscriptions": 33}
    assert ev[1][1] == {"session": 1, "remote": f"127.0.0.1:{local[1]}", "protocol": "obswebsocket.json"}
    dumped = json.dumps([e.to_dict() for e in got])
    for secret in (SALT, CHALLENGE, AUTH, "KEY-1", "/dev/video0"):
        assert secret not in dumped


async def test_obs_not_running_is_an_event_and_a_close_code() -> None:
    bus, got = record()
    with socket.socket() as s:  # a port nobody listens on: bind one, then free it
        s.bind(("127.0.0.1", 0))
        dead_port = s.getsockname()[1]
    proxy = await started(bus, dead_port)
    try:
        async with aiohttp.ClientSession() as http, http.ws_connect(f"ws://127.0.0.1:{proxy.port}") as ws:
            msg = await ws.receive()
            assert msg.type == aiohttp.WSMsgType.CLOSE and ws.close_code == 1011
    finally:
        await proxy.stop()
    errors = [e.payload for e in got if e.kind == "ws/proxy_error"]
    assert len(errors) == 1 and f"127.0.0.1:{dead_port}" in errors[0]["error"]


async def test_listens_on_loopback_by_default_and_stops_with_a_client_attached() -> None:
    obs = FakeObs()
    await obs.start()
    bus, got = record()
    proxy = await started(bus, obs.port)
    assert got[0].payload["host"] == "127.0.0.1" and proxy.port > 0
    http = aiohttp.ClientSession()
    ws = await http.ws_connect(f"ws://127.0.0.1:{proxy.port}")
    await ws.receive_json()
    await ws.send_json({"op": 6, "d": {"requestType": "GetVersion", "requestId": "x"}})
    await asyncio.sleep(0.1)
    await asyncio.wait_for(proxy.stop(), 10)       # the run ends while the script is still connected
    await http.close()
    await obs.stop()
    assert [e.kind for e in got][-1] == "ws/client_disconnected"


# ---- real OBS ----------------------------------------------------------------------------------

@pytest.mark.obs
@pytest.mark.timeout(180)
@pytest.mark.skipif(shutil.which("obs") is None or shutil.which("Xvfb") is None,
                    reason="obs-studio and xvfb not installed")
async def test_real_obs_every_request_through_the_proxy_with_its_answer(tmp_path: Path) -> None:
    """The proxy's record is exact; OBS's own log, read beside it, never reports more (one retry
    when OBS tore its log beyond repair: tests/app_health.py retry_once_on_torn_log)."""
    from tests.app_health import retry_once_on_torn_log

    await retry_once_on_torn_log(_proxy_and_log_attempt, tmp_path)


async def _proxy_and_log_attempt(tmp_path: Path) -> None:
    from monitor.observers.obs_log import ObsLogFollower
    from tests.obs.test_ws_log import T17, build_scenes, wait_for
    from tests.streaming.real_obs import save_obs_config, weekly_obs
    from verifiers.scoring import score_task
    from verifiers.synth import InstanceWriter, load_solution_events, overlay, synth_instance
    os.makedirs(tmp_path, exist_ok=True)

    inst = synth_instance(T17, tmp_path / "inst", seed=7)
    workdir = inst / "workdir"
    password = "pw-" + secrets.token_hex(8)
    bus, got = record()
    solution = tmp_path / "real"
    async with weekly_obs(password) as o:
        follower = ObsLogFollower(bus, o.config_dir / "logs", poll_s=0.1)
        await follower.start()
        proxy = ObsWsProxy(bus, "127.0.0.1", o.ws_port)
        await proxy.start()
        await asyncio.to_thread(build_scenes, proxy.port, password, workdir)
        await wait_for(lambda: any(e.source == SOURCE and e.kind == "ws/client_disconnected" for e in got))
        await proxy.stop()
        await follower.stop()
        (tmp_path / "obs-log.txt").write_text(
            "\n".join(p.read_text(errors="replace") for p in sorted((o.config_dir / "logs").glob("*.txt"))))
        assert await o.astop() == 0
        save_obs_config(o, solution, "Weekly_Stream.json")

    proxied = [e.payload for e in got if e.source == SOURCE and e.kind == "ws/request"]
    kinds = [r["request_type"] for r in proxied]
    # T17's oracle script, request by request (obsws-python numbers nothing `tally-`)
    assert kinds.count("CreateScene") == 3 and kinds.count("CreateInput") == 7, kinds
    for need in ("SetInputMute", "GetSceneItemId", "SetSceneItemTransform", "SetCurrentProgramScene", "RemoveScene",
                 "SetCurrentSceneTransition", "SetCurrentSceneTransitionDuration"):
        assert kinds.count(need) == 1, kinds
    assert all(r["ok"] is True and r["code"] == 100 and r["client"] == "other" for r in proxied), proxied
    named = {r["names"].get("inputName") for r in proxied if r["request_type"] == "CreateInput"}
    assert named == {"Background", "Countdown", "Display Capture", "Cam", "Frame", "BRB Background", "Mic"}
    assert not [e for e in got if e.kind in ("ws/proxy_unreadable", "ws/proxy_error")]
    identified = [e.payload for e in got if e.source == SOURCE and e.kind == "ws/client_identified"]
    assert identified and identified[0]["rpc_version"] == 1
    assert password not in json.dumps([e.to_dict() for e in got])
    # the same run as OBS's debug log tells it: never more than the proxy saw
    logged = [e.payload for e in got if e.source == "obs" and e.kind == "ws/request" and e.payload["client"] == "other"]
    # (the launcher's readiness GetVersion is numbered `tally-…`; a reply logged late adds nothing)
    assert 0 < len(logged) <= len(proxied), ([r["request_type"] for r in logged], kinds)
    assert {r["request_type"] for r in logged} <= set(kinds), ([r["request_type"] for r in logged], kinds)

    InstanceWriter.write_events(solution, [e.to_dict() for e in got])
    work = tmp_path / "work"
    overlay(workdir, solution, work)
    rep = score_task(T17, work, inst / "gt", load_solution_events(solution)).to_dict()
    assert rep["score"] >= 99, [(c["name"], c["score"], c["message"]) for c in rep["checks"]]
    gate = rep["checks"][0]["evidence"]["websocket_log"]
    assert gate["request_evidence"] == "obs-websocket proxy (exact)"


def test_run_wiring_starts_the_proxy_only_when_a_port_is_given(tmp_path: Path) -> None:
    from monitor.run.wiring import LiveOptions, ObsComponent, build_components
    from tests.obs.test_ws_log import T17
    from verifiers.catalog import load_catalog

    task = load_catalog().get(T17)
    ports = []
    for proxy_port in (None, 4456):
        comps, _ = build_components(task, LiveOptions(workdir=tmp_path, bundle_dir=tmp_path / "b",
                                                      obs_url="ws://127.0.0.1:4455", obs_proxy_port=proxy_port))
        ports += [c.proxy_port for c in comps if isinstance(c, ObsComponent)]
    assert ports == [None, 4456]


def test_t17_reads_the_proxy_and_falls_back_to_the_log_when_the_script_went_around_it(tmp_path: Path) -> None:
    from tests.obs.test_ws_log import T17
    from verifiers.scoring import score_task
    from verifiers.synth import load_solution_events, overlay, synth_instance

    inst = synth_instance(T17, tmp_path / "inst", seed=3)
    got = {}
    for name in ("through_proxy_no_log", "around_proxy", "proxy_saw_only_reads", "transform_around_proxy"):
        solution = inst / "mutants" / name
        work = tmp_path / name
        overlay(inst / "workdir", solution, work)
        rep = score_task(T17, work, inst / "gt", load_solution_events(solution)).to_dict()
        gate = rep["checks"][0]["evidence"]["websocket_log"]
        got[name] = (round(rep["score"]), gate["request_evidence"])
    assert got == {"through_proxy_no_log": (100, "obs-websocket proxy (exact)"),
                   "around_proxy": (100, "OBS debug log (the script went around the proxy)"),
                   "proxy_saw_only_reads": (0, "obs-websocket proxy (exact)"),
                   "transform_around_proxy": (100, "obs-websocket proxy (exact) + OBS debug log for requests "
                                                   "that went around it")}


async def test_a_taken_proxy_port_is_an_error_event_and_the_observer_still_runs(tmp_path: Path) -> None:
    from monitor.run.wiring import ObsComponent

    bus, got = record()
    with socket.socket() as taken, socket.socket() as no_obs:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        no_obs.bind(("127.0.0.1", 0))
        comp = ObsComponent("127.0.0.1", no_obs.getsockname()[1], None, taken.getsockname()[1])
        await comp.start(bus)
        try:
            assert comp.proxy is None and comp.observer is not None
        finally:
            await asyncio.wait_for(comp.stop(), 15)
    errors = [e.payload["error"] for e in got if e.source == SOURCE and e.kind == "ws/proxy_error"]
    assert len(errors) == 1 and "cannot listen on 127.0.0.1:" in errors[0], errors
