"""Real-OBS oracle for T01/T17: the Weekly Stream collection built in OBS 29 through obs-websocket.

The synthetic oracle is written by our own writer; this proves the scorers read what a real OBS
saves. The collection is built the T17 way (requests over obs-websocket), OBS is closed so it saves,
and the saved files are scored against the synthetic instance's GT. A 4 px Cam move in that real
file must lower exactly the geometry check. The real-app near-miss (issue 21): OBS is started again
on what it saved, the Cam is moved 3 px over obs-websocket (the seed's pass line is +-2 px) and OBS
saves again: T01's cam_geometry and T17's transforms go to 0, nothing else moves.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from monitor.obs import ObsInstance
from monitor.observers.obs_log import ObsLogFollower
from tests.streaming.real_obs import SCRATCH_COLLECTION, build_weekly_stream, save_obs_config, weekly_basic
from verifiers.evidence import ObsEvent
from verifiers.evidence.obs import ReplaySavedData
from verifiers.scoring import score_task
from verifiers.synth import InstanceWriter, load_solution_events, overlay, synth_instance

obs = pytest.importorskip("obsws_python")
needs_obs = pytest.mark.skipif(shutil.which("obs") is None or shutil.which("Xvfb") is None,
                               reason="obs-studio and xvfb not installed")

COLL_FILE = "basic/scenes/Weekly_Stream.json"
SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios" / "files"


#: the real-app near-miss: the seed's Cam tolerance is +-2 px, so 3 px is the first whole pixel outside
NEAR_MISS_CAM_PX = 3.0


def build_in_obs(workdir: Path, out: Path, near: Path) -> None:
    """Create the three scenes, sources, Cam transform and Fade 300 ms via obs-websocket; save to
    out/obs-studio. Then start OBS again on what it saved, move the Cam NEAR_MISS_CAM_PX right over
    obs-websocket and save that to near/obs-studio (same Xvfb and HOME: a restart, not a new launch)."""
    with ObsInstance(collection=SCRATCH_COLLECTION, profile={"basic.ini": weekly_basic(1920, 1080, 30)},
                     profile_name="Weekly",
                     ws_password="t17-pw") as inst:
        c = obs.ReqClient(host="127.0.0.1", port=inst.ws_port, password="t17-pw", timeout=10)
        try:
            build_weekly_stream(c, workdir)
        finally:
            c.disconnect()
        assert inst.stop() == 0
        # the launcher names the file after the collection as given ("Weekly Stream.json"); a
        # collection created in OBS's GUI gets underscores, which is what the task's artifact says
        save_obs_config(inst, out, Path(COLL_FILE).name)
        events = ws_log_events(inst.config_dir / "logs")
        InstanceWriter.write_events(out, events)

        inst.start()
        c = obs.ReqClient(host="127.0.0.1", port=inst.ws_port, password="t17-pw", timeout=10)
        try:
            cam = c.get_scene_item_id("Live", "Cam").scene_item_id
            x = c.get_scene_item_transform("Live", cam).scene_item_transform["positionX"]
            c.set_scene_item_transform("Live", cam, {"positionX": x + NEAR_MISS_CAM_PX})
        finally:
            c.disconnect()
        assert inst.stop() == 0
        save_obs_config(inst, near, Path(COLL_FILE).name)
        # the script's requests are the oracle's (the move is the "script's" 3 px slip, not a new request log)
        InstanceWriter.write_events(near, events)


def ws_log_events(log_dir: Path) -> list[dict]:
    """OBS's log (obs-websocket debug on: the launcher passes --websocket_debug) read by the product's
    log follower from its start: the run's `obs` ws/* events, T17's live evidence."""
    import asyncio

    from monitor.bus import EventBus

    events: list[dict] = []
    bus = EventBus()
    bus.add_sink(lambda e: events.append(e.to_dict()))
    follower = ObsLogFollower(bus, log_dir, from_start=True)
    while follower.poll_once():
        pass
    asyncio.run(follower.stop())
    return events


@pytest.fixture(scope="module")
def real_instance(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("t01-real")
    inst = synth_instance("R06.12.01.01-T01", root / "inst", seed=1)
    build_in_obs(inst / "workdir", root / "real_oracle", root / "real_near")
    return root


def _score(task: str, root: Path, solution: Path) -> dict:
    work = root / f"work-{task}-{solution.name}"
    if work.exists():
        shutil.rmtree(work)
    overlay(root / "inst" / "workdir", solution, work)
    return score_task(task, work, root / "inst" / "gt", load_solution_events(solution)).to_dict()


@pytest.mark.obs
@pytest.mark.slow
@needs_obs
@pytest.mark.parametrize("task", ["R06.12.01.01-T01", "R06.12.01.01-T17"])
def test_real_obs_oracle_scores_full(real_instance: Path, task: str) -> None:
    saved = json.loads((real_instance / "real_oracle" / "obs-studio" / COLL_FILE).read_text())
    assert "transitions" in saved and saved["transition_duration"] == 300  # really written by OBS
    rep = _score(task, real_instance, real_instance / "real_oracle")
    assert rep["score"] >= 99, [(c["name"], c["score"], c["message"]) for c in rep["checks"]]


@pytest.mark.obs
@pytest.mark.slow
@needs_obs
def test_real_obs_cam_4px_mutant_lowers_geometry_only(real_instance: Path) -> None:
    mut = real_instance / "real_cam4"
    shutil.copytree(real_instance / "real_oracle", mut)
    path = mut / "obs-studio" / COLL_FILE
    coll = json.loads(path.read_text())
    live = next(s for s in coll["sources"] if s["name"] == "Live")
    next(it for it in live["settings"]["items"] if it["name"] == "Cam")["pos"]["x"] += 4
    path.write_text(json.dumps(coll))
    base = {c["name"]: c["score"] for c in _score("R06.12.01.01-T01", real_instance, real_instance / "real_oracle")["checks"]}
    got = {c["name"]: c["score"] for c in _score("R06.12.01.01-T01", real_instance, mut)["checks"]}
    assert {n for n in base if got[n] < base[n] - 1e-3} == {"cam_geometry"}


@pytest.mark.obs
@pytest.mark.slow
@needs_obs
def test_real_obs_cam_3px_near_miss_moved_in_obs_zeroes_the_geometry_unit(real_instance: Path) -> None:
    """Issue 21's real-app near-miss for T01 and T17: the Cam moved 3 px by OBS itself (over
    obs-websocket) and saved by OBS: that unit is outside the seed's +-2 px, so it scores 0."""
    saved = json.loads((real_instance / "real_near" / "obs-studio" / COLL_FILE).read_text())
    live = next(s for s in saved["sources"] if s["name"] == "Live")
    oracle = json.loads((real_instance / "real_oracle" / "obs-studio" / COLL_FILE).read_text())
    live0 = next(s for s in oracle["sources"] if s["name"] == "Live")
    cam_x = [next(it for it in sc["settings"]["items"] if it["name"] == "Cam")["pos"]["x"] for sc in (live0, live)]
    assert cam_x[1] - cam_x[0] == pytest.approx(NEAR_MISS_CAM_PX), cam_x  # OBS saved the move
    for task, unit in (("R06.12.01.01-T01", "cam_geometry"), ("R06.12.01.01-T17", "transforms")):
        base = {c["name"]: c for c in _score(task, real_instance, real_instance / "real_oracle")["checks"]}
        got = {c["name"]: c for c in _score(task, real_instance, real_instance / "real_near")["checks"]}
        assert base[unit]["status"] == "pass" and got[unit]["score"] == 0.0, (task, got[unit]["message"])
        assert {n for n in base if abs(got[n]["score"] - base[n]["score"]) > 1e-3} == {unit}, task


#: tasks whose oracle collection a real OBS 29 can load and save back unchanged in meaning (not T12/T15:
#: Debian's OBS drops browser sources; not T20: OBS drops module data of plugins it does not have)
ROUND_TRIP = ["R06.12.01.01-T03", "R06.12.01.01-T06", "R06.12.01.01-T07", "R06.12.01.01-T16"]


@pytest.mark.obs
@pytest.mark.slow
@needs_obs
@pytest.mark.parametrize("task", ROUND_TRIP)
def test_oracle_collection_survives_real_obs_round_trip(task: str, tmp_path: Path) -> None:
    """Our synthetic collection, loaded by OBS 29 and saved by it, still scores as the oracle."""
    inst = synth_instance(task, tmp_path / "inst", seed=2)
    scenes = inst / "oracle" / "obs-studio" / "basic" / "scenes"
    (coll_path,) = list(scenes.glob("*.json"))
    coll = json.loads(coll_path.read_text())
    with ObsInstance(collection=coll, profile_name="RoundTrip") as obs_inst:
        written = obs_inst.collection_path.read_text() if obs_inst.collection_path.exists() else ""
        assert obs_inst.stop() == 0
        text = obs_inst.collection_path.read_text()
    assert text != written, "the collection was not re-saved by OBS"
    coll_path.write_text(text)
    work = tmp_path / "work"
    overlay(inst / "workdir", inst / "oracle", work)
    rep = score_task(task, work, inst / "gt", load_solution_events(inst / "oracle")).to_dict()
    assert rep["score"] >= 99, [(c["name"], c["score"], c["message"]) for c in rep["checks"] if c["status"] != "pass"]


#: T08's replays from one replay-buffer run (max 30 s, keyframe 1 s): a save at NEAR_MISS_SAVE_S holds
#: about that much (26.5-28.5 s: the seed's 30 +- 1 s missed by 1.5 s or more: the near-miss), a
#: save at ORACLE_SAVE_S a full 30 s (the buffer holds 30 s plus at most one keyframe interval)
NEAR_MISS_SAVE_S = 27.5
ORACLE_SAVE_S = 32.0


def _save_replay(c: Any, previous: str) -> str:
    """Save the replay buffer; return the new replay's path once OBS reports it written."""
    import time

    c.save_replay_buffer()
    for _ in range(40):
        time.sleep(0.25)
        try:
            saved = c.get_last_replay_buffer_replay().saved_replay_path
        except Exception:  # "no replay saved yet" is an error reply until it lands
            saved = ""
        if saved and saved != previous and Path(saved).exists() and Path(saved).stat().st_size > 0:
            return str(saved)
    return ""


def _t08_score(inst: Path, real: Path, replay: str, work: Path) -> dict:
    """Score one solution folder holding exactly `replay` (the other replay moved out)."""
    from verifiers.synth import InstanceWriter

    InstanceWriter.write_events(real, [ObsEvent.of("ReplayBufferSaved", ReplaySavedData(replay)).event(40_000)])
    overlay(inst / "workdir", real, work)
    return score_task("R06.12.01.01-T08", work, inst / "gt", load_solution_events(real)).to_dict()


@pytest.mark.obs
@pytest.mark.slow
@needs_obs
def test_t08_real_replay_buffer_oracle(tmp_path: Path) -> None:
    """T08 for real: OBS 29 with the replay buffer set in its profile, buffer started, 30 s replay saved.

    Small output (320x200, 15 fps, 300 kbps, keyframe 1 s) keeps the encoder cheap; the settings the
    task checks (30 s, 512 MB, name format, folder, F9) are the task's. OBS writes the replay and
    re-saves the profile; both are scored with the T08 scorer. The real-app near-miss (issue 21)
    comes from the same buffer run: a replay saved 27.5 s in is too short for the seed's 30 +- 1 s,
    so that part of replay_file fails and nothing else moves.
    """
    import time

    from verifiers.tasks.streaming._shared.recording import probe

    task = "R06.12.01.01-T08"
    inst = synth_instance(task, tmp_path / "inst", seed=3)
    real = tmp_path / "real"
    replays = real / "recordings" / "replays"
    replays.mkdir(parents=True)
    basic = {"Output": {"Mode": "Advanced"},
             "AdvOut": {"RecType": "Standard", "RecFilePath": str(replays), "RecFormat": "mkv",
                        "RecEncoder": "obs_x264", "RecTracks": "1", "RecRB": "true", "RecRBTime": "30",
                        "RecRBSize": "512"},
             "Video": {"BaseCX": "320", "BaseCY": "200", "OutputCX": "320", "OutputCY": "200", "FPSType": "1",
                       "FPSInt": "15"},
             "Hotkeys": {"ReplayBuffer.Save": json.dumps({"bindings": [{"key": "OBS_KEY_F9"}]})}}
    coll = {"name": "Replay", "current_scene": "Only", "current_program_scene": "Only",
            "scene_order": [{"name": "Only"}],
            "sources": [{"id": "color_source", "versioned_id": "color_source_v3", "name": "Colour",
                         "settings": {"width": 320, "height": 200, "color": 4282400832}},
                        {"id": "scene", "versioned_id": "scene", "name": "Only",
                         "settings": {"items": [{"name": "Colour", "id": 1, "visible": True}], "id_counter": 1,
                                      "custom_size": False}}]}
    profile = {"basic.ini": basic,
               "recordEncoder.json": {"rate_control": "CBR", "bitrate": 300, "keyint_sec": 1, "preset": "ultrafast"}}
    with ObsInstance(collection=coll, profile=profile, profile_name="Replay", ws_password="t08-pw") as o:
        c = obs.ReqClient(host="127.0.0.1", port=o.ws_port, password="t08-pw", timeout=10)
        try:
            c.start_replay_buffer()
            t0 = time.monotonic()
            time.sleep(NEAR_MISS_SAVE_S)
            short = _save_replay(c, "")
            time.sleep(max(0.0, t0 + ORACLE_SAVE_S - time.monotonic()))
            saved = _save_replay(c, short)
            c.stop_replay_buffer()
            for _ in range(40):  # closing OBS while the output still stops can hang its shutdown
                if not c.get_replay_buffer_status().output_active:
                    break
                time.sleep(0.25)
            time.sleep(1.0)
        finally:
            c.disconnect()
        assert short and saved, f"OBS never reported both saved replays: {short!r}, {saved!r}"
        assert o.stop() == 0
        dest = real / "obs-studio"
        shutil.copytree(o.profile_dir, dest / "basic" / "profiles" / "Replay")
        shutil.copy2(o.config_dir / "global.ini", dest / "global.ini")
    near = tmp_path / "near"
    shutil.copytree(real, near)
    (near / "recordings" / "replays" / Path(saved).name).unlink()   # near-miss: only the short replay
    (replays / Path(short).name).unlink()                           # oracle: only the 30 s replay
    rep = _t08_score(inst, real, saved, tmp_path / "work")
    assert rep["score"] >= 99, [(c["name"], c["score"], c["message"], c["evidence"]) for c in rep["checks"]]

    short_s = probe(Path(near / "recordings" / "replays" / Path(short).name)).duration_s
    assert short_s is not None and short_s < 29.0, f"the early save was not short enough to be a near-miss: {short_s}"
    miss = _t08_score(inst, near, short, tmp_path / "work-near")
    base = {c["name"]: c for c in rep["checks"]}
    got = {c["name"]: c for c in miss["checks"]}
    assert {n for n in base if got[n]["score"] < base[n]["score"] - 1e-3} == {"replay_file"}, miss["checks"]
    ev = got["replay_file"]["evidence"]
    assert ev["30 s long"] is False and all(v for k, v in ev.items() if k.endswith(("replay", "format", "names it"))), ev


@pytest.mark.obs
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("openbox") is None, reason="openbox needed for focus and keys")
@needs_obs
async def test_t06_real_run_hotkeys_scored_from_live_events(tmp_path: Path) -> None:
    """T06 end to end: OBS 29 loads the oracle collection, the shipped T06 scenario presses the keys
    (XTEST), the product OBS observer records the changes, and the T06 scorer judges those events.

    The real-app near-miss (issue 21): OBS is started again on what it saved (same Xvfb), the
    Overlay item of one scene is moved NEAR_MISS_OVERLAY_PX over obs-websocket (the pass line of
    identical_transforms is 0.5 px), and OBS saves again: that pair scores 0, nothing else moves."""
    from monitor.bus import EventBus
    from monitor.commands.scenario import start_obs_events
    from scenarios.engine import ScenarioEngine
    from scenarios.loader import load_scenario
    from scenarios.x11 import X11Driver

    task = "R06.12.01.01-T06"
    inst = synth_instance(task, tmp_path / "inst", seed=4)
    scenes = inst / "oracle" / "obs-studio" / "basic" / "scenes"
    (coll_path,) = list(scenes.glob("*.json"))
    coll = json.loads(coll_path.read_text())
    scenario = load_scenario(SCENARIOS / f"{task}.yaml")
    recorded: list[dict] = []
    with ObsInstance(collection=coll, ws_password="t06-pw", window_manager=True) as o:
        bus = EventBus()
        bus.add_sink(lambda e: recorded.append(e.to_dict()))
        with X11Driver(o.display) as driver:
            engine = ScenarioEngine(scenario, bus, driver, o.display)
            feed = await start_obs_events(bus, o.ws_url, "t06-pw")
            try:
                result = await engine.run()
            finally:
                await feed.stop()
        assert o.stop() == 0
        coll_path.write_text(o.collection_path.read_text())  # as OBS saved it after the run
        moved_scene = await asyncio.to_thread(_move_one_overlay, o)
        assert o.stop() == 0
        near_text = o.collection_path.read_text()
    real = tmp_path / "real"
    shutil.copytree(inst / "oracle", real)
    (real / "events.jsonl").unlink()
    from verifiers.synth import InstanceWriter

    InstanceWriter.write_events(real, recorded)
    work = tmp_path / "work"
    overlay(inst / "workdir", real, work)
    rep = score_task(task, work, inst / "gt", load_solution_events(real)).to_dict()
    checks = {c["name"]: c for c in rep["checks"]}
    assert result.passed, [r.detail for r in result.expectations if not r.passed]  # the scenario's own verdict
    assert checks["hotkeys_work"]["status"] == "pass", (checks["hotkeys_work"]["message"],
                                                        checks["hotkeys_work"]["evidence"])
    assert rep["score"] >= 99

    near = tmp_path / "near"
    shutil.copytree(real, near)
    (near_coll,) = list((near / "obs-studio" / "basic" / "scenes").glob("*.json"))
    near_coll.write_text(near_text)
    overlay(inst / "workdir", near, tmp_path / "work-near")
    got = {c["name"]: c for c in score_task(task, tmp_path / "work-near", inst / "gt",
                                            load_solution_events(near)).to_dict()["checks"]}
    assert {n for n in checks if abs(got[n]["score"] - checks[n]["score"]) > 1e-3} == {"identical_transforms"}, got
    unit = got["identical_transforms"]
    xs = {scene: tf[0] for scene, tf in unit["evidence"]["transforms"].items()}
    assert moved_scene in xs and next(iter(xs)) != moved_scene, xs
    assert xs[moved_scene] - min(xs.values()) == pytest.approx(NEAR_MISS_OVERLAY_PX), xs  # OBS saved the move
    n_pairs = len(xs) - 1
    assert unit["score"] == pytest.approx((n_pairs - 1) / n_pairs), unit  # exactly the moved pair scores 0


#: identical_transforms compares positions with a 0.5 px pass line: 1 px is outside
NEAR_MISS_OVERLAY_PX = 1.0


#: the scene whose Overlay the near-miss moves: the last of the task's three (the check compares
#: each scene's Overlay with the first one's, so moving this one breaks exactly one pair)
NEAR_MISS_SCENE = "Desktop"


def _move_one_overlay(o: ObsInstance) -> str:
    """Start OBS again on its saved collection and move NEAR_MISS_SCENE's Overlay item by
    NEAR_MISS_OVERLAY_PX over obs-websocket."""
    o.start()
    c = obs.ReqClient(host="127.0.0.1", port=o.ws_port, password="t06-pw", timeout=10)
    try:
        scene = NEAR_MISS_SCENE
        item = c.get_scene_item_id(scene, "Overlay").scene_item_id
        x = c.get_scene_item_transform(scene, item).scene_item_transform["positionX"]
        c.set_scene_item_transform(scene, item, {"positionX": x + NEAR_MISS_OVERLAY_PX})
    finally:
        c.disconnect()
    return scene
