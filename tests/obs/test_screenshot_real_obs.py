"""The observer's program screenshots from a real headless OBS reach streaming T12's scorer.

One OBS (Xvfb, 1920x1080 canvas, 10 fps) shows scene Live: a solid scene colour and, in the bottom
80 px band, white text standing in for the ticker (Debian's OBS has no browser source; a text
source draws the same thing the check looks for: text over the scene colour). The observer takes
screenshots at its lowest rate through GetSourceScreenshot; the recorded events are laid next to
T12's oracle files and scored the real way. The near miss: an opaque black 1920x80 bar hides the
band, and the same producer's screenshot makes renders_transparent fail.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import shutil
import time
from pathlib import Path
from typing import Any

import obsws_python as obsws
import pytest

from monitor.bus import EventBus
from monitor.events import Event
from monitor.obs import ObsInstance
from monitor.observers.obs import ObsObserver
from monitor.observers.obs_screenshot import ScreenshotConfig
from verifiers.evidence import ObsScreenshot
from verifiers.synth import score_solution, synth_instance
from verifiers.synthkit import obs_synth as O

pytestmark = [
    pytest.mark.obs,
    pytest.mark.skipif(shutil.which("obs") is None or shutil.which("Xvfb") is None,
                       reason="obs-studio and xvfb not installed"),
]

T12 = "R06.12.01.01-T12"
PASSWORD = "pw-" + secrets.token_hex(8)
SCENE_BGR_ABGR = 0xFFA05A28  # OBS colours are 0xAABBGGRR: RGB (40, 90, 160), T12's gt scene colour


def _collection() -> dict[str, Any]:
    """Scene Live: the scene colour over the canvas, the ticker text in the bottom band, and a
    black bar over that band, hidden (the near miss shows it)."""
    inputs = [
        O.source("Scene BG", "color_source_v3", {"color": SCENE_BGR_ABGR, "width": 1920, "height": 1080}),
        O.source("Ticker", "text_ft2_source_v2", {"text": "Breaking: tally ships   Breaking: tally ships",
                                                  "font": {"face": "DejaVu Sans", "size": 56, "style": "Bold"},
                                                  "color1": 0xFFFFFFFF, "color2": 0xFFFFFFFF}),
        O.source("Opaque", "color_source_v3", {"color": 0xFF000000, "width": 1920, "height": 80}),
    ]
    scenes = [O.scene("Live", [O.item("Scene BG", 1), O.item("Ticker", 2, pos=(10, 1005)),
                               O.item("Opaque", 3, pos=(0, 1000), visible=False)])]
    return O.collection("Show", scenes, inputs)


def _bundle_events(events: list[Event]) -> list[dict[str, Any]]:
    return [e.to_dict() for e in events]


async def _screenshot_after(rec: list[Event], t0_ns: int, timeout_s: float = 8.0) -> Event:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for e in rec:
            if e.source == "obs" and e.kind == "screenshot" and e.mono_ns > t0_ns:
                return e
        await asyncio.sleep(0.1)
    raise AssertionError(f"no screenshot within {timeout_s} s: {[(e.kind, e.payload) for e in rec[-5:]]}")


def _bottom_band(image_data: str) -> Any:
    """The lower half of the 80-line ticker band of a screenshot (BGR), read with OpenCV rather
    than the scorer's code: the test's own view of what OBS drew."""
    import base64

    import cv2
    import numpy as np

    raw = base64.b64decode(image_data.split(",", 1)[1])
    img = cv2.imdecode(np.frombuffer(raw, np.uint8), cv2.IMREAD_COLOR)
    if img is None:
        return np.zeros((1, 1, 3), np.uint8)
    return img[img.shape[0] - max(1, img.shape[0] * 40 // 1080):, :, :]


def _band_is_black(image_data: str) -> bool:
    """The opaque bar is drawn: the band's mean below 30 of 255 (the scene colour averages 97)."""
    return float(_bottom_band(image_data).mean()) < 30.0


def _band_has_text(image_data: str) -> bool:
    """The ticker text is drawn: some near-white pixels in the band (the scene colour has none)."""
    return bool((_bottom_band(image_data).min(axis=2) > 200).any())


async def _drawn(rec: list[Event], t0_ns: int, shows: Any, timeout_s: float = 20.0) -> bool:
    """Wait until the newest screenshot taken after t0 shows what `shows` looks for. OBS draws a
    change on a later frame; on a busy machine seconds later, and a screenshot taken before still
    shows the old picture."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        shots = [e for e in rec if e.source == "obs" and e.kind == "screenshot" and e.mono_ns > t0_ns]
        if shots and shows(shots[-1].payload["image_data"]):
            return True
        await asyncio.sleep(0.2)
    return False


def _score_with(inst: Path, tmp: Path, events: list[dict[str, Any]]) -> dict[str, float]:
    sol = tmp / "solution"
    shutil.rmtree(sol, ignore_errors=True)
    shutil.copytree(inst / "oracle", sol)
    (sol / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return {c["name"]: c["score"] for c in score_solution(T12, inst, sol)["checks"]}


async def test_real_obs_screenshot_reaches_t12(tmp_path: Path) -> None:
    inst = synth_instance(T12, tmp_path / "inst", seed=3)
    basic = {"Video": {"BaseCX": "1920", "BaseCY": "1080", "OutputCX": "640", "OutputCY": "360",
                       "FPSInt": "10"}}
    with ObsInstance(collection=_collection(), ws_password=PASSWORD, profile={"basic.ini": basic}) as obs_app:
        bus = EventBus()
        rec: list[Event] = []
        bus.add_sink(rec.append)
        observer = ObsObserver(bus, port=obs_app.ws_port, password=PASSWORD, env_file=None,
                               screenshots=ScreenshotConfig(interval_s=0.5, width_px=320))
        task = asyncio.create_task(observer.run())
        try:
            first = await _screenshot_after(rec, 0)
            shot = ObsScreenshot.from_event(first.to_dict())
            assert shot.scene == "Live" and shot.image_data.startswith("data:image/png;base64,")
            assert first.payload == shot.to_payload()  # the producer emits exactly the type
            if not await _drawn(rec, 0, _band_has_text):  # the first may predate the text's first render
                pytest.skip("OBS drew no ticker text within 20 s (rendering could not keep up): not judged")
            good = _bundle_events(rec)
            # the near miss: show the opaque bar (the agent's page renders a black background)
            agent = obsws.ReqClient(host="127.0.0.1", port=obs_app.ws_port, password=PASSWORD, timeout=5)
            try:
                item_id = agent.send("GetSceneItemId", {"sceneName": "Live", "sourceName": "Opaque"},
                                     raw=True)["sceneItemId"]
                agent.send("SetSceneItemEnabled", {"sceneName": "Live", "sceneItemId": item_id,
                                                   "sceneItemEnabled": True}, raw=True)
            finally:
                agent.disconnect()
            t_shown = time.monotonic_ns()
            await _screenshot_after(rec, t_shown)
            if not await _drawn(rec, t_shown, _band_is_black):
                pytest.skip("OBS did not draw the shown bar within 20 s of enabling it (rendering could "
                            "not keep up): the scorer was not judged on the near miss")
            opaque = _bundle_events(rec)
        finally:
            await observer.stop()
            await asyncio.wait_for(task, 10)
            observer.close()
    checks = _score_with(inst, tmp_path, good)
    assert checks["renders_transparent"] == 1.0, checks
    checks = _score_with(inst, tmp_path, opaque)
    assert checks["renders_transparent"] == 0.0, checks
    assert checks["source_settings"] == 1.0 and checks["position"] == 1.0  # only the live unit moved
