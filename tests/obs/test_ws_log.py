"""obs-websocket's request log, followed in OBS's log file (monitor/observers/obs_log.py).

Unit tests feed hand-written lines in the shape OBS 29 / obs-websocket 5.1 writes them. The real
test starts OBS (with --websocket_debug, the launcher's default), runs tally's observer and a
"build_scenes.py" client side by side, and checks that the follower names the script's requests,
keeps tally's apart, leaks no secret, and that T17 scored on those events passes its gate while the
same run with only tally's connection fails it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.bus import EventBus
from monitor.events import Event
from monitor.observers.obs_log import ObsLogFollower, WsLogParser, newest_log
from tests.streaming.real_obs import build_weekly_stream, save_obs_config, weekly_obs

T = "10:00:00.000: "


HEADS = {"in": "[obs-websocket] [debug] [WebSocketServer::onMessage] Incoming message (decoded):",
         "out": "[obs-websocket] [debug] [WebSocketServer::onMessage] Outgoing message:",
         "event": "[obs-websocket] [WebSocketServer::BroadcastEvent] Outgoing event:"}


def block(obj: dict[str, Any], ts: str = T, kind: str = "in") -> list[str]:
    """A message as obs-websocket logs it: header, then json.dump(2) one line at a time."""
    return [ts + HEADS[kind]] + [ts + ln for ln in json.dumps(obj, indent=2, sort_keys=True).splitlines()]


def reply(rtype: str, rid: Any, ok: bool = True, ts: str = T, data: dict[str, Any] | None = None) -> list[str]:
    d: dict[str, Any] = {"requestId": rid, "requestStatus": {"code": 100 if ok else 600, "result": ok},
                         "requestType": rtype}
    if data is not None:
        d["responseData"] = data
    return block({"op": 7, "d": d}, ts, "out")


def event(etype: str, data: dict[str, Any], ts: str = T) -> list[str]:
    return block({"op": 5, "d": {"eventData": data, "eventIntent": 8, "eventType": etype}}, ts, "event")


def connect(port: int) -> str:
    return f"{T}[obs-websocket] [WebSocketServer::onOpen] New WebSocket client has connected from [::ffff:127.0.0.1]:{port}"


def disconnect(port: int) -> str:
    return (f"{T}[obs-websocket] [WebSocketServer::onClose] WebSocket client `[::ffff:127.0.0.1]:{port}` has "
            "disconnected with code `1000` and reason: ")


def parse(lines: list[str]) -> list[tuple[str, dict[str, Any]]]:
    p = WsLogParser()
    out = [ev for ln in lines for ev in p.feed(ln)]
    return out + p.close()


def test_sessions_requests_and_attribution() -> None:
    lines = [connect(50001), *block({"op": 1, "d": {"rpcVersion": 1, "eventSubscriptions": 0,
                                                   "authentication": "SECRET-HASH="}}),
             *block({"op": 6, "d": {"requestType": "GetSceneList", "requestId": "tally-1"}}),
             *reply("GetSceneList", "tally-1"),
             connect(50010), *block({"op": 1, "d": {"rpcVersion": 1, "eventSubscriptions": 33}}),
             *block({"op": 6, "d": {"requestType": "CreateInput", "requestId": 17, "requestData": {
                 "sceneName": "Live", "inputName": "Cam", "inputKind": "v4l2_input",
                 "inputSettings": {"stream_key": "SECRET-KEY"}}}}),
             f"{T}User added source 'Cam' (v4l2_input) to scene 'Live'",
             *reply("CreateInput", 17, ok=False),
             disconnect(50010)]
    evs = parse(lines)
    kinds = [k for k, _ in evs]
    assert kinds == ["ws/client_connected", "ws/client_identified", "ws/request", "ws/client_connected",
                     "ws/client_identified", "ws/request", "ws/client_disconnected"]
    assert evs[0][1]["remote"] == "127.0.0.1:50001" and evs[0][1]["session"] == 1
    assert evs[1][1]["session"] == 1 and evs[1][1]["event_subscriptions"] == 0
    assert evs[2][1]["client"] == "tally" and evs[2][1]["request_type"] == "GetSceneList"
    assert evs[4][1]["session"] == 2 and evs[4][1]["event_subscriptions"] == 33
    req = evs[5][1]
    assert (req["client"], req["request_type"], req["request_id"]) == ("other", "CreateInput", 17)
    assert (evs[2][1]["ok"], evs[2][1]["code"], req["ok"], req["code"]) == (True, 100, False, 600)   # from the replies
    assert req["names"] == {"sceneName": "Live", "inputName": "Cam", "inputKind": "v4l2_input"}
    assert evs[6][1] == {"session": 2, "remote": "127.0.0.1:50010", "code": 1000, "log_time": "10:00:00.000"}
    assert "SECRET" not in json.dumps(evs)


def test_batch_cut_off_block_and_foreign_line_inside_a_block() -> None:
    batch = block({"op": 8, "d": {"requestId": "b1", "requests": [
        {"requestType": "CreateScene", "requestData": {"sceneName": "BRB"}},
        {"requestType": "SetInputMute", "requestData": {"inputName": "Mic", "inputMuted": True}}]}})
    big = block({"op": 6, "d": {"requestType": "SetInputSettings", "requestId": 9,
                                "requestData": {"inputName": "Big", "inputSettings": {"text": "x" * 9000}}}})
    # OBS cuts a message at 8 KiB: keys are sorted, so requestId/requestType after requestData are lost
    cut = "\n".join(big)[:8191].split("\n")
    small_cut = block({"op": 6, "d": {"requestType": "SetInputSettings", "requestId": 11,
                                      "requestData": {"inputName": "Small"}}})[:-3]
    mixed = block({"op": 6, "d": {"requestType": "CreateScene", "requestId": 10, "requestData": {"sceneName": "Live"}}})
    mixed.insert(3, f"{T}User added scene 'Live'")          # another thread's line lands inside the block
    t2, t3, t4 = "10:00:02.000: ", "10:00:04.000: ", "10:00:06.000: "
    cut = [t2 + ln[len(T):] for ln in cut]              # later messages: the earlier ones fall due
    small_cut = [t3 + ln[len(T):] for ln in small_cut]
    mixed = [t4 + ln[len(T):] for ln in mixed]
    evs = parse(batch + cut + small_cut + mixed + [f"{t4}Settings changed (video, outputs)"])
    reqs = [p for k, p in evs if k == "ws/request"]
    assert [(r["request_type"], r["batch"]) for r in reqs] == [
        ("CreateScene", True), ("SetInputMute", True), (None, False), ("SetInputSettings", False),
        ("CreateScene", False)]
    assert {r["ok"] for r in reqs} == {None}             # no reply logged
    assert reqs[0]["names"] == {"sceneName": "BRB"} and reqs[0]["request_id"] == "b1"
    assert reqs[2]["truncated"] is True and reqs[2]["client"] == "unknown" and reqs[2]["names"] == {"inputName": "Big"}
    assert "x" * 50 not in json.dumps(reqs[2])
    assert reqs[3]["truncated"] is True and reqs[3]["request_id"] == 11 and reqs[3]["client"] == "other"
    assert "truncated" not in reqs[4] and reqs[4]["names"] == {"sceneName": "Live"}
    assert ("ui/settings_changed", {"changed": ["video", "outputs"], "log_time": "10:00:06.000"}) in evs


def _thread_messages(n: int, stamp_base_ms: int) -> tuple[list[list[str]], list[tuple[str, int, str, bool]]]:
    """Request/event/reply messages as one obs-websocket pool thread writes them, each message with
    its own stamp (OBS stamps all lines of a message with one time); plus what should be reported."""
    msgs, want = [], []
    for i in range(n):
        ms = stamp_base_ms + 7 * i
        ts = f"10:00:{ms // 1000:02d}.{ms % 1000:03d}: "
        rid, name, ok = stamp_base_ms + i, f"Src {stamp_base_ms}-{i}", i % 3 != 2
        msgs.append(block({"op": 6, "d": {"requestId": rid, "requestType": "CreateInput", "requestData": {
            "inputKind": "image_source", "inputName": name, "inputSettings": {"file": "/x.png"},
            "sceneName": "Live"}}}, ts))
        msgs.append(event("InputCreated", {"inputName": name, "inputSettings": {}}, ts))
        msgs.append(reply("CreateInput", rid, ok, ts, {"sceneItemId": i}))
        want.append(("CreateInput", rid, name, ok))
    return msgs, want


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2), min_size=1, max_size=400), st.integers(1, 4))
def test_interleaved_message_lines_are_reassembled(order: list[int], n: int) -> None:
    """Three pool threads write their messages line by line, interleaved in any order: every
    request is reported once, with its type, id, names and the reply's verdict."""
    threads, want = [], []
    for t in range(3):
        msgs, w = _thread_messages(n, 1 + 100 * t)
        threads.append([ln for m in msgs for ln in m])
        want += w
    lines, pos = [], [0, 0, 0]
    for t in order + [0, 1, 2] * 200:
        if pos[t] < len(threads[t]):
            lines.append(threads[t][pos[t]])
            pos[t] += 1
    reqs = [p for k, p in parse(lines) if k == "ws/request"]
    got = sorted((r["request_type"], r["request_id"], r["names"]["inputName"], r["ok"]) for r in reqs)
    assert got == sorted(want)


def test_torn_lines_lost_header_and_stuck_reply() -> None:
    """Patterns seen in real OBS 29 logs under load (tests/obs real test): a write that tears a
    line and carries another message's stamped line; a torn piece repeated without a stamp; a
    request whose header was torn away (its reply still reports it); a reply that lost a line
    (it must not take the lines of the next reply, which fit it too)."""
    a = block({"op": 6, "d": {"requestId": 1, "requestType": "CreateScene", "requestData": {"sceneName": "A"}}})
    a_ev = event("SceneCreated", {"isGroup": False, "sceneName": "A"})
    # the event's "},"-line arrives glued to a plain line, and a torn copy of a line follows unstamped
    a_ev[-3] = f"{T}User added scene 'A'" + a_ev[-3]
    lines = a + a_ev[:-1] + ['"op": 5', a_ev[-1]] + reply("CreateScene", 1)
    b = block({"op": 6, "d": {"requestId": 2, "requestType": "CreateInput", "requestData": {"inputName": "B"}}})
    lines += [":00.000: " + b[0][len(T):], *b[1:]]       # the header lost its stamp: still a header
    c = block({"op": 6, "d": {"requestId": 3, "requestType": "SetInputMute", "requestData": {"inputName": "C"}}})
    lines += c[2:] + reply("SetInputMute", 3)           # the header and "{" torn away: only the reply says so
    d_reply = reply("SetInputMute", 4)                 # its '"requestType"' line is written late
    assert d_reply[8].endswith('"requestType": "SetInputMute"')
    d = block({"op": 6, "d": {"requestId": 4, "requestType": "SetInputMute", "requestData": {"inputName": "D"}}})
    e = block({"op": 6, "d": {"requestId": 5, "requestType": "GetSceneItemId", "requestData": {"sceneName": "E"}}})
    lines += d + d_reply[:8] + e + reply("GetSceneItemId", 5) + d_reply[8:]
    reqs = [p for k, p in parse(lines) if k == "ws/request"]
    got = [(r["request_type"], r["request_id"], r["names"], r["ok"], r.get("recovered")) for r in reqs]
    assert ("CreateScene", 1, {"sceneName": "A"}, True, None) in got
    assert ("CreateInput", 2, {"inputName": "B"}, None, None) in got     # no reply logged: reported at the end
    assert ("SetInputMute", 3, {}, True, "reply") in got
    assert ("GetSceneItemId", 5, {"sceneName": "E"}, True, None) in got
    assert [g for g in got if g[1] == 4] == [("SetInputMute", 4, {"inputName": "D"}, True, None)]
    assert len(got) == 5


def test_torn_replies_pair_with_their_request_and_add_no_request() -> None:
    """Seen in real logs: a reply whose requestType line was torn away (type null), one whose id
    was torn (`303` read as `30`), one left with neither: each request is still reported once."""
    def req(rid: int, rtype: str, name: str, ts: str) -> list[str]:
        return block({"op": 6, "d": {"requestId": rid, "requestType": rtype, "requestData": {"inputName": name}}}, ts)

    def bare_reply(d: dict[str, Any], ts: str) -> list[str]:
        return block({"op": 7, "d": {"requestStatus": {"code": 100, "result": True}, **d}}, ts, "out")

    t1, t2, t3 = "10:00:00.100: ", "10:00:00.200: ", "10:00:00.300: "
    lines = (req(303, "CreateInput", "A", t1) + bare_reply({"requestId": 303}, t1)      # no type
             + req(404, "CreateInput", "B", t2) + reply("CreateInput", 40, ts=t2)        # torn id
             + req(505, "SetInputMute", "C", t3) + bare_reply({}, t3))                   # neither
    reqs = [p for k, p in parse(lines) if k == "ws/request"]
    assert [(r["request_type"], r["request_id"], r["names"], r["ok"], r.get("recovered")) for r in reqs] == [
        ("CreateInput", 303, {"inputName": "A"}, True, None), ("CreateInput", 404, {"inputName": "B"}, True, None),
        ("SetInputMute", 505, {"inputName": "C"}, None, None)]


def test_a_connect_line_glued_behind_a_json_line_is_still_read() -> None:
    """A write torn so that an obs-websocket line, with only the tail of its own stamp, lands
    behind a JSON line of another message (`  "op": 1:03.034: [obs-websocket] ...`): the JSON
    line fits the open block, which used to swallow the connect line with it (a CI run under
    load saw two of three connections). The glued line is read; the request after it too."""
    ident = block({"op": 1, "d": {"eventSubscriptions": 0, "rpcVersion": 1}})
    glued = ident[-2] + ":00.034: " + connect(45628)[len(T):]
    scene = block({"op": 6, "d": {"requestId": 7, "requestType": "CreateScene", "requestData": {"sceneName": "S"}}})
    lines = [connect(45616), *ident[:-2], glued, ident[-1], *scene, *reply("CreateScene", 7), disconnect(45628)]
    got = parse(lines)
    assert [p["remote"] for k, p in got if k == "ws/client_connected"] == ["127.0.0.1:45616", "127.0.0.1:45628"]
    assert [p["session"] for k, p in got if k == "ws/client_disconnected"] == [2]
    assert [(p["request_type"], p["ok"]) for k, p in got if k == "ws/request"] == [("CreateScene", True)]


def test_a_reply_later_than_a_second_adds_no_request() -> None:
    """CI on a loaded machine (stop 30): OBS logged a reply more than PENDING_MS after its request,
    so the request had been reported already (ok null) and the reply, matching nothing pending,
    was reported as an 18th request of a 17-request script. Late replies, by log time or wall
    time, whole or with a torn id, add nothing; a reply to a request never seen still counts."""
    def req(rid: int, rtype: str, ts: str) -> list[str]:
        return block({"op": 6, "d": {"requestId": rid, "requestType": rtype, "requestData": {"sceneName": "S"}}}, ts)

    lines = (req(751, "CreateScene", "10:00:00.000: ") + reply("CreateScene", 751, ts="10:00:01.400: ")
             + req(203, "CreateInput", "10:00:02.000: ") + reply("CreateInput", 20, ts="10:00:03.300: ")  # torn id
             + req(17, "SetInputMute", "10:00:04.000: ") + reply("RemoveScene", 99, ts="10:00:05.500: "))
    reqs = [p for k, p in parse(lines) if k == "ws/request"]
    assert [(r["request_type"], r["request_id"], r["ok"], r.get("recovered")) for r in reqs] == [
        ("CreateScene", 751, None, None), ("CreateInput", 203, None, None), ("SetInputMute", 17, None, None),
        ("RemoveScene", 99, True, "reply")]
    p = WsLogParser()                                   # by wall time: the follower's expire()
    assert [ev for ln in req(9, "CreateScene", T) for ev in p.feed(ln, now_s=100.0)] == []
    assert len(p.expire(101.2)) == 1
    assert [ev for ln in reply("CreateScene", 9) for ev in p.feed(ln, now_s=101.5)] == []
    assert p.close() == []
    late = reply("CreateScene", 9, ts="10:00:30.000: ")  # an id reused long after is a new request
    assert [v["recovered"] for ln in late for k, v in p.feed(ln) if k == "ws/request"] == ["reply"]


def test_a_torn_reply_id_pairs_with_its_request_however_late() -> None:
    """A reply with a torn id (`404` read as `40`) logged 300 ms after its request (beyond
    MATCH_BY_TYPE_MS: OBS busy) pairs with the request whose id it starts, not with another."""
    lines = (block({"op": 6, "d": {"requestId": 404, "requestType": "CreateInput", "requestData": {"inputName": "B"}}},
                   "10:00:00.100: ")
             + reply("CreateInput", 40, ts="10:00:00.400: "))
    reqs = [p for k, p in parse(lines) if k == "ws/request"]
    assert [(r["request_type"], r["request_id"], r["names"], r["ok"]) for r in reqs] == [
        ("CreateInput", 404, {"inputName": "B"}, True)]


def test_a_request_without_reply_is_reported_after_a_second() -> None:
    p = WsLogParser()
    lines = block({"op": 6, "d": {"requestId": 9, "requestType": "CreateScene", "requestData": {"sceneName": "S"}}})
    assert [ev for ln in lines for ev in p.feed(ln, now_s=100.0)] == []
    assert p.expire(100.5) == []
    got = p.expire(101.2)
    assert [(k, v["request_type"], v["ok"]) for k, v in got] == [("ws/request", "CreateScene", None)]
    assert p.close() == []                              # reported once
    p = WsLogParser()                                   # the log's own clock does it too
    for ln in lines:
        p.feed(ln)
    assert [v["request_id"] for _, v in p.feed("10:00:01.500: something else")] == [9]


def test_garbage_lines_emit_nothing() -> None:
    junk = ["", "\x00\xff", "{", "}", f"{T}[obs-websocket] [debug] [WebSocketServer::onMessage] Incoming message "
            "(decoded):", f"{T}not json at all", f"{T}  \"op\": \"six\"", "x" * 100_000]
    assert parse(junk) == []


def test_follower_reads_from_end_then_new_log_from_start(tmp_path: Path) -> None:
    bus = EventBus()
    got: list[Event] = []
    bus.add_sink(got.append)
    old = tmp_path / "2026-12-01 10-00-00.txt"
    old.write_text("Command Line Arguments: --websocket_debug\n" + connect(40000) + "\n")
    f = ObsLogFollower(bus, tmp_path)
    f.poll_once()
    assert [(e.kind, e.payload["debug"], e.payload["from_end"]) for e in got] == [("ws/log", True, True)]
    with open(old, "a") as fh:                       # a line arriving in two writes
        fh.write(connect(40001)[:30])
        fh.flush()
        f.poll_once()
        fh.write(connect(40001)[30:] + "\n")
    f.poll_once()
    assert [e.payload.get("remote") for e in got[1:]] == ["127.0.0.1:40001"]   # not 40000: before the run
    time.sleep(0.02)
    new = tmp_path / "2026-12-01 10-05-00.txt"      # OBS restarted: a new file, read from its start
    new.write_text(connect(40002) + "\n" + "\n".join(block({"op": 6, "d": {"requestType": "CreateScene",
                                                                             "requestId": 1}})
                                                       + reply("CreateScene", 1)) + "\n")
    f.poll_once()
    tail = [(e.kind, e.payload.get("remote") or e.payload.get("request_type") or e.payload.get("file")) for e in got[2:]]
    assert tail == [("ws/log", new.name), ("ws/client_connected", "127.0.0.1:40002"), ("ws/request", "CreateScene")]
    assert got[2].payload["debug"] is True and got[2].payload["from_end"] is False   # it holds a [debug] line
    time.sleep(0.02)
    with open(new, "a") as fh:
        fh.write(disconnect(40002) + "\n")
    time.sleep(0.02)
    with open(old, "a") as fh:                       # the old file is newest again (a second OBS): not re-read
        fh.write(connect(40003) + "\n")
    assert newest_log(tmp_path) == old
    n = len(got)
    f.poll_once()
    assert [(e.kind, e.payload.get("remote")) for e in got[n:]] == [("ws/client_disconnected", "127.0.0.1:40002")]


# ---- real OBS ----------------------------------------------------------------------------------

T17 = "R06.12.01.01-T17"


def build_scenes(port: int, password: str, workdir: Path) -> int:
    """What the agent's build_scenes.py does; returns the client's local port."""
    import obsws_python as obsws

    c = obsws.ReqClient(host="127.0.0.1", port=port, password=password, timeout=10)
    try:
        local_port = int(c.base_client.ws.sock.getsockname()[1])
        build_weekly_stream(c, workdir)
    finally:
        c.disconnect()
    return local_port


async def wait_for(pred: Any, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not pred():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.1)


@pytest.mark.obs
@pytest.mark.skipif(shutil.which("obs") is None or shutil.which("Xvfb") is None,
                    reason="obs-studio and xvfb not installed")
async def test_real_obs_script_and_tally_told_apart_and_t17_gate(tmp_path: Path) -> None:
    """(One retry when OBS tore its log beyond repair: tests/app_health.py retry_once_on_torn_log.)"""
    from tests.app_health import retry_once_on_torn_log

    await retry_once_on_torn_log(_script_and_tally_attempt, tmp_path)


async def _script_and_tally_attempt(tmp_path: Path) -> None:
    from monitor.observers.obs import ObsObserver
    from monitor.observers.obs_client import ALLOWED_REQUESTS
    from verifiers.scoring import score_task
    from verifiers.synth import InstanceWriter, load_solution_events, overlay, synth_instance
    os.makedirs(tmp_path, exist_ok=True)

    inst = synth_instance(T17, tmp_path / "inst", seed=7)
    workdir = inst / "workdir"
    password = "pw-" + secrets.token_hex(8)
    bus = EventBus()
    recorded: list[Event] = []
    bus.add_sink(recorded.append)
    solution = tmp_path / "real"
    async with weekly_obs(password) as o:
        follower = ObsLogFollower(bus, o.config_dir / "logs", poll_s=0.1)
        await follower.start()
        observer = ObsObserver(bus, port=o.ws_port, password=password, env_file=None,
                               snapshot_interval_s=30, stats_interval_s=30)
        obs_task = asyncio.create_task(observer.run())
        await wait_for(lambda: any(e.kind == "snapshot" for e in recorded))
        script_port = await asyncio.to_thread(build_scenes, o.ws_port, password, workdir)
        await wait_for(lambda: any(e.kind == "ws/client_disconnected"
                                   and e.payload["remote"].endswith(f":{script_port}") for e in recorded))
        await observer.stop()
        await asyncio.wait_for(obs_task, 10)
        observer.close()
        await follower.stop()
        log_text = "\n".join(p.read_text(errors="replace") for p in (o.config_dir / "logs").glob("*.txt"))
        (tmp_path / "obs-log.txt").write_text(log_text)
        assert await o.astop() == 0
        save_obs_config(o, solution, "Weekly_Stream.json")

    ws = [e for e in recorded if e.source == "obs" and (e.kind.startswith("ws/") or e.kind.startswith("ui/"))]
    logs = [e.payload for e in ws if e.kind == "ws/log"]
    assert logs and logs[0]["debug"] is True and logs[0]["from_end"] is True
    reqs = [e.payload for e in ws if e.kind == "ws/request"]
    script = [r for r in reqs if r["client"] == "other"]
    tally = [r for r in reqs if r["client"] == "tally"]
    script_types = [r["request_type"] for r in script]
    for need in ("CreateScene", "CreateInput", "SetSceneItemTransform", "SetCurrentSceneTransitionDuration"):
        assert need in script_types, script_types
    # OBS 29 tears and interleaves these log lines under load (monitor/observers/obs_log_blocks.py):
    # each of the 7 inputs is reported exactly once; one whose own message was torn beyond repair
    # is still reported (from its reply, or from what was left of it) without names (3 of 378
    # inputs in 54 real runs here), and ~4 % of replies cannot be read (ok null; at worst 13 of
    # 17 replies read)
    inputs = [r for r in script if r["request_type"] == "CreateInput"]
    named = [r["names"]["inputName"] for r in inputs if "inputName" in r["names"]]
    seven = {"Background", "Countdown", "Display Capture", "Cam", "Frame", "BRB Background", "Mic"}
    why = [(r["request_type"], r["names"], r["ok"], r.get("recovered")) for r in script]
    assert len(inputs) == 7 and len(named) == len(set(named)) and set(named) <= seven and len(named) >= 6, why
    assert all(r["ok"] in (True, None) for r in script) and sum(r["ok"] is True for r in script) >= len(script) // 2, why
    assert {"sceneName": "Live", "inputName": "Cam", "inputKind": "v4l2_input"} in [r["names"] for r in script]
    assert tally and {r["request_type"] for r in tally} <= ALLOWED_REQUESTS       # the observer, read-only
    assert "GetVersion" not in script_types      # the launcher's readiness probe predates the run (read from the end)
    conns = {e.payload["remote"]: e.payload["session"] for e in ws if e.kind == "ws/client_connected"}
    assert f"127.0.0.1:{script_port}" in conns and len(conns) >= 3                 # tally's two + the script
    assert not [e for e in ws if e.kind.startswith("ui/")]
    # nothing secret leaves the follower: the password, and the auth hashes/salts OBS logged
    dumped = json.dumps([e.to_dict() for e in ws])
    secrets_logged = re.findall(r'"(?:authentication|challenge|salt)": "([^"]+)"', log_text)
    assert secrets_logged and password not in dumped
    assert not [s for s in secrets_logged if s in dumped]

    events = [e.to_dict() for e in recorded]
    InstanceWriter.write_events(solution, events)
    work = tmp_path / "work"
    overlay(workdir, solution, work)
    rep = score_task(T17, work, inst / "gt", load_solution_events(solution)).to_dict()
    assert rep["score"] >= 99, [(c["name"], c["score"], c["message"]) for c in rep["checks"]]

    only_tally = [e for e in events if not (e["kind"] == "ws/request" and e["payload"]["client"] != "tally")]
    rep = score_task(T17, work, inst / "gt", only_tally).to_dict()
    assert [(c["status"], c["score"]) for c in rep["checks"]] == [("fail", 0.0)] * 3
    assert "only tally's own" in rep["checks"][0]["message"]
    rep = score_task(T17, work, inst / "gt", None).to_dict()
    assert {c["status"] for c in rep["checks"]} == {"error"}
    assert all(c["message"].startswith("no live evidence") for c in rep["checks"])


def test_run_wiring_follows_the_work_dirs_obs_log(tmp_path: Path) -> None:
    """`tally run` for T17 (live: obs) gets the observer and the log follower on obs-studio/logs/."""
    from monitor.run.wiring import LiveOptions, ObsComponent, build_components
    from verifiers.catalog import load_catalog

    task = load_catalog().get(T17)
    comps, _missing = build_components(task, LiveOptions(workdir=tmp_path, bundle_dir=tmp_path / "b",
                                                         obs_url="ws://127.0.0.1:4455"))
    (obs_comp,) = [c for c in comps if isinstance(c, ObsComponent)]
    assert obs_comp.log_dir == tmp_path / "obs-studio" / "logs"
    comps, _missing = build_components(task, LiveOptions(workdir=tmp_path, bundle_dir=tmp_path / "b",
                                                         obs_url="ws://127.0.0.1:4455", obs_log_dir=tmp_path / "x"))
    assert [c.log_dir for c in comps if isinstance(c, ObsComponent)] == [tmp_path / "x"]
