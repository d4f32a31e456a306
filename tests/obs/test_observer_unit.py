"""Observer pieces that need no OBS: password sources, redaction, allow-list, 5.1-5.5 differences."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from monitor.obs import free_tcp_port
from monitor.observers.obs_client import (
    ALLOWED_REQUESTS,
    ObsConnectionLost,
    ObsRequestFailed,
    ReadOnlyRequester,
    load_password,
    scrub,
)
from monitor.observers.obs_snapshot import Capabilities, take_snapshot


def test_password_from_env_var_then_dotenv(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    env = tmp_path / ".env"
    env.write_text("# comment\nOTHER=x\nexport TALLY_OBS_PASSWORD='s3cret=with=equals'\n")
    monkeypatch.delenv("TALLY_OBS_PASSWORD", raising=False)
    assert load_password(env_file=env) == "s3cret=with=equals"
    monkeypatch.setenv("TALLY_OBS_PASSWORD", "from-env")
    assert load_password(env_file=env) == "from-env"
    monkeypatch.delenv("TALLY_OBS_PASSWORD")
    assert load_password(env_file=tmp_path / "missing.env") == ""
    env.write_bytes(b"\xff\xfe garbage")
    assert load_password(env_file=env) == ""


def test_scrub_hides_secret_values_only() -> None:
    data = {"password": "p", "settings": {"server_password": "q", "key_color": 65280,
                                          "list": [{"stream_key": "k", "url": "u"}]}}
    assert scrub(data) == {"password": "***", "settings": {"server_password": "***", "key_color": 65280,
                                                          "list": [{"stream_key": "***", "url": "u"}]}}


def test_allow_list_is_reads_only() -> None:
    assert all(name.startswith("Get") for name in ALLOWED_REQUESTS)
    assert "GetStreamServiceSettings" not in ALLOWED_REQUESTS
    assert not {"SetCurrentProgramScene", "SetInputMute", "StartStream", "CallVendorRequest",
                "TriggerHotkeyByName", "Sleep"} & ALLOWED_REQUESTS


def test_obsws_connection_log_never_shows_password(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    # obsws-python's own loggers: another test in this process may have quietened them (the focus
    # responder sets them to WARNING), and caplog.set_level alone sets only the root logger
    for name in ("obsws_python", "obsws_python.baseclient", "obsws_python.baseclient.ObsClient"):
        caplog.set_level(logging.DEBUG, logger=name)
    secret = "do-not-log-me-123"
    with pytest.raises(ObsConnectionLost) as err:
        ReadOnlyRequester("127.0.0.1", free_tcp_port(), secret, timeout_s=1)
    assert "Connecting with parameters" in caplog.text       # obsws-python did log its parameters
    assert secret not in caplog.text and secret not in str(err.value)
    assert "password='***'" in caplog.text


def test_capabilities_by_version() -> None:
    old = Capabilities.from_version({"obsVersion": "29.0.2", "obsWebSocketVersion": "5.1.0", "rpcVersion": 1})
    new = Capabilities.from_version({"obsVersion": "31.0.0", "obsWebSocketVersion": "5.5.4", "rpcVersion": 1,
                                     "availableRequests": ["GetSceneList"]})
    assert not old.has_uuids and not old.has_filter_settings_event and old.can("GetSceneItemList")
    assert new.has_uuids and new.has_filter_settings_event
    assert new.can("GetSceneList") and not new.can("GetSceneItemList")
    mid = Capabilities.from_version({"obsWebSocketVersion": "5.3.4"})
    assert not mid.has_uuids and not mid.has_filter_settings_event       # both arrived in 5.4.0


class FakeRequester:
    """Canned obs-websocket 5.5 answers (uuids everywhere) to check the snapshot's tolerance."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def request(self, name: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
        self.calls.append(name)
        if name == "GetSceneList":
            return {"currentProgramSceneName": "B", "currentProgramSceneUuid": "ub",
                    "currentPreviewSceneName": None,
                    "scenes": [{"sceneIndex": 1, "sceneName": "B", "sceneUuid": "ub"},
                               {"sceneIndex": 0, "sceneName": "A", "sceneUuid": "ua"}]}
        if name == "GetSceneItemList":
            return {"sceneItems": [{"sceneItemId": 1, "sceneItemIndex": 0, "sourceName": "Cam",
                                    "sourceUuid": "uc", "sceneItemEnabled": True,
                                    "sceneItemTransform": {"boundsType": "OBS_BOUNDS_SCALE_INNER",
                                                           "boundsWidth": 480.0, "boundsHeight": 270.0}}]}
        if name == "GetInputList":
            return {"inputs": [{"inputName": "Cam", "inputUuid": "uc", "inputKind": "v4l2_input"}]}
        if name == "GetInputSettings":
            return {"inputSettings": {"device_id": "/dev/video0", "password": "nope"}}
        if name in ("GetInputMute",):
            raise ObsRequestFailed(name, 604, "The specified input does not support audio.")
        if name == "GetStats":
            return {"renderTotalFrames": 10}
        return {}


def test_snapshot_tolerates_ws55_answers_and_skips_unavailable_requests() -> None:
    caps = Capabilities("31.0.0", "5.5.4", 1, frozenset(ALLOWED_REQUESTS - {"GetSceneSceneTransitionOverride",
                                                                         "GetReplayBufferStatus"}))
    req = FakeRequester()
    snap = take_snapshot(req, caps)  # type: ignore[arg-type]
    # obs-websocket numbers scenes from the bottom of the UI list and returns them reversed:
    # the highest sceneIndex is the first scene in the UI (and in the saved scene_order)
    assert [s["name"] for s in snap["scenes"]] == ["B", "A"]
    assert snap["scenes"][0]["uuid"] == "ub"
    item = snap["scenes"][1]["items"][0]
    assert item["source_uuid"] == "uc" and item["transform"]["bounds_type"] == 2
    assert snap["inputs"]["Cam"]["uuid"] == "uc" and "muted" not in snap["inputs"]["Cam"]
    assert snap["inputs"]["Cam"]["settings"]["password"] == "***"
    assert "GetSceneSceneTransitionOverride" not in req.calls and "GetReplayBufferStatus" not in req.calls
    assert snap["replay_buffer"] is None and snap["stats"]["renderTotalFrames"] == 10


async def test_observer_without_obs_reports_gap_and_stops_promptly() -> None:
    import asyncio

    from monitor.bus import EventBus
    from monitor.observers.obs import ObsObserver

    bus = EventBus()
    events: list[Any] = []
    bus.add_sink(events.append)
    obs = ObsObserver(bus, port=free_tcp_port(), password="unused-secret", env_file=None,
                      reconnect_min_s=3.0, reconnect_max_s=5.0)
    task = asyncio.create_task(obs.run())
    await asyncio.sleep(0.5)                    # first attempt refused; now in a 3 s backoff
    assert not task.done()
    gaps = [e for e in events if e.kind == "gap"]
    assert len(gaps) == 1 and gaps[0].payload["phase"] == "start"
    assert "ConnectionRefusedError" in gaps[0].payload["reason"]
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await obs.stop()
    await asyncio.wait_for(task, 2.0)
    obs.close()
    assert loop.time() - t0 < 1.0               # stop() cuts the backoff sleep short
    assert all("unused-secret" not in e.to_json() for e in events)
