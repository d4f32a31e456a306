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
from verifiers.base import AgentOutputError, NoLiveEvidence
from verifiers.checks import Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.evidence import ObsEvent, SceneData, TransitionData
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.errors import MediaError
from verifiers.params import NoParams
from verifiers.paramtypes.streaming import StingerConfig, StingerTiming, TrackMatte
from verifiers.synth import InstanceWriter
from verifiers.synthkit import obs_synth as O
from verifiers.synthkit.streaming_media import solid, truncate, write_media
from verifiers.tasks.streaming._shared.gt_colours import expect_rgb
from verifiers.tasks.streaming._shared.near_misses import pass_line_pair
from verifiers.tasks.streaming._shared.obs_config import OBS_DIR, path_ends_with, read_ini
from verifiers.tasks.streaming._shared.obs_task import ObsTask
from verifiers.tasks.streaming._shared.recording import frames
from verifiers.tasks.streaming._shared.run_events import obs_events

TASK = "R06.12.01.01-T16"
N = check_names(TASK)
REC = "recordings/stinger.mkv"
STINGER_KIND = "obs_stinger_transition"
HOME = "/home/streamer/work"


def stingers(coll: Collection) -> list[Any]:
    return [t for t in coll.transitions.values() if t.kind == STINGER_KIND]


def transitions_used(events: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    """(scene switched to, transition that started nearest before it within 1 s) per program change."""
    starts = [(ts, d.transitionName) for ts, d in obs_events(events, "SceneTransitionStarted")]
    out = []
    for t, d in obs_events(events, "CurrentProgramSceneChanged"):
        near = [(abs(t - ts), name) for ts, name in starts if -1000 <= t - ts <= 1000]
        out.append((d.sceneName, min(near)[1] if near else None))
    return out


class StingerFile(GTFile, file="stinger.json", task=TASK):
    """gt/stinger.json: the colours that tell Live, BRB and the stinger's swipe apart in the recording."""

    live_rgb: list[int] = gt_field(doc="scene Live's colour")
    brb_rgb: list[int] = gt_field(doc="scene BRB's colour")
    swipe_rgb: list[int] = gt_field(doc="the stinger swipe's colour")

    def validate(self) -> None:
        expect_rgb(self, "live_rgb", "brb_rgb", "swipe_rgb")


def switch_timing(path: Path, colours: StingerFile) -> dict[str, Any]:
    """Swipe start and the background switch (s) from the decoded recording."""
    swipe = np.array(colours.swipe_rgb, float)
    live = np.array(colours.live_rgb, float)
    brb = np.array(colours.brb_rgb, float)
    t_swipe = t_switch = None
    swipe_frames = 0
    times: list[float] = []
    for t, img in frames(path, max_width_px=96):
        times.append(t)
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
    # the mean period over the file (timestamps in ms, as MKV stores them, make single steps 33 or 34)
    frame_s = (times[-1] - times[0]) / (len(times) - 1) if len(times) > 1 else None
    return {"swipe_start_s": t_swipe, "switch_s": t_switch, "swipe_frames": swipe_frames, "frame_s": frame_s}


class StingerTrackMatte(ObsTask):
    task_id = TASK
    collection_scene = "BRB"

    @provides
    def mine(self) -> Any:
        """The task's Stinger (by its path, else the first); AgentOutputError when there is none."""
        st = stingers(self.coll)
        path = self.task.check(N.stinger_config).typed.path
        mine = next((t for t in st if path_ends_with(t.settings.get("path"), path)), st[0] if st else None)
        if mine is None:
            raise AgentOutputError("no Stinger transition in the collection")
        return mine

    @check(N.stinger_config)
    def stinger_config(self, p: StingerConfig, curve: Curve) -> Result:
        ini = read_ini(self.ctx.workdir / OBS_DIR / "global.ini") or {}
        studio = ini.get("BasicWindow", {}).get("PreviewProgramMode", "false").lower() == "true"
        mine = self.mine
        s = mine.settings
        parts = {"path": path_ends_with(s.get("path"), p.path),
                 "transition point 600 ms": s.get("tp_type", 0) == 0 and s.get("transition_point") == p.transition_point_ms,
                 "audio monitoring off": s.get("audio_monitoring", 0) == 0,
                 "studio mode": studio}
        bad = [k for k, v in parts.items() if not v]
        return Result(curve.count(sum(parts.values()), len(parts)),
                      {"name": mine.name, "transition_point": s.get("transition_point"), "studio_mode": studio,
                       "wrong": bad}, "; ".join(f"wrong: {b}" for b in bad))

    @check(N.track_matte)
    def track_matte(self, p: TrackMatte, curve: Curve) -> Result:
        s = self.mine.settings
        mp = {"enabled": bool(s.get("track_matte_enabled")),
              "matte file": path_ends_with(s.get("track_matte_path"), p.matte_path),
              "layout stacked/separate": s.get("track_matte_layout", 0) in (1, 2)}
        bad = [k for k, v in mp.items() if not v]
        return Result(curve.count(sum(mp.values()), len(mp)), {"layout": s.get("track_matte_layout"), "wrong": bad},
                      "; ".join(f"wrong: {b}" for b in bad))

    @check(N.override_brb)
    def override_brb(self, p: NoParams, curve: Curve) -> Result:
        coll = self.coll
        names = {t.name for t in stingers(coll)}
        others_override = [n for n, sc in coll.scenes.items() if n != "BRB" and sc.transition_override in names]
        default_kind = coll.transition(coll.current_transition).kind if coll.current_transition in (
            *coll.transitions, "Fade", "Cut") else None
        files = {"BRB overrides with the Stinger": coll.scenes["BRB"].transition_override in names,
                 "no other scene uses the Stinger": not others_override,
                 "default transition Fade": default_kind == "fade_transition"}
        if not obs_events(self.ctx.events_of("obs"), "SceneTransitionStarted"):
            raise NoLiveEvidence("no live evidence: the observer recorded no scene transition")
        used = transitions_used(self.ctx.events or [])
        live_ok = [(sc, tr) for sc, tr in used if (tr in names) == (sc == "BRB")]
        to_brb = [u for u in used if u[0] == "BRB"]
        others = [u for u in used if u[0] != "BRB"]
        live = {"Live->BRB used the Stinger": bool(to_brb) and all(tr in names for _s, tr in to_brb),
                "second test switch used Fade": bool(others) and all(tr == "Fade" for _s, tr in others)}
        allp = {**files, **live}
        bad = [k for k, v in allp.items() if not v]
        return Result(curve.count(sum(allp.values()), len(allp)),
                      {"switches": used, "consistent": len(live_ok), "wrong": bad}, "; ".join(bad))

    @check(N.timing_in_recording)
    def timing_in_recording(self, p: StingerTiming, curve: Curve) -> Result:
        self.coll  # noqa: B018 - as before the split: no collection fails this check too
        try:
            tm = switch_timing(self.ctx.artifact(REC), self.ctx.gt_typed(StingerFile))
        except MediaError as exc:
            return Result.fail(str(exc))
        if tm["swipe_start_s"] is None or tm["switch_s"] is None:
            return Result.fail("no swipe frames or no switch to BRB in the recording", tm)
        off_ms = (tm["switch_s"] - tm["swipe_start_s"]) * 1000
        # a recording dates the switch to whole frames: the error and the seed's +-33 ms are both
        # counted in frames (33 ms is one frame at 30 fps, 33.3 ms; two at 60). In ms, a switch one
        # frame late (633 ms) would fail a line the seed drew at one frame.
        frame_ms = 1000 * (tm["frame_s"] or 1 / 30)
        err_frames = round((off_ms - p.switch_ms) / frame_ms)
        tol_frames = round(p.tolerance_ms / frame_ms)
        return Result(curve.score(err_frames, tol_frames),
                      {**tm, "switch_after_ms": off_ms, "error_frames": err_frames, "tolerance_frames": tol_frames},
                      "" if abs(err_frames) <= tol_frames else
                      f"scene switched {off_ms:.0f} ms into the stinger ({err_frames:+d} frames; pass line "
                      f"+-{tol_frames})")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        colours = StingerFile(live_rgb=[30, 60, 200], brb_rgb=[200, 40, 30], swipe_rgb=[20, 220, 40])
        inst.write_json(inst.gt / StingerFile.FILE, colours.to_json())
        (inst.workdir / "transitions").mkdir(parents=True)
        for n in ("swipe.webm", "swipe_matte.webm"):  # placeholders: the scorer never decodes them
            write_media(inst.workdir / "transitions" / n, [solid(32, 18, tuple(colours.swipe_rgb))] * 10, 30,
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
        solution(inst.mutant("point_400ms", [N.stinger_config, N.timing_in_recording],
                             "transition point 400 ms (scene switches 400 ms in)"), c, point_ms=400)
        c = copy.deepcopy(good)
        c["transitions"][0]["settings"]["track_matte_layout"] = 0
        solution(inst.mutant("matte_side_by_side", [N.track_matte], "matte layout side-by-side"), c)
        c = copy.deepcopy(good)
        c["transitions"][0]["settings"]["audio_monitoring"] = 1
        solution(inst.mutant("monitoring_on", [N.stinger_config], "stinger audio monitored"), c)
        c = copy.deepcopy(good)
        c["_studio"] = False
        solution(inst.mutant("no_studio_mode", [N.stinger_config], "Studio Mode left off"), c)
        c = copy.deepcopy(good)
        O.find_source(c, "Live")["private_settings"] = {"transition": "Stinger", "transition_duration": 300}
        solution(inst.mutant("override_everywhere", [N.override_brb], "Live also switches in with the Stinger"),
                 c, evs=live_events(second="Stinger"))
        c = copy.deepcopy(good)
        O.find_source(c, "BRB")["private_settings"] = {}
        c["current_transition"] = "Stinger"
        solution(inst.mutant("stinger_as_default", [N.override_brb], "Stinger made the default transition"),
                 c, evs=live_events(second="Stinger"))
        for late, lowers, side in pass_line_pair(1, 2, N.timing_in_recording):  # the +-33 ms (one frame at 30 fps) line
            solution(inst.mutant(f"switch_{late}_frame_late_{side}", lowers,
                                 f"scene switched {late} frame(s) after the 600 ms point: {side} the +-33 ms line"),
                     good, point_ms=600 + round(late * 1000 / 30))
        solution(inst.mutant("recording_truncated", [N.timing_in_recording], "recording never finalised"), good)
        truncate(inst.root / "mutants" / "recording_truncated" / REC, 0.3)
        coll_rel = f"{OBS_DIR}/basic/scenes/Show.json"
        inst.export_case("h264_crf23", [(REC, f"export:h264_crf23:oracle/{REC}")], why="8-bit 4:2:0 H.264 at CRF 23")
        inst.baseline_case("black_recording_beside_the_scene",
                           [(REC, f"black:oracle/{REC}"), (coll_rel, f"copy:oracle/{coll_rel}"),
                            ("events.jsonl", "copy:oracle/events.jsonl")], max_score=75.0,
                           why="black frames of the recording's length beside the oracle's collection and run: the "
                               "recording's own share (timing, 25) is 0; the 75 of collection and run work may stay")


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


def recording(colours: StingerFile, point_ms: int, fps: int = 30) -> list[np.ndarray]:
    """3 s of Live, a 1.2 s swipe from frame 30, the background turning BRB at the point."""
    w, h = 96, 54
    out = []
    start, sweep = 30, round(1.2 * fps)
    switch = start + round(point_ms / 1000 * fps)
    for i in range(3 * fps):
        img = solid(w, h, tuple(colours.brb_rgb if i >= switch else colours.live_rgb))
        if start <= i < start + sweep:  # the swipe's edge is in the first frame, as a stinger's first frame shows it
            x = int((i - start + 1) / sweep * (w + 40)) - 40
            img[:, max(0, x):max(0, x + 40)] = colours.swipe_rgb
        out.append(img)
    return out


def live_events(second: str = "Fade") -> list[dict[str, Any]]:
    return [
        ObsEvent.of("SceneTransitionStarted", TransitionData("Stinger")).event(1000),
        ObsEvent.of("CurrentProgramSceneChanged", SceneData("BRB")).event(1005),
        ObsEvent.of("SceneTransitionEnded", TransitionData("Stinger")).event(2200),
        ObsEvent.of("SceneTransitionStarted", TransitionData(second)).event(5000),
        ObsEvent.of("CurrentProgramSceneChanged", SceneData("Live")).event(5005),
        ObsEvent.of("SceneTransitionEnded", TransitionData(second)).event(5300),
    ]
