"""The engine's scheduling and recording, with a fake desktop driver (no X display needed)."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass

from monitor.bus import EventBus
from scenarios.engine import ScenarioEngine, sleep_until
from scenarios.loader import parse_scenario
from verifiers.evidence import ObsEvent, ObsSnapshot, ObsState, SceneData

MS = 1_000_000


@dataclass
class Win:
    wid: int
    title: str


class FakeDriver:
    def __init__(self) -> None:
        self.log: list[tuple[str, str, int]] = []
        self.active: int | None = None
        self.windows = {"Notes": Win(1, "Notes"), "Password Manager — Vault": Win(2, "Password Manager — Vault")}

    def focus_title(self, title: str, *, match: str = "exact") -> Win:
        w = self.windows[title]
        self.active = w.wid
        self.log.append(("focus", title, time.monotonic_ns()))
        return w

    def activate(self, wid: int) -> None:
        self.active = wid
        self.log.append(("focus", str(wid), time.monotonic_ns()))

    def active_window(self) -> int | None:
        return self.active

    def key_down(self, chord: object) -> None:
        self.log.append(("down", str(chord), time.monotonic_ns()))

    def key_up(self, chord: object) -> None:
        self.log.append(("up", str(chord), time.monotonic_ns()))

    def find(self, title: str, *, match: str = "exact") -> Win | None:
        return self.windows.get(title)


SCENARIO = """
name: engine-test
steps:
  - {id: k, at_ms: 50, key: ctrl+alt+1, hold_ms: 40}
  - {id: f, after: k, delay_ms: 30, focus: "Password Manager — Vault"}
  - {id: seen, after_event: {kind: CurrentProgramSceneChanged, data: {sceneName: Privacy}}, delay_ms: 20,
     timeout_ms: 1000, mark: privacy seen}
  - {id: never, after_event: NoSuchEvent, timeout_ms: 100, mark: x}
  - {id: dependent, after: never, mark: y}
  - {id: w, at_ms: 10, wait: 60}
expect:
  - {id: privacy, program_scene: Privacy, after: f, within_ms: 500}
"""


async def test_schedule_record_and_judge() -> None:
    bus = EventBus()
    sc = parse_scenario(SCENARIO, "engine.yaml")
    drv = FakeDriver()
    engine = ScenarioEngine(sc, bus, drv)
    everything = bus.subscribe("all")

    async def fake_obs() -> None:
        # the "app" reacts 120 ms after the focus, like a responder would
        for _ in range(5000):
            if any(e[0] == "focus" for e in drv.log):
                break
            await asyncio.sleep(0.001)
        focus_ns = next(e[2] for e in drv.log if e[0] == "focus")
        await sleep_until(focus_ns + 120 * MS)
        bus.emit("obs", "event", ObsEvent.of("CurrentProgramSceneChanged", SceneData("Privacy")).to_payload())

    bus.emit("obs", "snapshot", ObsSnapshot("start", ObsState(current_program_scene="Gameplay")).to_payload())
    helper = asyncio.get_running_loop().create_task(fake_obs())
    result = await engine.run()
    await helper
    acts = result.actions

    assert acts["k"].scheduled_ns == result.start_ns + 50 * MS
    assert acts["k"].actual_ns >= acts["k"].scheduled_ns
    # `after` chains on the previous step's completion, plus the delay, exactly
    assert acts["f"].scheduled_ns == acts["k"].done_ns + 30 * MS
    # `after_event` is scheduled from the event's receipt time
    assert acts["seen"].scheduled_ns == acts["seen"].extra["event_ns"] + 20 * MS
    assert acts["never"].status == "failed" and "NoSuchEvent" in acts["never"].error
    assert acts["dependent"].status == "skipped"
    assert acts["w"].done_ns - acts["w"].actual_ns >= 60 * MS
    # key held for hold_ms, released once
    downs = [t for kind, _c, t in drv.log if kind == "down"]
    ups = [t for kind, _c, t in drv.log if kind == "up"]
    assert len(downs) == len(ups) == 1 and ups[0] - downs[0] >= 40 * MS
    r = result.expectations[0]
    # the fake answers 120 ms after it saw the focus; the engine stamps the focus a few µs after
    # the fake's timer starts (119.985 ms seen in CI), so allow 1 ms below
    assert r.passed and 119 <= r.latency_ms < 200
    assert not result.passed            # a step failed, so the run did not pass

    kinds = []
    while not everything.queue.empty():
        e = everything.queue.get_nowait()
        if e.source == "scenario":
            kinds.append((e.kind, e.payload.get("step") or e.payload.get("id")))
    assert kinds[0] == ("start", None) and kinds[-1] == ("end", None)
    assert ("expectation", "privacy") in kinds
    assert {s for k, s in kinds if k == "action"} == {"k", "f", "seen", "never", "dependent", "w"}


async def test_steps_needing_a_display_fail_cleanly_without_one() -> None:
    bus = EventBus()
    sc = parse_scenario("steps: [{id: k, at_ms: 0, key: F9}, {id: m, at_ms: 5, mark: ok}]", "nodisplay.yaml")
    result = await ScenarioEngine(sc, bus, None).run()
    assert result.actions["k"].status == "failed" and "needs a display" in result.actions["k"].error
    assert result.actions["m"].status == "ok"


async def test_realtime_is_restored_after_the_run() -> None:
    before = (os.sched_getscheduler(0), os.sched_getparam(0).sched_priority)
    sc = parse_scenario("steps: [{id: m, at_ms: 5, mark: ok}]", "rt.yaml")
    engine = ScenarioEngine(sc, EventBus(), None, realtime=True)
    result = await engine.run()
    assert result.passed
    assert engine.realtime_status == "SCHED_FIFO 10" or engine.realtime_status.startswith("unavailable")
    assert (os.sched_getscheduler(0), os.sched_getparam(0).sched_priority) == before
