"""The shipped T06 and T20 scenarios against a real OBS 29 under Xvfb + openbox (one OBS for all).

T06: synthetic Ctrl+Alt+1/2/3 and Ctrl+Alt+M (XTEST) switch scenes and toggle Mic, as seen through
obs-websocket events. T20: a stand-in responder (Advanced Scene Switcher is not packaged here)
switches to Privacy on focus; 100 ms passes, 700 ms misses the 500 ms deadline, and one that also
reacts to "Notes" fails the no-false-trigger expectation. The 100 ms and 700 ms runs are also T20's
real-OBS oracle and near-miss for the T20 scorer (its live checks judge these runs' recorded
events): one set of runs serves both the scenario engine's verdicts and the scorer's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import obsws_python as obs
import pytest

from monitor.bus import EventBus
from monitor.commands.scenario import start_obs_events
from monitor.obs import ObsInstance
from scenarios.engine import ScenarioEngine, ScenarioResult
from scenarios.loader import load_scenario
from scenarios.responder import FocusResponder
from scenarios.x11 import X11Driver
from tests.app_health import (
    AppHealth,
    ObsWindow,
    combined,
    late_actions,
    retry_if_app_lagged,
    retry_if_app_lagged_async,
)
from tests.scenarios.obs_collection import hotkey_collection, with_stinger_scenes
from verifiers.evidence import ObsEvent

pytestmark = [pytest.mark.obs, pytest.mark.slow,
              pytest.mark.skipif(any(shutil.which(b) is None for b in ("obs", "Xvfb", "openbox")),
                                 reason="obs-studio, xvfb and openbox needed")]

ROOT = Path(__file__).resolve().parents[2]
T06 = ROOT / "scenarios" / "files" / "R06.12.01.01-T06.yaml"
T20 = ROOT / "scenarios" / "files" / "R06.12.01.01-T20.yaml"
T16 = ROOT / "scenarios" / "files" / "R06.12.01.01-T16.yaml"
PASSWORD = "scenario-pw"


@pytest.fixture(scope="module")
def replay_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("replays")


@pytest.fixture(scope="module")
def stinger_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1 s 320x180 VP8 clip made here (no fetched media)."""
    if shutil.which("ffmpeg") is None:
        pytest.skip("ffmpeg needed for the stinger clip")
    out = tmp_path_factory.mktemp("stinger") / "swipe.webm"
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "color=c=red:s=320x180:d=1:r=30",
                    "-c:v", "libvpx", "-b:v", "200k", str(out)], check=True, timeout=60)
    return out


@pytest.fixture(scope="module")
def obs_instance(replay_dir: Path, stinger_path: Path) -> Iterator[ObsInstance]:
    # A small output and a 5 s replay buffer with Save Replay on F9 (a frontend hotkey, profile).
    profile = {"basic.ini": {
        "Output": {"Mode": "Advanced"},
        "AdvOut": {"RecType": "Standard", "RecFilePath": str(replay_dir), "RecFormat": "mkv",
                   "RecEncoder": "obs_x264", "RecTracks": "1", "RecRB": "true", "RecRBTime": "5",
                   "RecRBSize": "512"},
        "Video": {"OutputCX": "320", "OutputCY": "180", "FPSType": "1", "FPSInt": "10"},
        # OBS keeps the replay-buffer output's hotkeys as one JSON under [Hotkeys] ReplayBuffer
        "Hotkeys": {"ReplayBuffer": json.dumps({"ReplayBuffer.Save": [{"key": "OBS_KEY_F9"}]}),
                    "OBSBasic.Transition": json.dumps(
                        {"bindings": [{"key": "OBS_KEY_T", "control": True, "alt": True}]})}}}
    collection = with_stinger_scenes(hotkey_collection("Gameplay"), str(stinger_path))
    with ObsInstance(collection=collection, profile=profile, ws_password=PASSWORD,
                     window_manager=True) as inst:
        yield inst


#: after the reset's transition ended, a margin for OBS's events about it to be sent before the
#: next observer connects (OBS sends CurrentProgramSceneChanged at the end of a Fade)
RESET_SETTLE_S = 0.2


def reset(inst: ObsInstance) -> None:
    """Test-only writes: back to Gameplay with Mic unmuted, and let the transition finish (waited
    for: obs-websocket's transition cursor reads 1.0 once no transition runs; was a fixed 1 s)."""
    client = obs.ReqClient(host="127.0.0.1", port=inst.ws_port, password=PASSWORD, timeout=5)
    try:
        client.set_current_program_scene("Gameplay")
        client.set_input_mute("Mic", False)
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            time.sleep(0.05)
            if (client.get_current_scene_transition_cursor().transition_cursor >= 1.0
                    and client.get_current_program_scene().current_program_scene_name == "Gameplay"):
                break
        time.sleep(RESET_SETTLE_S)
        assert client.get_current_program_scene().current_program_scene_name == "Gameplay"
    finally:
        client.disconnect()


async def play(inst: ObsInstance, path: Path, responder: FocusResponder | None = None,
               recorded: list[dict[str, Any]] | None = None) -> ScenarioResult:
    """Run a scenario with OBS events from the product observer (the one OBS client); every bus
    event (scenario marks included) is appended to `recorded` as the run's bundle would hold it."""
    scenario = load_scenario(path)
    bus = EventBus()
    if recorded is not None:
        bus.add_sink(lambda e: recorded.append(e.to_dict()))
    with X11Driver(inst.display) as driver:
        engine = ScenarioEngine(scenario, bus, driver, inst.display)
        feed = await start_obs_events(bus, inst.ws_url, PASSWORD)
        try:
            if responder is not None:
                responder.start()
            try:
                return await engine.run()
            finally:
                if responder is not None:
                    responder.stop()
        finally:
            await feed.stop()


@contextlib.contextmanager
def obs_watched(inst: ObsInstance) -> Iterator[list[AppHealth]]:
    """OBS's own health over the `with` block (tests/app_health.py ObsWindow: render lag, starved
    threads), appended to the yielded list when the block ends."""
    window = ObsWindow(obs.ReqClient(host="127.0.0.1", port=inst.ws_port, password=PASSWORD, timeout=5), inst.pid)
    health: list[AppHealth] = []
    window.start()
    try:
        yield health
    finally:
        health.append(window.stop())
        window.client.disconnect()


async def played(inst: ObsInstance, run: Any) -> tuple[Any, AppHealth]:
    """`await run()` watched: (its result, OBS's health over the run)."""
    with obs_watched(inst) as health:
        result = await run()
    return result, health[0]


def failures(result: ScenarioResult) -> str:
    """Every expectation's and failed action's detail, whole (a str message is never truncated)."""
    lines = [f"{r.id}: {'pass' if r.passed else 'FAIL'} {r.detail}" for r in result.expectations]
    lines += [f"step {a.step}: {a.status} {a.error}" for a in result.actions.values() if a.status != "ok"]
    return "\n".join(lines)


def _t06_via_cli(inst: ObsInstance) -> tuple[tuple[subprocess.CompletedProcess[str], dict[str, Any]], AppHealth]:
    """One run of the shipped T06 file through `tally scenario run --json`, with OBS's health over it
    and the engine's own key timing."""
    reset(inst)
    env = {**os.environ, "DISPLAY": inst.display or "", "TALLY_OBS_PASSWORD": PASSWORD}
    with obs_watched(inst) as health:
        proc = subprocess.run([sys.executable, "-m", "monitor.cli", "scenario", "run", str(T06),
                               "--obs", inst.ws_url, "--json"],
                              capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    data = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else {"actions": [], "expectations": []}
    return (proc, data), combined(health[0], late_actions(data["actions"]))


def test_t06_keys_switch_scenes_and_toggle_mute_via_cli(obs_instance: ObsInstance) -> None:
    proc, data = retry_if_app_lagged(lambda: _t06_via_cli(obs_instance), lambda r: r[0].returncode == 0)
    assert PASSWORD not in proc.stdout + proc.stderr
    results = {r["id"]: r for r in data["expectations"]}
    detail = "\n".join(f"{k}: {'pass' if r['passed'] else 'FAIL'} {r['detail']}" for k, r in results.items())
    assert proc.returncode == 0, f"{proc.stderr}\n{detail}\nactions: {data['actions']}"
    assert data["passed"]
    # Gameplay was already on program at the first Ctrl+Alt+1; every later key made a real switch
    for eid in ("just_chatting", "desktop", "gameplay_again", "mic_toggles", "mic_toggles_back"):
        assert results[eid]["passed"]
        assert 0.0 < results[eid]["latency_ms"] <= 500.0
        assert "already" not in results[eid]["detail"]
    assert "muted after" in results["mic_toggles"]["detail"]
    assert "unmuted after" in results["mic_toggles_back"]["detail"]
    keys = [a for a in data["actions"] if a["action"] == "key"]
    assert len(keys) == 6 and all(a["status"] == "ok" and a["lateness_ms"] is not None for a in keys)


def responder_health(resp: FocusResponder) -> AppHealth:
    """Did the machine keep time for the stand-in agent? It woke late (its switch was sent more than
    100 ms after its planned delay) or OBS answered a switch slower than 200 ms: then a latency
    outside the test's bounds is the machine's, not the scenario engine's measurement."""
    late = [(sent - seen) / 1e6 - (resp.delay_ms if what == "privacy" else resp.return_delay_ms)
            for what, seen, sent, _t in resp.log]
    problems = [f"the responder woke {ms:.0f} ms late" for ms in late if ms > 100]
    problems += [f"OBS took {ms:.0f} ms to switch scenes" for ms in resp.reply_ms if ms > 200]
    return AppHealth("machine", tuple(problems), {"late_ms": late, "reply_ms": list(resp.reply_ms)})


async def _play_t20(obs_instance: ObsInstance, delay_ms: float,
                    **kw: Any) -> tuple[tuple[Any, FocusResponder, list[dict[str, Any]]], AppHealth]:
    """One T20 run with the stand-in responder: (result, responder, recorded events), and the
    machine's and OBS's health over it."""
    reset(obs_instance)
    resp = FocusResponder(display_name=obs_instance.display, ws_url=obs_instance.ws_url, password=PASSWORD,
                          pattern="Password|Bank", delay_ms=delay_ms)
    recorded: list[dict[str, Any]] = []
    result, health = await played(obs_instance, lambda: play(obs_instance, T20, resp, recorded, **kw))
    return (result, resp, recorded), combined(responder_health(resp), health)


async def _t20_until_machine_keeps_time(obs_instance: ObsInstance, delay_ms: float, within_bounds: Any,
                                        **kw: Any) -> tuple[Any, FocusResponder, list[dict[str, Any]]]:
    """Play T20; when the latencies fall outside the bounds while the machine or OBS could not keep
    time, say so and play once more; skip if it could not keep time twice (tests/app_health.py's rule)."""
    return await retry_if_app_lagged_async(lambda: _play_t20(obs_instance, delay_ms, **kw),
                                           lambda run: within_bounds(run[0]))


def _latency(result: Any, eid: str) -> float | None:
    return {r.id: r for r in result.expectations}[eid].latency_ms


T20_TASK = "R06.12.01.01-T20"


@pytest.fixture(scope="module")
def t20_instance(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from verifiers.synth import synth_instance

    return synth_instance(T20_TASK, tmp_path_factory.mktemp("t20") / "inst", seed=6)


def _t20_scored(inst: Path, events: list[dict[str, Any]], sol: Path) -> dict[str, dict[str, Any]]:
    """The T20 scorer's checks for the oracle's files with this real run's events (the macro config
    stays the synthetic one: OBS drops the data of plugins it lacks)."""
    from verifiers.scoring import score_task
    from verifiers.synth import InstanceWriter, load_solution_events, overlay

    shutil.copytree(inst / "oracle", sol / "real")
    InstanceWriter.write_events(sol / "real", events)
    overlay(inst / "workdir", sol / "real", sol / "work")
    rep = score_task(T20_TASK, sol / "work", inst / "gt", load_solution_events(sol / "real")).to_dict()
    return {c["name"]: c for c in rep["checks"]}


async def test_t20_responder_100ms_passes(obs_instance: ObsInstance, t20_instance: Path, tmp_path: Path) -> None:
    def within(result: Any) -> bool:
        return all(90.0 <= (_latency(result, e) or -1) <= 500.0 for e in ("switch_on_vault", "switch_on_bank"))

    result, resp, recorded = await _t20_until_machine_keeps_time(obs_instance, 100, within)
    results = {r.id: r for r in result.expectations}
    assert result.passed, {k: r.detail for k, r in results.items()}
    assert any(e.kind == "snapshot" for e in result.observed)  # the product observer fed it
    assert any(e.source == "x11" and e.kind == "active_window" for e in result.observed)
    for eid in ("switch_on_vault", "switch_on_bank"):
        # The responder sees the focus change slightly before our watcher stamps it, so a 100 ms
        # responder can measure a little under 100 ms (seen: 99.4 ms); the error budget is 10 ms.
        assert 90.0 <= results[eid].latency_ms <= 500.0
    for eid in ("return_after_vault", "return_after_bank"):
        assert 1500.0 <= results[eid].latency_ms <= 2500.0
    assert resp.error is None
    # T20's real-OBS oracle: the scorer's live checks on this run's events all pass
    good = await asyncio.to_thread(_t20_scored, t20_instance, recorded, tmp_path)
    assert all(c["status"] == "pass" for c in good.values()), {n: c["message"] for n, c in good.items()}


async def test_t20_responder_700ms_fails_deadline(obs_instance: ObsInstance, t20_instance: Path,
                                                  tmp_path: Path) -> None:
    def within(result: Any) -> bool:
        return all(690.0 <= (_latency(result, e) or -1) < 1000.0 for e in ("switch_on_vault", "switch_on_bank"))

    result, _resp, recorded = await _t20_until_machine_keeps_time(obs_instance, 700, within)
    failed = {r.id: r for r in result.expectations if not r.passed}
    assert set(failed) == {"switch_on_vault", "switch_on_bank"}, {k: r.detail for k, r in failed.items()}
    for r in failed.values():
        assert r.latency_ms is not None and 690.0 <= r.latency_ms < 1000.0  # same 10 ms budget as above
        assert "later than 500 ms" in r.detail
    # T20's real-OBS near-miss (200 ms past the seed's 500 ms): the scorer lowers switch_on_match
    # only; every other check passes, as on the 100 ms run (there each one passes: the test above)
    slow = await asyncio.to_thread(_t20_scored, t20_instance, recorded, tmp_path)
    assert {n for n, c in slow.items() if c["status"] != "pass"} == {"switch_on_match"}, \
        {n: c["message"] for n, c in slow.items()}


def t20_until_vault(tmp_path: Path) -> Path:
    """The shipped T20 file up to its `vault` step, with only the expectation that ends there
    (no_false_trigger: notes_first until vault): the 4.5 s that decide it instead of all 13.5 s."""
    import yaml

    doc = yaml.safe_load(T20.read_text())
    steps = doc["steps"][:[s["id"] for s in doc["steps"]].index("vault") + 1]
    doc["steps"] = [*steps, {"id": "end", "at_ms": steps[-1]["at_ms"] + 500, "mark": "end of the no-trigger span"}]
    doc["expect"] = [e for e in doc["expect"] if e["id"] == "no_false_trigger"]
    out = tmp_path / "t20-until-vault.yaml"
    out.write_text(yaml.safe_dump(doc, allow_unicode=True))
    return out


async def test_t20_responder_matching_notes_fails_no_false_trigger(obs_instance: ObsInstance, tmp_path: Path) -> None:
    until_vault = t20_until_vault(tmp_path)

    async def attempt() -> tuple[tuple[ScenarioResult, FocusResponder], AppHealth]:
        reset(obs_instance)
        resp = FocusResponder(display_name=obs_instance.display, ws_url=obs_instance.ws_url, password=PASSWORD,
                              pattern="Password|Bank|Notes", delay_ms=100)
        result, health = await played(obs_instance, lambda: play(obs_instance, until_vault, resp))
        return (result, resp), combined(responder_health(resp), health)

    def as_expected(run: tuple[ScenarioResult, FocusResponder]) -> bool:
        ntf = {r.id: r for r in run[0].expectations}["no_false_trigger"]
        return not ntf.passed and 90.0 <= (ntf.latency_ms or -1) <= 500.0

    result, _resp = await retry_if_app_lagged_async(attempt, as_expected)
    results = {r.id: r for r in result.expectations}
    assert not result.passed, failures(result)
    assert not results["no_false_trigger"].passed
    assert 90.0 <= results["no_false_trigger"].latency_ms <= 500.0  # same 10 ms budget as above
    assert "to 'Privacy'" in results["no_false_trigger"].detail


F9_SCENARIO = """
name: F9 saves a replay
steps:
  - {id: f9, at_ms: 2500, key: F9, hold_ms: 120}
expect:
  - {id: replay_saved, event: ReplayBufferSaved, after: f9, within_ms: 3000}
"""


async def test_f9_saves_replay_through_frontend_hotkey(obs_instance: ObsInstance, replay_dir: Path,
                                                       tmp_path: Path) -> None:
    """The T08 mechanism with a 5 s buffer: XTEST F9 -> OBS's Save Replay -> ReplayBufferSaved."""
    f = tmp_path / "f9.yaml"
    f.write_text(F9_SCENARIO)

    async def attempt() -> tuple[ScenarioResult, AppHealth]:
        client = obs.ReqClient(host="127.0.0.1", port=obs_instance.ws_port, password=PASSWORD, timeout=5)
        try:
            client.start_replay_buffer()
            return await played(obs_instance, lambda: play(obs_instance, f))
        finally:
            client.stop_replay_buffer()
            client.disconnect()

    result = await retry_if_app_lagged_async(attempt, lambda res: res.passed)
    (r,) = result.expectations
    assert r.passed, r.detail
    assert 0.0 < r.latency_ms <= 3000.0
    saved = [e for e in result.observed if "ReplayBufferSaved" in (e.kind, e.payload.get("type"))]
    data = saved[0].payload.get("data", saved[0].payload)
    path = Path(data["savedReplayPath"])
    assert path.parent == replay_dir
    assert await asyncio.to_thread(os.path.getsize, path) > 0


async def test_t16_stinger_only_for_live_to_brb_in_studio_mode(obs_instance: ObsInstance) -> None:
    """The shipped T16 file: preview + Transition hotkeys; BRB's override uses the Stinger, the
    switch back to Live uses Fade."""
    async def attempt() -> tuple[ScenarioResult, AppHealth]:
        reset(obs_instance)
        client = obs.ReqClient(host="127.0.0.1", port=obs_instance.ws_port, password=PASSWORD, timeout=5)
        try:
            client.set_studio_mode_enabled(True)
            return await played(obs_instance, lambda: play(obs_instance, T16))
        finally:
            client.set_studio_mode_enabled(False)
            client.disconnect()

    result = await retry_if_app_lagged_async(attempt, lambda res: res.passed)
    assert result.passed, failures(result)
    evs = [ObsEvent.from_payload(e.payload) for e in result.observed if e.source == "obs" and e.kind == "event"]
    started = [ev.typed().transitionName for ev in evs if ev.type == "SceneTransitionStarted"]
    assert started == ["Fade", "Stinger", "Fade"]
