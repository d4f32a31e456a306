"""R06.12.01.01-T16: a Stinger with a track matte, used only for Live -> BRB, recorded.

Files: the collection's transitions (obs_stinger_transition settings), BRB's per-scene override,
global.ini's Studio Mode flag ([BasicWindow] PreviewProgramMode). Live: the observer's
SceneTransitionStarted/CurrentProgramSceneChanged events show which transition each switch used
(the scenario's second test switch must use Fade). Recording: recordings/stinger.mkv; swipe frames
are found by the swipe's colour, and the scene switch by the background changing from Live's to
BRB's colour (gt/stinger.json gives the colours the harness's scenes and swipe are made of).

Track matte layouts in OBS 29: 0 side-by-side, 1 stacked (same file), 2 separate file. The seed asks
for "track matte swipe_matte.webm (stacked layout)", which names a separate matte file; both
layouts 1 and 2 with that matte path are accepted (docs/streaming.md).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np

from verifiers.apps.obs.collection import Collection
from verifiers.base import AgentOutputError, Checks, NoLiveEvidence, ScoreContext, TaskVerifier
from verifiers.measure.errors import MediaError
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.synthkit import obs_synth as O
from verifiers.synthkit.streaming_media import solid, truncate, write_media
from verifiers.tasks.streaming.common import (
    OBS_DIR,
    collection_with,
    event,
    obs_events,
    path_ends_with,
    ramp,
    read_ini,
)
from verifiers.tasks.streaming.media import frames

REC = "recordings/stinger.mkv"
STINGER_KIND = "obs_stinger_transition"
HOME = "/home/streamer/work"


def stingers(coll: Collection) -> list[Any]:
    return [t for t in coll.transitions.values() if t.kind == STINGER_KIND]


def transitions_used(events: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    """(scene switched to, transition that started nearest before it within 1 s) per program change."""
    starts = [(ts, d.get("transitionName")) for ts, d in obs_events(events, "SceneTransitionStarted")]
    out = []
    for t, d in obs_events(events, "CurrentProgramSceneChanged"):
        near = [(abs(t - ts), name) for ts, name in starts if -1000 <= t - ts <= 1000]
        out.append((d.get("sceneName"), min(near)[1] if near else None))
    return out


def switch_timing(path: Path, colours: dict[str, list[int]]) -> dict[str, Any]:
    """Swipe start and the background switch (s) from the decoded recording."""
    swipe = np.array(colours["swipe_rgb"], float)
    live = np.array(colours["live_rgb"], float)
    brb = np.array(colours["brb_rgb"], float)
    t_swipe = t_switch = None
    swipe_frames = 0
    for t, img in frames(path, max_width_px=96):
        px = img.reshape(-1, 3).astype(float)
        d = np.stack([np.linalg.norm(px - c, axis=1) for c in (swipe, live, brb)], axis=1)
        label = d.argmin(axis=1)
        n_swipe = (label == 0).mean()
        if n_swipe > 0.02:
            swipe_frames += 1
            t_swipe = t if t_swipe is None else t_swipe
        rest = label[label != 0]
        if t_swipe is not None and t_switch is None and rest.size and (rest == 2).mean() > 0.5:
            t_switch = t
    return {"swipe_start_s": t_swipe, "switch_s": t_switch, "swipe_frames": swipe_frames}


@register
class StingerTrackMatte(TaskVerifier):
    task_id = "R06.12.01.01-T16"

    def score(self, ctx: ScoreContext, checks: Checks) -> None:
        coll = collection_with(ctx, scene="BRB")
        st = stingers(coll)
        p = checks.params("stinger_config")
        ini = read_ini(ctx.workdir / OBS_DIR / "global.ini") or {}
        studio = ini.get("BasicWindow", {}).get("PreviewProgramMode", "false").lower() == "true"
        mine = next((t for t in st if path_ends_with(t.settings.get("path"), p["path"])), st[0] if st else None)
        if mine is None:
            checks.fail("stinger_config", "no Stinger transition in the collection")
            checks.fail("track_matte", "no Stinger transition in the collection")
        else:
            s = mine.settings
            parts = {"path": path_ends_with(s.get("path"), p["path"]),
                     "transition point 600 ms": s.get("tp_type", 0) == 0
                     and s.get("transition_point") == p["transition_point_ms"],
                     "audio monitoring off": s.get("audio_monitoring", 0) == 0,
                     "studio mode": studio}
            bad = [k for k, v in parts.items() if not v]
            checks.set("stinger_config", sum(parts.values()) / len(parts),
                       {"name": mine.name, "transition_point": s.get("transition_point"), "studio_mode": studio,
                        "wrong": bad}, "; ".join(f"wrong: {b}" for b in bad))
            pm = checks.params("track_matte")
            mp = {"enabled": bool(s.get("track_matte_enabled")),
                  "matte file": path_ends_with(s.get("track_matte_path"), pm["matte_path"]),
                  "layout stacked/separate": s.get("track_matte_layout", 0) in (1, 2)}
            bad = [k for k, v in mp.items() if not v]
            checks.set("track_matte", sum(mp.values()) / len(mp),
                       {"layout": s.get("track_matte_layout"), "wrong": bad}, "; ".join(f"wrong: {b}" for b in bad))

        names = {t.name for t in st}
        brb = coll.scenes["BRB"]
        others_override = [n for n, sc in coll.scenes.items() if n != "BRB" and sc.transition_override in names]
        default_kind = coll.transition(coll.current_transition).kind if coll.current_transition in (
            *coll.transitions, "Fade", "Cut") else None
        files = {"BRB overrides with the Stinger": brb.transition_override in names,
                 "no other scene uses the Stinger": not others_override,
                 "default transition Fade": default_kind == "fade_transition"}
        try:
            if not obs_events(ctx.events_of("obs"), "SceneTransitionStarted"):
                raise NoLiveEvidence("no live evidence: the observer recorded no scene transition")
        except NoLiveEvidence as exc:  # no recorded switches: only this check cannot be judged
            checks.error("override_brb", str(exc))
        else:
            used = transitions_used(ctx.events or [])
            live_ok = [(sc, tr) for sc, tr in used if (tr in names) == (sc == "BRB")]
            to_brb = [u for u in used if u[0] == "BRB"]
            others = [u for u in used if u[0] != "BRB"]
            live = {"Live->BRB used the Stinger": bool(to_brb) and all(tr in names for _s, tr in to_brb),
                    "second test switch used Fade": bool(others) and all(tr == "Fade" for _s, tr in others)}
            allp = {**files, **live}
            bad = [k for k, v in allp.items() if not v]
            checks.set("override_brb", sum(allp.values()) / len(allp),
                       {"switches": used, "consistent": len(live_ok), "wrong": bad}, "; ".join(bad))

        pt = checks.params("timing_in_recording")
        try:
            tm = switch_timing(ctx.artifact(REC), ctx.gt_json("stinger.json"))
        except (AgentOutputError, MediaError) as exc:
            checks.fail("timing_in_recording", str(exc))
            return
        if tm["swipe_start_s"] is None or tm["switch_s"] is None:
            checks.fail("timing_in_recording", "no swipe frames or no switch to BRB in the recording", tm)
            return
        off_ms = (tm["switch_s"] - tm["swipe_start_s"]) * 1000
        err = off_ms - pt["switch_ms"]
        checks.set("timing_in_recording", ramp(err, pt["tolerance_ms"], 250), {**tm, "switch_after_ms": off_ms},
                   "" if abs(err) <= pt["tolerance_ms"] else f"scene switched {off_ms:.0f} ms into the stinger")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        colours = {"live_rgb": [30, 60, 200], "brb_rgb": [200, 40, 30], "swipe_rgb": [20, 220, 40]}
        inst.write_json(inst.gt / "stinger.json", colours)
        (inst.workdir / "transitions").mkdir(parents=True)
        for n in ("swipe.webm", "swipe_matte.webm"):  # placeholders: the scorer never decodes them
            write_media(inst.workdir / "transitions" / n, [solid(32, 18, tuple(colours["swipe_rgb"]))] * 10, 30,
                        codec="libvpx", fmt="webm")
        (inst.workdir / "recordings").mkdir()
        good = build()

        def solution(folder: Path, coll: dict, point_ms: int = 600, evs: list | None = None,
                     rec: bool = True) -> None:
            cfg = folder / OBS_DIR
            coll = dict(coll)
            studio_on = coll.pop("_studio", True)  # not a collection key: goes to global.ini
            O.write_collection(cfg, coll)
            O.write_global(cfg, coll["name"], "Show", BasicWindow={"PreviewProgramMode": studio_on})
            if rec:
                write_media(folder / REC, recording(colours, point_ms), 30)
            InstanceWriter.write_events(folder, live_events() if evs is None else evs)

        solution(inst.oracle, good)
        c = copy.deepcopy(good)
        c["transitions"][0]["settings"]["transition_point"] = 400
        solution(inst.mutant("point_400ms", ["stinger_config", "timing_in_recording"],
                             "transition point 400 ms (scene switches 400 ms in)"), c, point_ms=400)
        c = copy.deepcopy(good)
        c["transitions"][0]["settings"]["track_matte_layout"] = 0
        solution(inst.mutant("matte_side_by_side", ["track_matte"], "matte layout side-by-side"), c)
        c = copy.deepcopy(good)
        c["transitions"][0]["settings"]["audio_monitoring"] = 1
        solution(inst.mutant("monitoring_on", ["stinger_config"], "stinger audio monitored"), c)
        c = copy.deepcopy(good)
        c["_studio"] = False
        solution(inst.mutant("no_studio_mode", ["stinger_config"], "Studio Mode left off"), c)
        c = copy.deepcopy(good)
        O.find_source(c, "Live")["private_settings"] = {"transition": "Stinger", "transition_duration": 300}
        solution(inst.mutant("override_everywhere", ["override_brb"], "Live also switches in with the Stinger"),
                 c, evs=live_events(second="Stinger"))
        c = copy.deepcopy(good)
        O.find_source(c, "BRB")["private_settings"] = {}
        c["current_transition"] = "Stinger"
        solution(inst.mutant("stinger_as_default", ["override_brb"], "Stinger made the default transition"),
                 c, evs=live_events(second="Stinger"))
        solution(inst.mutant("recording_truncated", ["timing_in_recording"], "recording never finalised"), good)
        truncate(inst.root / "mutants" / "recording_truncated" / REC, 0.3)


def build() -> dict[str, Any]:
    inputs = [O.source("Game", "xshm_input", {}), O.source("BRB Image", "image_source",
                                                           {"file": f"{HOME}/bg/brb.png"})]
    scenes = [O.scene("Live", [O.item("Game", 1)]),
              O.scene("BRB", [O.item("BRB Image", 1)], transition="Stinger", transition_duration_ms=300)]
    stinger = O.transition("Stinger", STINGER_KIND, {
        "audio_fade_style": 0, "audio_monitoring": 0, "path": f"{HOME}/transitions/swipe.webm", "tp_type": 0,
        "track_matte_enabled": True, "track_matte_layout": 2,
        "track_matte_path": f"{HOME}/transitions/swipe_matte.webm", "transition_point": 600})
    return O.collection("Show", scenes, inputs, transitions=[stinger], current_transition="Fade")


def recording(colours: dict[str, list[int]], point_ms: int, fps: int = 30) -> list[np.ndarray]:
    """3 s of Live, a 1.2 s swipe from frame 30, the background turning BRB at the point."""
    w, h = 96, 54
    out = []
    start, sweep = 30, round(1.2 * fps)
    switch = start + round(point_ms / 1000 * fps)
    for i in range(3 * fps):
        img = solid(w, h, tuple(colours["brb_rgb"] if i >= switch else colours["live_rgb"]))
        if start <= i < start + sweep:
            x = int((i - start) / sweep * (w + 40)) - 40
            img[:, max(0, x):max(0, x + 40)] = colours["swipe_rgb"]
        out.append(img)
    return out


def live_events(second: str = "Fade") -> list[dict[str, Any]]:
    return [
        event("obs", "SceneTransitionStarted", 1000, {"transitionName": "Stinger"}),
        event("obs", "CurrentProgramSceneChanged", 1005, {"sceneName": "BRB"}),
        event("obs", "SceneTransitionEnded", 2200, {"transitionName": "Stinger"}),
        event("obs", "SceneTransitionStarted", 5000, {"transitionName": second}),
        event("obs", "CurrentProgramSceneChanged", 5005, {"sceneName": "Live"}),
        event("obs", "SceneTransitionEnded", 5300, {"transitionName": second}),
    ]
