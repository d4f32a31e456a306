"""The launcher against a real OBS 29 under Xvfb: starts, answers, saves on SIGINT, fails clearly."""

from __future__ import annotations

import json
import os
import shutil
import stat

import obsws_python as obs
import pytest

from monitor.obs import ObsInstance, ObsLaunchError

needs_obs = pytest.mark.skipif(shutil.which("obs") is None or shutil.which("Xvfb") is None,
                               reason="obs-studio and xvfb not installed")

COLLECTION = {
    "name": "Launch Test", "current_scene": "Only", "current_program_scene": "Only",
    "scene_order": [{"name": "Only"}],
    "sources": [{"id": "scene", "versioned_id": "scene", "name": "Only",
                 "settings": {"items": [], "id_counter": 0, "custom_size": False}}],
}


@pytest.mark.obs
@needs_obs
def test_launch_connect_getversion_stop_saves() -> None:
    with ObsInstance(collection=COLLECTION, ws_password="launch-pw") as inst:
        assert inst.running()
        client = obs.ReqClient(host="127.0.0.1", port=inst.ws_port, password="launch-pw", timeout=5)
        try:
            version = client.get_version()
            assert version.obs_web_socket_version.startswith("5.")
            assert version.rpc_version == 1
            scenes = client.get_scene_list()
            assert [s["sceneName"] for s in scenes.scenes] == ["Only"]
            client.create_scene("Added By Test")
        finally:
            client.disconnect()
        assert inst.stop() == 0
        assert inst.last_stop_method == "x11"       # closed like a user, not by a signal
        assert not inst.running()
        saved = json.loads(inst.collection_path.read_text())
        assert saved["name"] == "Launch Test"
        assert {s["name"] for s in saved["scene_order"]} == {"Only", "Added By Test"}
        # OBS rewrites global.ini (with the password) 0644: the private HOME itself must be 0700
        mode = stat.S_IMODE(os.stat(inst.home).st_mode)
        assert mode & 0o077 == 0
        home = inst.home
    assert not home.exists()


def test_missing_binary_is_a_clear_error() -> None:
    with pytest.raises(ObsLaunchError, match="not found on PATH"):
        ObsInstance(obs_binary="tally-no-such-obs").start()


@needs_obs
def test_obs_dying_at_start_reports_log_tail(tmp_path) -> None:
    fake = tmp_path / "fake-obs"
    fake.write_text("#!/bin/sh\necho 'fake obs: cannot open display for reasons' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(ObsLaunchError) as err, ObsInstance(obs_binary=str(fake), start_timeout_s=10):
        pass
    assert "exited at start with code 3" in str(err.value)
    assert "cannot open display for reasons" in str(err.value)


@pytest.mark.obs
@needs_obs
@pytest.mark.skipif(shutil.which("openbox") is None, reason="openbox not installed")
async def test_async_launch_with_window_manager() -> None:
    from Xlib import X
    from Xlib import display as xdisplay

    async with ObsInstance(window_manager=True) as inst:
        assert inst.running() and inst.version["obsWebSocketVersion"].startswith("5.")
        d = xdisplay.Display(inst.display)
        try:
            check = d.screen().root.get_full_property(d.intern_atom("_NET_SUPPORTING_WM_CHECK"), X.AnyPropertyType)
            assert check is not None                       # an EWMH window manager is running
        finally:
            d.close()
        assert await inst.astop() == 0
        assert inst.last_stop_method == "x11"       # found the reparented window
    assert not inst.running()
