"""Issue 19 with a real encoder: headless OBS 29 streaming into the ingest, checked against Twitch.

- 1080p30 x264 CBR 6000 kbit/s, keyframe interval 2 s (Twitch's own requirements): `good`,
  no issue, every rule evaluated.
- The same encoder with keyframe interval 0 ("auto": x264's default of 250 frames, 8.3 s at 30 fps),
  at 640x360 since the rule does not depend on the raster: Twitch's `keyframeInterval` issue,
  and only that one.
"""

from __future__ import annotations

import asyncio
import copy
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from monitor.demo import drive_obs, obs_profile
from tests.rtmp.helpers import running_ingest

pytestmark = [pytest.mark.obs, pytest.mark.slow, pytest.mark.timeout(300),
              pytest.mark.skipif(shutil.which("obs") is None or shutil.which("Xvfb") is None,
                                 reason="needs obs-studio and Xvfb (the Makefile installs them)")]


def _tone(path: Path) -> Path:
    t = np.arange(48_000 * 5) / 48_000
    mono = 0.1 * np.sin(2 * np.pi * 1000 * t)
    sf.write(str(path), np.stack([mono, mono], axis=1), 48_000, subtype="PCM_16")
    return path


def _profile(port: int, key: str, keyint_s: int, size: tuple[int, int]) -> dict[str, Any]:
    prof = copy.deepcopy(obs_profile(port))
    prof["service.json"]["settings"]["key"] = key
    prof["streamEncoder.json"]["keyint_sec"] = keyint_s
    prof["basic.ini"]["Video"].update({"OutputCX": str(size[0]), "OutputCY": str(size[1])})
    return prof


async def _stream(port: int, key: str, keyint_s: int, size: tuple[int, int], seconds: float, tone: Path) -> None:
    from monitor.obs.launcher import ObsInstance

    obs = ObsInstance(profile=_profile(port, key, keyint_s, size), ws_password="")
    try:
        await obs.astart()
        await asyncio.to_thread(drive_obs, obs.ws_url, tone, seconds)
        await obs.astop()
    finally:
        obs.close()


async def test_real_obs_on_twitch(tmp_path: Path) -> None:
    tone = await asyncio.to_thread(_tone, tmp_path / "tone.wav")
    async with running_ingest(tmp_path / "rec", profiles=["twitch"], stats_interval_s=1.0) as h:
        await _stream(h.port, "kf2", 2, (1920, 1080), 14, tone)
        await _stream(h.port, "kf0", 0, (640, 360), 9, tone)
        await h.wait_for("unpublish", count=2, timeout_s=20)
    ticks = {key: [p["health"]["twitch"] for k, p in h.events if k == "stats" and p["key"] == key]
             for key in ("kf2", "kf0")}
    good = ticks["kf2"]
    assert good and good[-1]["status"] == "good" and not good[-1]["not_evaluated"], good[-1]
    assert not any(t["issues"] for t in good), [t["issues"] for t in good if t["issues"]]
    auto = ticks["kf0"]
    assert {i["type"] for t in auto for i in t["issues"]} == {"keyframeInterval"}, auto[-1]
    assert auto[-1]["status"] == "bad" and auto[-1]["platform_status"] == "Incompatible"
