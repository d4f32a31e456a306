"""The observer's program screenshots without OBS: bounded rate, bounded size, never fatal."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from monitor.observers.obs import ObsObserver
from monitor.observers.obs_client import ObsRequestFailed
from monitor.observers.obs_screenshot import ScreenshotConfig, ScreenshotTooLarge, take_screenshot


class _Req:
    def __init__(self, image_data: Any = "data:image/png;base64,iVBORw0KGgo=", fail: bool = False) -> None:
        self.image_data, self.fail = image_data, fail
        self.calls: list[str] = []

    def request(self, name: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
        self.calls.append(name)
        if name == "GetCurrentProgramScene":  # obs-websocket 5.0-5.2: only the prefixed key
            return {"currentProgramSceneName": "Live"}
        if self.fail:
            raise ObsRequestFailed(name, 600, "source not found")
        return {"imageData": self.image_data}


class _Bus:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, dict[str, Any]]] = []

    def emit(self, source: str, kind: str, payload: dict[str, Any] | None = None, mono_ns: int | None = None) -> None:
        self.events.append((source, kind, payload or {}))


def test_config_bounds_rate_and_width() -> None:
    assert ScreenshotConfig().interval_s is None  # off unless a task asks
    with pytest.raises(ValueError, match=r"0\.5 s"):
        ScreenshotConfig(interval_s=0.1)
    for w in (4, 4000):
        with pytest.raises(ValueError, match="width"):
            ScreenshotConfig(width_px=w)


def test_oversized_or_non_image_answers_are_refused() -> None:
    with pytest.raises(ScreenshotTooLarge):
        take_screenshot(_Req("data:image/png;base64," + "A" * 200), ScreenshotConfig(max_chars=100))
    with pytest.raises(ValueError, match="data: URI"):
        take_screenshot(_Req(None), ScreenshotConfig())
    shot = take_screenshot(_Req(), ScreenshotConfig())
    assert shot.scene == "Live" and shot.width_px == 320


async def test_loop_keeps_its_rate_through_refusals_and_never_runs_when_off() -> None:
    bus = _Bus()
    obs = ObsObserver(bus, env_file=None, screenshots=ScreenshotConfig(interval_s=0.5))  # type: ignore[arg-type]
    req = _Req(fail=True)
    obs._loop, obs._req = asyncio.get_running_loop(), req  # type: ignore[assignment]
    loop = asyncio.create_task(obs._screenshot_loop())
    await asyncio.sleep(0.75)  # at 0 s and 0.5 s: two tries, each an error event, the loop alive
    assert not loop.done()
    loop.cancel()
    with pytest.raises(asyncio.CancelledError):
        await loop
    obs.close()
    errors = [p for s, k, p in bus.events if k == "error"]
    assert len(errors) == 2 and all(e["where"] == "screenshot" for e in errors)
    assert req.calls.count("GetSourceScreenshot") == 2
    off = ObsObserver(bus, env_file=None)  # type: ignore[arg-type]
    assert off.screenshots.interval_s is None
    off.close()


async def test_loop_stops_when_its_budget_is_spent() -> None:
    bus = _Bus()
    shots = ScreenshotConfig(interval_s=0.5, max_total_chars=60)   # two 34-char answers spend it
    obs = ObsObserver(bus, env_file=None, screenshots=shots)  # type: ignore[arg-type]
    obs._loop, obs._req = asyncio.get_running_loop(), _Req()  # type: ignore[assignment]
    await asyncio.wait_for(obs._screenshot_loop(), 3.0)   # returns by itself
    obs.close()
    assert [k for _s, k, _p in bus.events] == ["screenshot", "screenshot", "error"]
    assert "budget" in bus.events[-1][2]["error"]


def test_only_tasks_that_judge_the_program_picture_get_screenshots(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """T12 (live: obs, obs_screenshots) gets an observer taking them every 2 s; T06 (live: obs) none."""
    from monitor.run.wiring import OBS_SCREENSHOT_INTERVAL_S, LiveOptions, ObsComponent, build_components
    from verifiers.catalog import load_catalog

    monkeypatch.delenv("DISPLAY", raising=False)
    opts = LiveOptions(workdir=tmp_path, bundle_dir=tmp_path / "b", obs_url="ws://127.0.0.1:4455")
    got = {}
    for task in ("R06.12.01.01-T12", "R06.12.01.01-T06"):
        comps, missing = build_components(load_catalog().get(task), opts)
        assert not [m for m in missing if m.need.startswith("obs")]
        got[task] = [c.screenshot_interval_s for c in comps if isinstance(c, ObsComponent)]
    assert got == {"R06.12.01.01-T12": [OBS_SCREENSHOT_INTERVAL_S], "R06.12.01.01-T06": [None]}
