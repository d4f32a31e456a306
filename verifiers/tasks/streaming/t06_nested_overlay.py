"""R06.12.01.01-T06: one 'Overlay' scene nested in three scenes, scene hotkeys and a Mic mute toggle.

Files: the collection (nested scene items, their transforms, SelectScene and mute/unmute bindings).
Live: the T06 scenario (scenarios/files/R06.12.01.01-T06.yaml) presses Ctrl+Alt+1/2/3/1 and
Ctrl+Alt+M twice; the read-only OBS observer records program-scene and mute changes. A hotkey
"works" when the expected change follows the key within 500 ms.

OBS 29 has no single mute-toggle hotkey: binding the same chord to both halves of the mute/unmute
pair makes it toggle, which is what the scorer reads from the file.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np

from verifiers.apps.obs.collection import Collection
from verifiers.apps.obs.hotkeys import normalize
from verifiers.checks import Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.evidence import InputMuteData, ObsEvent, ObsSnapshot, ObsState, ScenarioAction, SceneData
from verifiers.params import NoParams
from verifiers.paramtypes.streaming import HotkeysWork, NestedOverlay
from verifiers.synth import InstanceWriter
from verifiers.synthkit import obs_synth as O
from verifiers.tasks.streaming._shared.near_misses import pass_line_pair
from verifiers.tasks.streaming._shared.obs_config import OBS_DIR
from verifiers.tasks.streaming._shared.obs_task import ObsTask
from verifiers.tasks.streaming._shared.run_events import (
    event,
    initial_program_scene,
    mute_changes,
    program_changes,
    scenario_actions,
    scene_at,
)

TASK = "R06.12.01.01-T06"
N = check_names(TASK)
OVERLAY = "Overlay"
MIC = "Mic"
WITHIN_MS = 500.0
#: scenario step -> what must follow it (from scenarios/files/R06.12.01.01-T06.yaml)
SCENE_STEPS = {"k1": "Gameplay", "k2": "Just Chatting", "k3": "Desktop", "k1_again": "Gameplay"}
MUTE_STEPS = ("mute", "unmute")


def _overlay_items(coll: Collection, scenes: list[str]) -> dict[str, Any]:
    return {s: coll.scenes[s].item(OVERLAY) for s in scenes if s in coll.scenes and coll.scenes[s].item(OVERLAY)}


def live_hotkeys(events: list[dict[str, Any]], initial: str | None) -> tuple[list[str], list[str]]:
    """(passed, failed) scenario steps: the expected change within 500 ms of each key press.

    A scene key whose scene is already on program at the press cannot cause a change and proves
    nothing: it is no unit (the first Ctrl+Alt+1 on Gameplay; in a run where nothing switches, every
    later Ctrl+Alt+1 too, which used to pass by the program staying put).
    """
    acts = scenario_actions(events)
    changes = program_changes(events)
    mutes = mute_changes(events, MIC)
    passed, failed = [], []
    for step, want in SCENE_STEPS.items():
        t = acts.get(step)
        if t is not None and scene_at(changes, t, initial) == want:
            continue
        hit = t is not None and any(t <= tc <= t + WITHIN_MS and name == want for tc, name in changes)
        (passed if hit else failed).append(step)
    prev = None
    for step in MUTE_STEPS:
        t = acts.get(step)
        after = [(tc, m) for tc, m in mutes if t is not None and t <= tc <= t + WITHIN_MS]
        hit = bool(after) and (prev is None or after[0][1] != prev)
        if after:
            prev = after[0][1]
        (passed if hit else failed).append(step)
    return passed, failed


class NestedOverlayHotkeys(ObsTask):
    task_id = TASK
    collection_scene = OVERLAY

    @provides
    def items(self) -> dict[str, Any]:
        """Scene -> its Overlay item, for the scenes the task names that nest it."""
        return _overlay_items(self.coll, list(self.task.check(N.nested_overlay).typed.scenes))

    @check(N.nested_overlay)
    def nested_overlay(self, p: NestedOverlay, curve: Curve) -> Result:
        coll = self.coll
        ov = coll.scenes[OVERLAY]
        kinds = [coll.sources[n].kind for n in ov.item_names() if n in coll.sources]
        req = {"overlay has 3+ layers": len(ov.items) >= 3,
               "overlay has ticker text": any(k.startswith(("text_", "browser_source")) for k in kinds),
               **{f"nested in {s}": s in self.items for s in p.scenes}}
        missing = [k for k, v in req.items() if not v]
        return Result(curve.count(sum(req.values()), len(req)), {"missing": missing}, "; ".join(missing))

    @check(N.identical_transforms)
    def identical_transforms(self, p: NoParams, curve: Curve) -> Result:
        items = self.items
        tfs = list(items.values())
        if len(tfs) < 2:
            return Result.fail("Overlay is nested in fewer than two of the scenes")
        same = [it.transform.close_to(tfs[0].transform, tol_px=0.5) for it in tfs[1:]]
        return Result(curve.count(sum(same), len(same)),
                      {"transforms": {s: [it.transform.pos_x, it.transform.pos_y, it.transform.scale_x,
                                          it.transform.scale_y] for s, it in items.items()}},
                      "" if all(same) else "Overlay transforms differ between scenes")

    @check(N.hotkeys_work)
    def hotkeys_work(self, p: HotkeysWork, curve: Curve) -> Result:
        """Half the bindings in the collection, half their live effect in the scenario (per-item each)."""
        coll = self.coll
        files: dict[str, bool] = {}
        for scene, combo in p.scene_hotkeys.items():
            got = coll.scenes[scene].select_hotkeys if scene in coll.scenes else ()
            files[f"{scene} <- {combo}"] = normalize(combo) in got
        mute_combo = normalize(p.mute_hotkey)
        mic = coll.sources.get(MIC)
        hk = mic.hotkeys if mic else {}
        files[f"Mic mute toggle <- {p.mute_hotkey}"] = (mute_combo in hk.get("libobs.mute", ())
                                                        and mute_combo in hk.get("libobs.unmute", ()))
        self.ctx.events_of("scenario", "action")  # no recorded run: NoLiveEvidence -> this check is an error
        passed, failed = live_hotkeys(self.ctx.events or [], initial_program_scene(self.ctx.events)
                                      or coll.current_program_scene)
        f_ok = curve.count(sum(files.values()), len(files))
        l_ok = curve.count(len(passed), len(passed) + len(failed))
        msg = [f"binding missing: {k}" for k, v in files.items() if not v] + [f"no effect: {s}" for s in failed]
        return Result((f_ok + l_ok) / 2, {"bindings": files, "live_passed": passed, "live_failed": failed},
                      "; ".join(msg))

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        O.png(inst.workdir / "overlay" / "logo.png", 64, 64, (200, 40, 40, 255))
        good = build()
        write(inst.oracle, good, live_events())

        c = copy.deepcopy(good)
        O.find_source(c, "Just Chatting")["hotkeys"]["OBSBasic.SelectScene"] = [O.binding("3", ctrl=True, alt=True)]
        O.find_source(c, "Desktop")["hotkeys"]["OBSBasic.SelectScene"] = [O.binding("2", ctrl=True, alt=True)]
        write(inst.mutant("hotkey_wrong_scene", [N.hotkeys_work], "Ctrl+Alt+2/3 bound to each other's scene"),
              c, live_events(swap_23=True))

        c = copy.deepcopy(good)
        items = O.find_source(c, "Desktop")["settings"]["items"]
        items[:] = [it for it in items if it["name"] != OVERLAY]
        write(inst.mutant("overlay_missing_desktop", [N.nested_overlay], "Overlay not added to Desktop"),
              c, live_events())

        c = copy.deepcopy(good)
        O.find_item(c, "Just Chatting", OVERLAY)["pos"]["y"] += 10
        write(inst.mutant("overlay_moved", [N.identical_transforms], "Overlay 10 px lower in Just Chatting"),
              c, live_events())

        c = copy.deepcopy(good)
        O.find_source(c, MIC)["hotkeys"]["libobs.unmute"] = []
        write(inst.mutant("mute_only", [N.hotkeys_work], "Ctrl+Alt+M bound to Mute only: second press does nothing"),
              c, live_events(unmute_works=False))

        write(inst.mutant("slow_switch", [N.hotkeys_work], "scene switches land 700 ms after the key"),
              good, live_events(latency_ms=700))

        write(inst.mutant("no_run_recorded", [N.hotkeys_work], "files only: live check cannot judge"),
              good, None)
        # near misses: identical transforms within 0.5 px (one Overlay 0.4 / 0.6 px lower), a key's effect
        # within 500 ms (every switch 450 / 550 ms after its key)
        for dy_px, lowers, side in pass_line_pair(0.4, 0.6, N.identical_transforms):
            c = copy.deepcopy(good)
            O.find_item(c, "Just Chatting", OVERLAY)["pos"]["y"] += dy_px
            write(inst.mutant(f"overlay_{dy_px}px_lower_{side}", lowers,
                              f"Overlay {dy_px} px lower in Just Chatting: {side} the 0.5 px line"), c, live_events())
        for ms, lowers, side in pass_line_pair(450.0, 550.0, N.hotkeys_work):
            write(inst.mutant(f"switch_{ms:.0f}ms_{side}", lowers, f"scene switches {ms:.0f} ms after the key: "
                              f"{side} 500 ms"), good, live_events(latency_ms=ms))
        write_cases(inst, good)


def write_cases(inst: InstanceWriter, good: dict[str, Any]) -> None:
    """Self-test cases (verifiers.synthcases): the collection as a newer OBS saves it (>= 95) and gaming
    baselines (<= 5) with the run each records: OBS's new collection with an Overlay scene of its
    three layers and nothing else; the structure with random values."""
    rel = f"{OBS_DIR}/basic/scenes/Stream.json"
    base = inst.root / "baselines"
    plain = O.collection("Stream", [O.scene(OVERLAY, [
        O.item("Alerts Area", 1, pos=(560, 40)), O.item("Ticker", 2, pos=(0, 1020)), O.item("Logo", 3, pos=(1820, 20))]),
        O.scene("Gameplay", [O.item("Game Capture", 1)])],
        [s for s in good["sources"] if s["name"] in ("Alerts Area", "Ticker", "Logo", "Game Capture")],
        current_scene="Gameplay")
    steps = [e for e in live_events() if e["source"] == "scenario" or e["kind"] == "snapshot"]
    write(base / "overlay_only", plain, steps)
    inst.export_case("newer_obs_save", [(rel, f"json_variant:oracle/{rel}"), ("events.jsonl", "copy:oracle/events.jsonl")],
                     why="keys in another order, unknown keys, versions one higher")
    inst.baseline_case("overlay_scene_only_idle_run", [(rel, f"copy:baselines/overlay_only/{rel}"),
                                                       ("events.jsonl", "copy:baselines/overlay_only/events.jsonl")],
                       max_score=16.0,
                       why="the Overlay scene with its three layers, nested nowhere, no hotkeys; the keys change "
                           "nothing. Its 2 of 5 nested_overlay items (3+ layers, ticker text: 16) are work done")
    inst.baseline_case("garbage_collection", [(rel, f"json_garbage:oracle/{rel}"),
                                              ("events.jsonl", "copy:oracle/events.jsonl")],
                       why="the collection's structure with random values beside the oracle's run")


def build() -> dict[str, Any]:
    ctrl_alt = {"ctrl": True, "alt": True}
    mute = [O.binding("M", **ctrl_alt)]
    inputs = [
        O.source("Alerts Area", "color_source", {"color": 0x00000000, "width": 800, "height": 200},
                 versioned_id="color_source_v3"),
        O.source("Ticker", "text_ft2_source", {"text": "Welcome to the stream"}, versioned_id="text_ft2_source_v2"),
        O.source("Logo", "image_source", {"file": "/home/streamer/work/overlay/logo.png"}),
        O.source("Game Capture", "xcomposite_input", {}),
        O.source("Cam", "v4l2_input", {}),
        O.source("Display Capture", "xshm_input", {}),
        O.source(MIC, "pulse_input_capture", {"device_id": "default"},
                 hotkeys={"libobs.mute": mute, "libobs.push-to-mute": [], "libobs.push-to-talk": [],
                          "libobs.unmute": mute}),
    ]
    overlay_item = {"pos": (0.0, 0.0), "scale": (1.0, 1.0)}
    scenes = [
        O.scene(OVERLAY, [O.item("Alerts Area", 1, pos=(560, 40)), O.item("Ticker", 2, pos=(0, 1020)),
                          O.item("Logo", 3, pos=(1820, 20))]),
        O.scene("Gameplay", [O.item("Game Capture", 1), O.item(MIC, 2), O.item(OVERLAY, 3, **overlay_item)],
                select_hotkey=[O.binding("1", **ctrl_alt)]),
        O.scene("Just Chatting", [O.item("Cam", 1), O.item(MIC, 2), O.item(OVERLAY, 3, **overlay_item)],
                select_hotkey=[O.binding("2", **ctrl_alt)]),
        O.scene("Desktop", [O.item("Display Capture", 1), O.item(MIC, 2), O.item(OVERLAY, 3, **overlay_item)],
                select_hotkey=[O.binding("3", **ctrl_alt)]),
    ]
    return O.collection("Stream", scenes, inputs, current_scene="Gameplay")


def live_events(*, swap_23: bool = False, unmute_works: bool = True, latency_ms: float = 90.0) -> list[dict]:
    """What the observer and scenario record for a run against this solution (times from the yaml)."""
    steps = [("k1", 1000), ("k2", 2500), ("k3", 4000), ("k1_again", 5500), ("mute", 7000), ("unmute", 8500)]
    # the product observer's shape: kind "event" {type, data}, and a start snapshot (Gameplay on program,
    # so the first Ctrl+Alt+1 changes nothing, as in a real run)
    ev = [event("scenario", "start", 0, {"name": "T06 scene and mute hotkeys"}),
          ObsSnapshot("start", ObsState(current_program_scene="Gameplay")).event(10)]
    target = dict(SCENE_STEPS)
    if swap_23:
        target["k2"], target["k3"] = "Desktop", "Just Chatting"
    current = "Gameplay"
    for step, t in steps:
        ev.append(ScenarioAction(step, action="key", actual_ns=t * 1_000_000).event(t))
        if step in target and target[step] != current:
            current = target[step]
            ev.append(ObsEvent.of("CurrentProgramSceneChanged", SceneData(current)).event(t + latency_ms))
        elif step in MUTE_STEPS and (step == "mute" or unmute_works):
            ev.append(ObsEvent.of("InputMuteStateChanged", InputMuteData(MIC, step == "mute")).event(t + 60))
    return sorted(ev, key=lambda e: e["mono_ns"])


def write(folder: Path, coll: dict[str, Any], events: list[dict] | None) -> None:
    cfg = folder / OBS_DIR
    O.write_collection(cfg, coll)
    O.write_global(cfg, coll["name"], "Stream")
    if events is not None:
        InstanceWriter.write_events(folder, events)
