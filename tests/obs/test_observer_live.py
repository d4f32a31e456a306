"""The OBS observer against a real OBS 29 (obs-websocket 5.1) under Xvfb.

One OBS per module. A separate test-only obsws-python client plays the agent / the T17 control
script: it builds the T01 "Weekly Stream" collection, toggles mute, switches scenes. The observer
must see all of it, read-only, and survive OBS being killed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import obsws_python as obsws
import pytest

from monitor.bus import EventBus
from monitor.events import Event
from monitor.obs import ObsInstance
from monitor.observers.obs import ObsObserver
from monitor.observers.obs_client import ReadOnlyRequester, ReadOnlyViolation
from monitor.observers.obs_consistency import compare
from verifiers.apps.obs import item_rect, load_collection

pytestmark = [
    pytest.mark.obs,
    pytest.mark.skipif(shutil.which("obs") is None or shutil.which("Xvfb") is None,
                       reason="obs-studio and xvfb not installed"),
]

PASSWORD = "pw-" + secrets.token_hex(8)
START_COLLECTION = {
    "name": "Weekly Stream", "current_scene": "Starting Soon", "current_program_scene": "Starting Soon",
    "scene_order": [{"name": "Starting Soon"}],
    "sources": [{"id": "scene", "versioned_id": "scene", "name": "Starting Soon",
                 "settings": {"items": [], "id_counter": 0, "custom_size": False}}],
}


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("media")
    (root / "bg").mkdir()
    (root / "overlay").mkdir()
    cv2.imwrite(str(root / "bg" / "starting.png"), np.full((1080, 1920, 3), (80, 40, 20), np.uint8))
    cv2.imwrite(str(root / "bg" / "brb.png"), np.full((1080, 1920, 3), (20, 40, 80), np.uint8))
    frame = np.zeros((1080, 1920, 4), np.uint8)
    frame[:24, :, :] = frame[-24:, :, :] = frame[:, :24, :] = frame[:, -24:, :] = (255, 255, 255, 255)
    cv2.imwrite(str(root / "overlay" / "frame.png"), frame)
    return root


@pytest.fixture(scope="module")
def obs_inst(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ObsInstance]:
    rec_dir = tmp_path_factory.mktemp("recordings")
    basic = {"Video": {"OutputCX": "640", "OutputCY": "360", "FPSInt": "15"},
             "SimpleOutput": {"FilePath": str(rec_dir), "RecFormat": "mkv", "RecQuality": "Stream",
                              "VBitrate": "500"}}
    with ObsInstance(collection=START_COLLECTION, ws_password=PASSWORD, profile={"basic.ini": basic}) as inst:
        yield inst


def test_client(inst: ObsInstance) -> obsws.ReqClient:
    return obsws.ReqClient(host="127.0.0.1", port=inst.ws_port, password=PASSWORD, timeout=5)


test_client.__test__ = False  # type: ignore[attr-defined]


def build_t01(c: obsws.ReqClient, media: Path) -> None:
    """What the T17 control script does: three scenes, sources, Cam transform, Fade 300 ms."""
    def send(req: str, data: dict[str, Any] | None = None) -> Any:
        return c.send(req, data, raw=True)

    send("CreateInput", {"sceneName": "Starting Soon", "inputName": "Starting BG", "inputKind": "image_source",
                         "inputSettings": {"file": str(media / "bg" / "starting.png")}})
    send("CreateInput", {"sceneName": "Starting Soon", "inputName": "Countdown",
                         "inputKind": "text_ft2_source_v2", "inputSettings": {"text": "Starting in 5:00"}})
    send("CreateScene", {"sceneName": "Live"})
    send("CreateInput", {"sceneName": "Live", "inputName": "Display", "inputKind": "color_source_v3",
                         "inputSettings": {"color": 0xFF303030, "width": 1920, "height": 1080}})
    cam = send("CreateInput", {"sceneName": "Live", "inputName": "Cam", "inputKind": "color_source_v3",
                               "inputSettings": {"color": 0xFF00A000, "width": 1920, "height": 1080}})
    send("SetSceneItemTransform", {"sceneName": "Live", "sceneItemId": cam["sceneItemId"], "sceneItemTransform": {
        "boundsType": "OBS_BOUNDS_SCALE_INNER", "boundsWidth": 480.0, "boundsHeight": 270.0,
        "positionX": 1416.0, "positionY": 786.0, "alignment": 5}})
    send("CreateInput", {"sceneName": "Live", "inputName": "Frame", "inputKind": "image_source",
                         "inputSettings": {"file": str(media / "overlay" / "frame.png")}})
    send("CreateScene", {"sceneName": "BRB"})
    send("CreateInput", {"sceneName": "BRB", "inputName": "BRB BG", "inputKind": "image_source",
                         "inputSettings": {"file": str(media / "bg" / "brb.png")}})
    send("CreateInput", {"sceneName": "BRB", "inputName": "Mic", "inputKind": "ffmpeg_source",
                         "inputSettings": {"is_local_file": True, "local_file": ""}})
    send("SetInputMute", {"inputName": "Mic", "inputMuted": True})
    send("SetCurrentSceneTransition", {"transitionName": "Fade"})
    send("SetCurrentSceneTransitionDuration", {"transitionDuration": 300})
    send("SetCurrentProgramScene", {"sceneName": "Live"})


class Recorder:
    """Collects the observer's events from the bus and waits for the ones a test needs."""

    def __init__(self, bus: EventBus) -> None:
        self.events: list[Event] = []
        self._new = asyncio.Event()
        bus.add_sink(self._sink)

    def _sink(self, e: Event) -> None:
        self.events.append(e)
        self._new.set()

    async def wait(self, pred: Callable[[Event], bool], timeout_s: float = 20.0, after: int = 0) -> Event:
        deadline = time.monotonic() + timeout_s
        seen = after
        while True:
            for e in self.events[seen:]:
                if pred(e):
                    return e
            seen = len(self.events)
            left = deadline - time.monotonic()
            if left <= 0:
                kinds = [(e.kind, e.payload.get("type") or e.payload.get("reason") or e.payload.get("phase"))
                         for e in self.events[-30:]]
                raise AssertionError(f"timed out; last events: {kinds}")
            self._new.clear()
            try:
                await asyncio.wait_for(self._new.wait(), left)
            except TimeoutError:
                pass


async def start_observer(inst: ObsInstance, **kw: Any) -> tuple[ObsObserver, Recorder, asyncio.Task[None]]:
    bus = EventBus()
    rec = Recorder(bus)
    obs = ObsObserver(bus, port=inst.ws_port, password=PASSWORD, env_file=None, **kw)
    task = asyncio.create_task(obs.run())
    await rec.wait(lambda e: e.kind == "snapshot")
    return obs, rec, task


async def stop_observer(obs: ObsObserver, task: asyncio.Task[None]) -> None:
    await obs.stop()
    await asyncio.wait_for(task, 10)
    obs.close()


def is_ws_event(etype: str, **data: Any) -> Callable[[Event], bool]:
    return lambda e: (e.kind == "event" and e.payload["type"] == etype
                      and all(e.payload["data"].get(k) == v for k, v in data.items()))


async def test_t01_built_live_then_saved_parses_and_agrees(obs_inst: ObsInstance, media: Path,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    obs, rec, task = await start_observer(obs_inst, snapshot_interval_s=30, stats_interval_s=30)
    assert rec.events[0].kind == "connected" and rec.events[0].payload["ws_version"].startswith("5.")
    client = await asyncio.to_thread(test_client, obs_inst)
    try:
        await asyncio.to_thread(build_t01, client, media)
    finally:
        client.disconnect()
    await rec.wait(is_ws_event("CurrentProgramSceneChanged", sceneName="Live"))

    def complete(e: Event) -> bool:
        st = e.payload.get("state", {})
        return (e.kind == "snapshot" and st.get("current_program_scene") == "Live"
                and st.get("inputs", {}).get("Mic", {}).get("muted") is True
                and st.get("transition", {}).get("duration_ms") == 300)
    snap = await rec.wait(complete)
    live = snap.payload["state"]
    assert PASSWORD not in repr(obs)
    await stop_observer(obs, task)

    rc = obs_inst.stop()                            # SIGINT: OBS saves the collection
    try:
        assert rc == 0, f"OBS exit code {rc} on SIGINT\n{obs_inst.hang_report}\n{obs_inst.log_tail(5)}"
        check_saved_t01(obs_inst, live, rec, caplog)
    finally:
        obs_inst.start()                            # the rest of the module continues on the saved state


def check_saved_t01(obs_inst: ObsInstance, live: dict[str, Any], rec: Recorder,
                    caplog: pytest.LogCaptureFixture) -> None:
    coll = load_collection(obs_inst.collection_path)
    assert list(coll.scene_order) == ["Starting Soon", "Live", "BRB"]
    assert coll.scene("Starting Soon").item_names() == ["Starting BG", "Countdown"]
    assert coll.scene("Live").item_names() == ["Display", "Cam", "Frame"]
    assert coll.scene("BRB").item_names() == ["BRB BG", "Mic"]
    cam = item_rect(coll, "Live", "Cam", canvas_px=(1920, 1080))
    assert cam is not None and cam.as_tuple() == pytest.approx((1416, 786, 480, 270), abs=0.5)
    assert coll.scene("Live").is_topmost("Frame")
    frame_rect = item_rect(coll, "Live", "Frame")
    assert frame_rect is not None and frame_rect.as_tuple() == (0, 0, 1920, 1080)   # read from the PNG header
    assert coll.source("Mic").muted and not coll.source("Cam").muted
    assert coll.current_transition == "Fade" and coll.transition_duration_ms == 300
    assert coll.current_program_scene == "Live"

    # the live snapshot and the saved file agree; the live Cam rectangle matches the file's
    assert compare(live, coll) == []
    live_cam = next(it for s in live["scenes"] if s["name"] == "Live" for it in s["items"]
                    if it["source_name"] == "Cam")
    assert (live_cam["source_w_px"], live_cam["source_h_px"]) == (1920, 1080)
    assert live_cam["index"] == 1 and live_cam["transform"]["bounds_type"] == 2

    # an outside edit of the saved file shows up as a difference
    raw = json.loads(obs_inst.collection_path.read_text())
    live_scene = next(s for s in raw["sources"] if s["name"] == "Live")
    next(it for it in live_scene["settings"]["items"] if it["name"] == "Cam")["pos"]["x"] = 100.0
    edited = obs_inst.home / "edited.json"     # not under basic/scenes: OBS must not load it
    edited.write_text(json.dumps(raw))
    diffs = compare(live, load_collection(edited))
    assert [d.path for d in diffs] == ["scene 'Live' / item 'Cam' / transform"]

    # the password never reached events or logs
    blob = "\n".join(e.to_json() for e in rec.events)
    assert PASSWORD not in blob and PASSWORD not in caplog.text


async def test_mute_and_scene_changes_arrive_with_receipt_times(obs_inst: ObsInstance) -> None:
    obs, rec, task = await start_observer(obs_inst, snapshot_interval_s=30, stats_interval_s=30)
    client = await asyncio.to_thread(test_client, obs_inst)
    try:
        start_mark = len(rec.events)
        t0 = time.monotonic_ns()
        await asyncio.to_thread(client.send, "SetInputMute", {"inputName": "Mic", "inputMuted": False})
        unmute = await rec.wait(is_ws_event("InputMuteStateChanged", inputName="Mic", inputMuted=False),
                                after=start_mark)
        await asyncio.to_thread(client.send, "SetCurrentProgramScene", {"sceneName": "BRB"})
        scene = await rec.wait(is_ws_event("CurrentProgramSceneChanged", sceneName="BRB"), after=start_mark)
        await asyncio.to_thread(client.send, "SetInputMute", {"inputName": "Mic", "inputMuted": True})
        mute = await rec.wait(is_ws_event("InputMuteStateChanged", inputName="Mic", inputMuted=True),
                              after=start_mark)
        t1 = time.monotonic_ns()
    finally:
        client.disconnect()
    receipts = [e.payload["receipt_mono_ns"] for e in (unmute, scene, mute)]
    assert t0 < receipts[0] < receipts[1] < receipts[2] < t1
    assert all(e.mono_ns == e.payload["receipt_mono_ns"] for e in (unmute, scene, mute))
    assert all(abs(e.payload["receipt_wall"] - time.time()) < 60 for e in (unmute, scene, mute))
    snap = await rec.wait(lambda e: e.kind == "snapshot" and e.payload["reason"] == "change"
                          and e.payload["state"]["current_program_scene"] == "BRB"
                          and e.payload["state"]["inputs"]["Mic"]["muted"] is True, after=start_mark)
    assert snap.seq > mute.seq
    await stop_observer(obs, task)


async def test_stats_frame_counters_advance_and_filters_are_polled(obs_inst: ObsInstance) -> None:
    obs, rec, task = await start_observer(obs_inst, snapshot_interval_s=1.0, stats_interval_s=0.5,
                                          filter_poll_s=0.5)
    first = await rec.wait(lambda e: e.kind == "stats")
    periodic = await rec.wait(lambda e: e.kind == "snapshot" and e.payload["reason"] == "periodic")
    assert periodic.payload["state"]["stats"]["renderTotalFrames"] > 0
    assert first.payload["stream"]["outputActive"] is False and first.payload["record"]["outputActive"] is False
    # output frames only count while an output runs: the test-only client records a few seconds
    client = await asyncio.to_thread(test_client, obs_inst)
    try:
        await asyncio.to_thread(client.send, "StartRecord")
        rec_a = await rec.wait(lambda e: e.kind == "stats" and e.payload["record"]["outputActive"]
                               and e.payload["stats"]["outputTotalFrames"] > 0)
        rec_b = await rec.wait(lambda e: e.kind == "stats" and e.seq > rec_a.seq
                               and e.payload["stats"]["outputTotalFrames"] > rec_a.payload["stats"]["outputTotalFrames"])
        await asyncio.to_thread(client.send, "StopRecord")
    finally:
        client.disconnect()
    a, b = rec_a.payload["stats"], rec_b.payload["stats"]
    assert b["renderTotalFrames"] > a["renderTotalFrames"] > first.payload["stats"]["renderTotalFrames"]
    assert b["outputTotalFrames"] > a["outputTotalFrames"] > 0
    assert rec_b.payload["record"]["outputDuration"] >= rec_a.payload["record"]["outputDuration"]
    # 5.1 sends no event for a filter settings change: the poll must notice it
    client = await asyncio.to_thread(test_client, obs_inst)
    try:
        await asyncio.to_thread(client.send, "CreateSourceFilter", {
            "sourceName": "Mic", "filterName": "Gain", "filterKind": "gain_filter", "filterSettings": {"db": 3.0}})
        mark = len(rec.events)
        await asyncio.to_thread(client.send, "SetSourceFilterSettings", {
            "sourceName": "Mic", "filterName": "Gain", "filterSettings": {"db": 7.5}})
    finally:
        client.disconnect()
    changed = await rec.wait(lambda e: e.kind == "filters_changed" and e.payload["source"] == "Mic"
                             and e.payload["after"][0]["filterSettings"].get("db") == 7.5, after=mark)
    assert changed.payload["after"][0]["filterKind"] == "gain_filter"
    await stop_observer(obs, task)


async def test_mutating_requests_are_refused_before_sending(obs_inst: ObsInstance) -> None:
    # the observer's background work (a change snapshot after some OBS event, a poll) may send
    # frames at any moment, more so on a busy machine (94 frames where 48 were expected, twice):
    # what is counted is frames per request type, and no refused type may ever reach the wire
    obs, rec, task = await start_observer(obs_inst, snapshot_interval_s=30, stats_interval_s=30, filter_poll_s=30)
    req = obs._req
    assert req is not None
    sent_before = dict(req.sent_by_type)
    refused = ("SetCurrentProgramScene", "SetInputMute", "GetStreamServiceSettings")
    client = await asyncio.to_thread(test_client, obs_inst)
    try:
        before = (await asyncio.to_thread(client.send, "GetCurrentProgramScene", None, True))["currentProgramSceneName"]
        target = "Starting Soon" if before != "Starting Soon" else "Live"
        with pytest.raises(ReadOnlyViolation):
            await obs.request("SetCurrentProgramScene", {"sceneName": target})
        with pytest.raises(ReadOnlyViolation):
            await asyncio.to_thread(req.request, "SetInputMute", {"inputName": "Mic", "inputMuted": False})
        with pytest.raises(ReadOnlyViolation):
            await obs.request("GetStreamServiceSettings")      # carries the stream key: not allowed either
        assert not any(req.sent_by_type[name] for name in refused)  # nothing went on the wire
        await asyncio.sleep(0.5)
        after = (await asyncio.to_thread(client.send, "GetCurrentProgramScene", None, True))["currentProgramSceneName"]
        assert after == before
        assert not any(e.kind == "event" and e.payload["type"] == "CurrentProgramSceneChanged"
                       for e in rec.events)
        assert [e.payload["request"] for e in rec.events if e.kind == "refused"] == [
            "SetCurrentProgramScene", "GetStreamServiceSettings"]
        version = await obs.request("GetVersion")            # allowed reads still work
        assert version["obsVersion"].startswith(("29", "30", "31"))
        assert req.sent_by_type["GetVersion"] == sent_before.get("GetVersion", 0) + 1
        assert not any(req.sent_by_type[name] for name in refused)
    finally:
        client.disconnect()
    await stop_observer(obs, task)
    standalone = await asyncio.to_thread(ReadOnlyRequester, "127.0.0.1", obs_inst.ws_port, PASSWORD)
    with pytest.raises(ReadOnlyViolation):
        standalone.request("RemoveScene", {"sceneName": "BRB"})
    assert standalone.frames_sent == 0
    standalone.close()


async def test_obs_killed_gap_then_reconnect(obs_inst: ObsInstance) -> None:
    obs, rec, task = await start_observer(obs_inst, snapshot_interval_s=30, stats_interval_s=0.5,
                                          reconnect_min_s=0.2, reconnect_max_s=1.0)
    mark = len(rec.events)
    await asyncio.to_thread(obs_inst.kill)
    gap = await rec.wait(lambda e: e.kind == "gap" and e.payload["phase"] == "start", after=mark)
    await asyncio.sleep(1.5)                        # several failed reconnect attempts
    assert not task.done()
    assert not obs.connected.is_set()
    await asyncio.to_thread(obs_inst.start)
    end = await rec.wait(lambda e: e.kind == "gap" and e.payload["phase"] == "end", after=mark)
    assert end.payload["attempts"] >= 2 and end.payload["duration_s"] > 1.0
    snap = await rec.wait(lambda e: e.kind == "snapshot" and e.payload["reason"] == "reconnect", after=mark)
    assert [s["name"] for s in snap.payload["state"]["scenes"]] == ["Starting Soon", "Live", "BRB"]
    assert gap.seq < end.seq < snap.seq
    await rec.wait(lambda e: e.kind == "stats", after=snap.seq)   # polling resumed
    assert obs.reconnects == 1
    await stop_observer(obs, task)
