"""R06.12.01.01-T20: Advanced Scene Switcher macros: Privacy on sensitive windows, back 2 s later, Mic muted.

Files: the macros the plugin saves in the collection (modules.advanced-scene-switcher.macros) must
hold a window-title condition on Password and Bank and a scene-switch action to Privacy (read
tolerantly: the plugin's JSON keys change between versions). Live: the T20 scenario
(scenarios/files/R06.12.01.01-T20.yaml) focuses windows at known times and the OBS observer records
program-scene and Mic mute changes. Emulated (catalog): the plugin is not in Debian's OBS.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from verifiers.apps.obs.collection import Macro
from verifiers.checks import Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.evidence import InputMuteData, ObsEvent, ScenarioAction, SceneData
from verifiers.params import NoParams
from verifiers.paramtypes.streaming import ReturnPrevious, SwitchOnMatch
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

TASK = "R06.12.01.01-T20"
N = check_names(TASK)
#: mic_mute ignores samples this close to a scene or mute change: the plugin acts on its macro
#: interval (300 ms by default), so the mute may trail the switch by up to one interval
EDGE_GUARD_MS = 300.0
PRIVACY = "Privacy"
MIC = "Mic"
MATCH_STEPS = ("vault", "bank")
LEAVE_STEPS = {"vault": "leave_vault", "bank": "leave_bank"}
WATCH_FROM, WATCH_TO = "notes_first", "end"
TIMES_MS = {"open_vault": 0, "open_bank": 0, "open_notes": 0, "notes_first": 2000, "vault": 4000,
            "leave_vault": 6000, "bank": 9000, "leave_bank": 10500, "end": 13500}


def macro_config_ok(macros: list[Macro], terms: list[str]) -> dict[str, bool]:
    """Window condition(s) naming every term, a switch to Privacy, and a Mic mute action, anywhere in the macros."""
    text = json.dumps([m.raw for m in macros])
    conds = [json.dumps(c) for m in macros for c in m.conditions if "window" in str(c.get("id", "")).lower()]
    acts = [json.dumps(a) for m in macros for a in m.actions]
    return {"window condition on " + "/".join(terms): all(any(t in c for c in conds) for t in terms),
            "switch to Privacy": any("scene_switch" in a and f'"{PRIVACY}"' in a for a in acts),
            "mute Mic": any("audio" in a and f'"{MIC}"' in a for a in acts) or (f'"{MIC}"' in text and "mute" in text)}


@dataclass(frozen=True)
class Run:
    """What the run recorded: scenario step times, program changes, the initial scene, the watch window."""

    acts: dict[str, float]
    changes: list[tuple[float, str]]
    initial: str | None
    t0_ms: float
    t1_ms: float


class PrivacySwitch(ObsTask):
    task_id = TASK
    collection_scene = PRIVACY

    @provides
    def run(self) -> Run:
        coll = self.coll
        acts = scenario_actions(self.ctx.events_of("scenario", "action"))
        events = self.ctx.events or []
        changes = program_changes(events)
        initial = initial_program_scene(events) or coll.current_program_scene
        t0, t1 = acts.get(WATCH_FROM, 0.0), acts.get(WATCH_TO, max([tc for tc, _ in changes], default=0.0))
        return Run(acts, changes, initial, t0, t1)

    @check(N.switch_on_match)
    def switch_on_match(self, p: SwitchOnMatch, curve: Curve) -> Result:
        run = self.run
        cfg = macro_config_ok(self.coll.macros(), list(p.title_terms))
        lat = {}
        for step in MATCH_STEPS:
            t = run.acts.get(step)
            hit = next((tc for tc, n in run.changes if t is not None and t <= tc <= t + 2000 and n == PRIVACY), None)
            lat[step] = None if hit is None else hit - t
        on_time = {f"Privacy within {p.max_latency_ms:g} ms of {s}": v is not None and v <= p.max_latency_ms
                   for s, v in lat.items()}
        parts = {**{f"config: {k}": v for k, v in cfg.items() if k != "mute Mic"}, **on_time}
        return Result(curve.count(sum(parts.values()), len(parts)), {"latency_ms": lat, **parts},
                      "; ".join(f"not {k}" for k, v in parts.items() if not v))

    @provides
    def switched(self) -> float:
        """Share of the sensitive windows after which Privacy came on (within 2 s, the detection window
        of switch_on_match): the primary change. Not switching at all never triggers falsely and
        never unmutes at the wrong time, so those shares are paid in proportion to it (rule 3)."""
        run = self.run
        hits = [any(t <= tc <= t + 2000 and n == PRIVACY for tc, n in run.changes)
                for t in (run.acts.get(s) for s in MATCH_STEPS) if t is not None]
        return sum(hits) / len(MATCH_STEPS)

    @check(N.no_false_trigger)
    def no_false_trigger(self, p: NoParams, curve: Curve) -> Result:
        run = self.run
        allowed = [(run.acts[s], run.acts[s] + 1000) for s in MATCH_STEPS if s in run.acts]
        false = [tc for tc, n in run.changes if n == PRIVACY and run.t0_ms <= tc <= run.t1_ms
                 and not any(a <= tc <= b for a, b in allowed)]
        msg = f"{len(false)} switch(es) to Privacy without a sensitive window" if false else ""
        if self.switched < 1:
            msg = "; ".join(m for m in (msg, f"paid for the {self.switched:.0%} of sensitive windows that switched") if m)
        return Result(curve.passes(not false) * self.switched, {"false_switch_ms": false, "switched": self.switched},
                      msg)

    @check(N.return_previous)
    def return_previous(self, p: ReturnPrevious, curve: Curve) -> Result:
        run, rets = self.run, {}
        for step, leave in LEAVE_STEPS.items():
            t_on, t_leave = run.acts.get(step), run.acts.get(leave)
            before = scene_at(run.changes, (t_on or 0) - 1, run.initial)
            back = next(((tc, n) for tc, n in run.changes if t_leave is not None and tc > t_leave and n != PRIVACY), None)
            if back is None or t_leave is None:
                rets[step] = {"ok": 0.0, "why": "never left Privacy"}
                continue
            delay_s = (back[0] - t_leave) / 1000
            same = back[1] == before
            rets[step] = {"ok": curve.part("delay").score(delay_s - p.return_delay_s, p.tolerance_s) if same else 0.0,
                          "delay_s": delay_s, "to": back[1], "previous": before}
        msgs = [f"after {s}: " + (r["why"] if "why" in r else f"returned to {r['to']} after {r['delay_s']:.1f} s")
                for s, r in rets.items() if r["ok"] < 1]
        return Result(curve.count([r["ok"] for r in rets.values()]), rets, "; ".join(msgs))

    @check(N.mic_mute)
    def mic_mute(self, p: NoParams, curve: Curve) -> Result:
        run, coll = self.run, self.coll
        mutes = mute_changes(self.ctx.events or [], MIC)
        mic0 = bool(coll.sources[MIC].muted) if MIC in coll.sources else False
        edges = sorted([tc for tc, _ in run.changes] + [tc for tc, _ in mutes])

        def agrees(a_ms: float, b_ms: float, want_muted: bool) -> bool:
            """Every 50 ms sample of [a, b) away from an edge has the wanted mute state."""
            for t in np.arange(a_ms, b_ms, 50.0):
                if not any(abs(t - e) <= EDGE_GUARD_MS for e in edges):
                    if next((m for tc, m in reversed(mutes) if tc <= t), mic0) != want_muted:
                        return False
            return True

        episodes = privacy_episodes(run.changes, run.initial, run.t0_ms, run.t1_ms)
        items = {f"Privacy {on / 1000:.1f}-{off / 1000:.1f} s": agrees(on, off, True) and agrees(off, nxt, False)
                 for on, off, nxt in episodes}
        msg = "" if items and all(items.values()) else \
            ("no Privacy episode" if not items else "Mic mute does not follow the Privacy scene")
        if self.switched < 1:   # Privacy (muted) all along follows the scene without doing the task
            msg = "; ".join(m for m in (msg, f"paid for the {self.switched:.0%} of sensitive windows that switched") if m)
        return Result(curve.count(sum(items.values()), len(items)) * self.switched,
                      {"episodes": items, "switched": self.switched}, msg)

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        (inst.workdir / "fixtures").mkdir(parents=True)
        (inst.workdir / "fixtures" / "fake_password_manager").write_text(
            "#!/bin/sh\n# synthetic password manager window (the harness's test window program)\n"
            "exec tally-testwindow --title 'Password Manager — Vault'\n")
        good = build()

        def solution(folder: Path, coll: dict, run: bool = True, **kw: Any) -> None:
            cfg = folder / OBS_DIR
            O.write_collection(cfg, coll)
            O.write_global(cfg, coll["name"], "Stream")
            if run:
                InstanceWriter.write_events(folder, live_events(**kw))

        solution(inst.oracle, good)
        solution(inst.mutant("privacy_at_700ms", [N.switch_on_match], "macro interval 700 ms: Privacy too late"),
                 good, latency_ms=700)
        for ms, lowers, side in pass_line_pair(450.0, 550.0, N.switch_on_match):   # Privacy within 500 ms
            solution(inst.mutant(f"privacy_at_{ms:.0f}ms_{side}", lowers, f"Privacy {ms:.0f} ms after the match: "
                                 f"{side} 500 ms"), good, latency_ms=ms)
        solution(inst.mutant("false_trigger_notes", [N.no_false_trigger], "title match too broad: Notes triggers"),
                 good, false_trigger=True)
        solution(inst.mutant("return_after_4s", [N.return_previous], "return delay set to 4 s"), good, return_s=4.0)
        solution(inst.mutant("return_after_2_4s_inside", [], "back after 2.4 s: inside 2 +-0.5 s"), good, return_s=2.4)
        solution(inst.mutant("return_after_2_6s_outside", [N.return_previous], "back after 2.6 s: past 2 +-0.5 s"),
                 good, return_s=2.6)
        solution(inst.mutant("returns_to_starting", [N.return_previous], "returns to a fixed scene, not the previous"),
                 good, return_to="Starting Soon")
        solution(inst.mutant("mic_not_muted", [N.mic_mute], "no mute action"), good, mute=False)
        c = copy.deepcopy(good)
        c["modules"]["advanced-scene-switcher"]["macros"] = []
        solution(inst.mutant("no_macro_config", [N.switch_on_match], "switching done outside the plugin"), c)
        solution(inst.mutant("no_run_recorded", [N.switch_on_match, N.no_false_trigger, N.return_previous, N.mic_mute],
                             "no scenario run: cannot judge"), good, run=False)
        write_cases(inst, good)


def write_cases(inst: InstanceWriter, good: dict[str, Any]) -> None:
    """Self-test cases (verifiers.synthcases): the collection as a newer OBS saves it (>= 95) and gaming
    baselines (<= 5) with the run such a setup records (the same scenario, the OBS events it causes)."""
    rel = f"{OBS_DIR}/basic/scenes/Stream.json"
    base = inst.root / "baselines"
    plain = copy.deepcopy(good)   # the scenes made, no macro
    plain["modules"].pop("advanced-scene-switcher", None)
    O.write_collection(base / "plain" / OBS_DIR, plain)
    steps = [event("scenario", "start", 0, {"name": "T20 privacy auto-switch"}),
             *(ScenarioAction(step, actual_ns=t * 1_000_000).event(t) for step, t in TIMES_MS.items())]
    for d in ("idle", "always"):
        (base / d).mkdir(parents=True, exist_ok=True)
    InstanceWriter.write_events(base / "idle", steps)
    InstanceWriter.write_events(base / "always", sorted([
        *steps, ObsEvent.of("CurrentProgramSceneChanged", SceneData(PRIVACY)).event(100),
        ObsEvent.of("InputMuteStateChanged", InputMuteData(MIC, True)).event(120)], key=lambda e: e["mono_ns"]))
    coll = (rel, f"copy:baselines/plain/{rel}")
    inst.export_case("newer_obs_save", [(rel, f"json_variant:oracle/{rel}"), ("events.jsonl", "copy:oracle/events.jsonl")],
                     why="keys in another order, unknown keys, versions one higher")
    inst.baseline_case("scenes_no_macro_idle_run", [coll, ("events.jsonl", "copy:baselines/idle/events.jsonl")],
                       why="the scenes without the macros: nothing switches during the run")
    inst.baseline_case("always_privacy_muted", [coll, ("events.jsonl", "copy:baselines/always/events.jsonl")],
                       why="Privacy put on program before the run and the Mic muted: nothing ever shows, nothing switches")
    inst.baseline_case("garbage_collection", [(rel, f"json_garbage:oracle/{rel}"),
                                              ("events.jsonl", "copy:oracle/events.jsonl")],
                       why="the collection's structure with random values beside the oracle's run")


def privacy_episodes(changes: list[tuple[float, str]], initial: str | None, t0_ms: float,
                     t1_ms: float) -> list[tuple[float, float, float]]:
    """(on, off, next on) of each stretch of Privacy on program within [t0, t1]: Privacy from `on`
    to `off`, then another scene until `next on` (the next Privacy, or t1)."""
    marks = [(t0_ms, scene_at(changes, t0_ms, initial)), *((tc, n) for tc, n in changes if t0_ms < tc < t1_ms),
             (t1_ms, "")]
    ons = [i for i, (_t, n) in enumerate(marks[:-1]) if n == PRIVACY and (i == 0 or marks[i - 1][1] != PRIVACY)]
    out = []
    for i in ons:
        j = next(k for k in range(i + 1, len(marks)) if marks[k][1] != PRIVACY)
        k = next((m for m in range(j + 1, len(marks)) if marks[m][1] == PRIVACY), len(marks) - 1)
        out.append((marks[i][0], marks[j][0], marks[k][0]))
    return out


def build() -> dict[str, Any]:
    inputs = [O.source("Game", "xcomposite_input", {}), O.source("Privacy Card", "image_source",
                                                                 {"file": "/home/streamer/work/bg/privacy.png"}),
              O.source(MIC, "pulse_input_capture", {"device_id": "default"})]
    scenes = [O.scene("Gameplay", [O.item("Game", 1), O.item(MIC, 2)]),
              O.scene("Starting Soon", [O.item("Privacy Card", 1)]),
              O.scene(PRIVACY, [O.item("Privacy Card", 1), O.item(MIC, 2)])]

    def macro(name: str, term: str) -> dict[str, Any]:
        return {"name": name, "pause": False, "parallel": False, "onChange": True,
                "conditions": [{"id": "window", "logic": 0, "window": f".*{term}.*", "useRegex": True,
                                "focus": True, "windowFocusChanged": False}],
                "actions": [{"id": "scene_switch", "sceneSelection": {"type": 0, "name": PRIVACY},
                             "transitionSelection": {"type": 0, "name": "Cut"}},
                            {"id": "audio", "action": 0, "audioSource": {"type": 0, "name": MIC}}]}

    back = {"name": "Leave privacy", "conditions": [{"id": "scene", "type": 0, "sceneSelection": {"name": PRIVACY}},
                                                    {"id": "window", "logic": 2, "window": ".*(Password|Bank).*",
                                                     "useRegex": True, "focus": True,
                                                     "duration": {"value": {"value": 2.0}, "unit": 0}}],
            "actions": [{"id": "scene_switch", "sceneSelection": {"type": 1, "name": "Previous Scene"}},
                        {"id": "audio", "action": 1, "audioSource": {"type": 0, "name": MIC}}]}
    mods = {"advanced-scene-switcher": {"macros": [macro("Privacy: Password", "Password"),
                                                   macro("Privacy: Bank", "Bank"), back],
                                        "interval": 300, "active": True}}
    return O.collection("Stream", scenes, inputs, current_scene="Gameplay", modules=mods)


def live_events(*, latency_ms: float = 250, false_trigger: bool = False, return_s: float = 2.1,
                return_to: str = "Gameplay", mute: bool = True) -> list[dict[str, Any]]:
    ev = [event("scenario", "start", 0, {"name": "T20 privacy auto-switch"})]
    for step, t in TIMES_MS.items():
        ev.append(ScenarioAction(step, actual_ns=t * 1_000_000).event(t))

    def privacy(t_on: float, t_off: float, back_to: str) -> None:
        ev.append(ObsEvent.of("CurrentProgramSceneChanged", SceneData(PRIVACY)).event(t_on))
        if mute:
            ev.append(ObsEvent.of("InputMuteStateChanged", InputMuteData(MIC, True)).event(t_on + 20))
        ev.append(ObsEvent.of("CurrentProgramSceneChanged", SceneData(back_to)).event(t_off))
        if mute:
            ev.append(ObsEvent.of("InputMuteStateChanged", InputMuteData(MIC, False)).event(t_off + 20))

    if false_trigger:
        privacy(TIMES_MS["notes_first"] + 200, TIMES_MS["notes_first"] + 700, "Gameplay")
    privacy(TIMES_MS["vault"] + latency_ms, TIMES_MS["leave_vault"] + return_s * 1000, return_to)
    if return_to != "Gameplay":  # the operator switches back to Gameplay before the next test
        ev.append(ObsEvent.of("CurrentProgramSceneChanged", SceneData("Gameplay")).event(TIMES_MS["bank"] - 500))
    privacy(TIMES_MS["bank"] + latency_ms, TIMES_MS["leave_bank"] + return_s * 1000, return_to)
    return sorted(ev, key=lambda e: e["mono_ns"])
