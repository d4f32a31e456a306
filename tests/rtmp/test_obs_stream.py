"""Real OBS Studio 29 (headless, monitor.obs launcher) streams 60 s to the ingest.

The API must show what OBS was configured with: resolution, fps, CBR bitrate, keyframe interval.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import aiohttp
import pytest

from rtmp.api import ApiServer
from tests.rtmp.helpers import decode_errors, running_ingest

pytestmark = [pytest.mark.obs, pytest.mark.slow, pytest.mark.timeout(240),
              pytest.mark.skipif(shutil.which("obs") is None or shutil.which("Xvfb") is None,
                                 reason="needs obs-studio and Xvfb")]

WIDTH, HEIGHT, FPS, KBPS, KEYINT_S = 960, 540, 30, 2500, 2
STREAM_S = 60


def _profile(port: int) -> dict[str, object]:
    return {
        "basic.ini": {
            "Output": {"Mode": "Advanced"},
            "AdvOut": {"Encoder": "obs_x264", "TrackIndex": "1", "ApplyServiceSettings": "false",
                       "Rescale": "false"},
            "Video": {"BaseCX": str(WIDTH), "BaseCY": str(HEIGHT), "OutputCX": str(WIDTH),
                      "OutputCY": str(HEIGHT), "FPSType": "1", "FPSInt": str(FPS)},
        },
        "streamEncoder.json": {"rate_control": "CBR", "bitrate": KBPS, "keyint_sec": KEYINT_S,
                               "preset": "ultrafast", "profile": "main", "tune": ""},
        "service.json": {"type": "rtmp_custom",
                         "settings": {"server": f"rtmp://127.0.0.1:{port}/live", "key": "obs",
                                      "use_auth": False}},
    }


async def test_obs_streams_60s_and_api_shows_its_settings(tmp_path: Path) -> None:
    from obsws_python import ReqClient

    from monitor.obs import ObsInstance

    async with running_ingest(tmp_path / "rec", allow_any=False, allowed_keys={"obs"}) as h:
        api = ApiServer(h.server, "127.0.0.1", 0)
        await api.start()
        try:
            async with ObsInstance(profile=_profile(h.port)) as obs:
                client = await asyncio.to_thread(ReqClient, host="127.0.0.1", port=obs.ws_port, password="",
                                                 timeout=10)
                try:
                    await asyncio.to_thread(client.start_stream)
                    [pub] = await h.wait_for("publish", timeout_s=30)
                    await asyncio.sleep(STREAM_S)
                    async with aiohttp.ClientSession() as http:
                        async with http.get(f"http://127.0.0.1:{api.port}/api/streams") as resp:
                            streams = (await resp.json())["streams"]
                    await asyncio.to_thread(client.stop_stream)
                    [unp] = await h.wait_for("unpublish", timeout_s=30)
                finally:
                    await asyncio.to_thread(client.disconnect)
        finally:
            await api.stop()
    assert pub["key"] == "obs" and "FMLE" in h.of("connect")[0]["flash_ver"]
    [s] = streams
    assert s["state"] == "live" and s["duration_s"] > STREAM_S - 5
    v, a = s["video"], s["audio"]
    assert (v["codec"], v["width"], v["height"]) == ("h264", WIDTH, HEIGHT)
    assert v["fps"] == pytest.approx(FPS, abs=0.3)
    assert v["bitrate_bps"] == pytest.approx(KBPS * 1000, rel=0.05)
    assert v["keyframe_interval_s"]["mean"] == pytest.approx(KEYINT_S, abs=0.05)
    assert a["codec"] == "aac" and a["sample_rate_hz"] == 48000 and a["channels"] == 2
    # What OBS claimed in onMetaData, next to what was measured.
    claimed = unp["stats"]["claimed"]
    assert claimed["width"] == WIDTH and claimed["videodatarate"] == pytest.approx(KBPS, rel=0.01)
    assert unp["reason"] in ("FCUnpublish", "deleteStream", "closed")
    assert decode_errors(Path(unp["recording"]["path"])) == ""
