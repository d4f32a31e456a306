"""The 'Weekly Stream' collection shared by T01 (built in the GUI) and T17 (built by a script).

Both tasks ask for the same three scenes, Cam transform and Fade 300 ms; only the grouping of the
checks differs. The pieces here measure one aspect each and return (score 0..1, evidence, message)
so each task module adds them up its own way. Geometry is judged on the *rendered* rectangle
(verifiers.apps.obs.geometry), so a Cam sized by bounds or by scale passes alike.

GT: gt/layout.json = {"cam_px": [w, h], "display_px": [w, h]}, the native sizes of the harness's
webcam feed and screen (a scene item's transform alone does not fix its size on the canvas).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from verifiers.apps.obs.collection import BOUNDS_SCALE_INNER, Collection, Scene
from verifiers.apps.obs.geometry import rendered_rect
from verifiers.base import AgentOutputError, ScoreContext
from verifiers.curves import Curve
from verifiers.gtfiles import GTFile, gt_field
from verifiers.synth import InstanceWriter
from verifiers.synthkit import obs_synth as O
from verifiers.tasks.streaming._shared.obs_config import (
    OBS_DIR,
    active_profile,
    collection_rel,
    path_ends_with,
)

COLLECTION = "Weekly Stream"
SCENES = ("Starting Soon", "Live", "BRB")
CAM = "Cam"

#: Source kinds per role, across the platforms the seed names (Linux names are what Debian's OBS saves).
DISPLAY_KINDS = ("xshm_input", "monitor_capture", "display_capture", "screen_capture",
                 "pipewire-desktop-capture-source")
MIC_KINDS = ("pulse_input_capture", "wasapi_input_capture", "coreaudio_input_capture", "alsa_input_capture",
             "jack_input_client")
TEXT_PREFIXES = ("text_ft2_source", "text_gdiplus", "text_pango_source")


class WeeklyLayout(GTFile, file="layout.json", tasks=("R06.12.01.01-T01", "R06.12.01.01-T17")):
    """gt/layout.json: the native sizes of the Cam and display sources and the canvas they must fill."""

    cam_px: list[int] = gt_field(doc="the Cam source's native width, height")
    display_px: list[int] = gt_field(doc="the display capture's native width, height")
    canvas_px: list[int] = gt_field(doc="the base canvas width, height")

    def validate(self) -> None:
        for name in ("cam_px", "display_px", "canvas_px"):
            v = getattr(self, name)
            self.expect(len(v) == 2 and min(v) > 0, name, "must be a positive width, height")

Result = tuple[float, dict[str, Any], str]


def _images_with(coll: Collection, scene: Scene, rel: str) -> list[str]:
    return [it.source_name for it in scene.items
            if (src := coll.sources.get(it.source_name)) is not None and src.kind == "image_source"
            and path_ends_with(src.settings.get("file"), rel)]


def _of_kind(coll: Collection, scene: Scene, kinds: tuple[str, ...]) -> list[str]:
    return [it.source_name for it in scene.items
            if (src := coll.sources.get(it.source_name)) is not None and src.kind.startswith(kinds)]


#: what shows a scene is another scene: sources only another scene of the spec holds (the mic and
#: text are left out: a mic or a title in Live is no sign of a stuffed scene)
def _foreign(coll: Collection, name: str, scene: Scene) -> list[str]:
    roles = {"Starting Soon": bool(_images_with(coll, scene, "bg/starting.png")),
             "BRB": bool(_images_with(coll, scene, "bg/brb.png")),
             "Live": bool(scene.item(CAM) or _of_kind(coll, scene, DISPLAY_KINDS)
                          or _images_with(coll, scene, "overlay/frame.png"))}
    return [other for other, shown in roles.items() if shown and other != name]


def foreign_content(coll: Collection) -> dict[str, list[str]]:
    """Scene -> the other scenes whose content it also shows (every source everywhere: all of them)."""
    return {n: _foreign(coll, n, coll.scenes[n]) for n in SCENES if n in coll.scenes}


def scene_requirements(coll: Collection) -> dict[str, bool]:
    """Each listed scene/source requirement -> met or not (sources matched by kind and file, Cam by name).

    A scene that also shows another scene's content (the Cam in BRB, bg/starting.png in Live) is not
    that scene: none of its items count (putting every source in every scene earns nothing)."""
    foreign = foreign_content(coll)
    ss, live, brb = (coll.scenes.get(n) if not foreign.get(n) else None for n in SCENES)
    req: dict[str, bool] = {}
    for name, sc in zip(SCENES, (ss, live, brb), strict=True):
        req[f"scene {name}"] = sc is not None
    req.update(content_requirements(coll, ss, live, brb))
    return req


def content_requirements(coll: Collection, ss: Scene | None, live: Scene | None, brb: Scene | None) -> dict[str, bool]:
    """The seven per-scene content items (the scenes as scene_requirements admits them)."""
    return {
        "Starting Soon: image bg/starting.png": bool(ss and _images_with(coll, ss, "bg/starting.png")),
        "Starting Soon: countdown text": bool(ss and _of_kind(coll, ss, TEXT_PREFIXES)),
        "Live: display capture": bool(live and _of_kind(coll, live, DISPLAY_KINDS)),
        "Live: Cam": bool(live and live.item(CAM) is not None),
        "Live: overlay/frame.png": bool(live and _images_with(coll, live, "overlay/frame.png")),
        "BRB: image bg/brb.png": bool(brb and _images_with(coll, brb, "bg/brb.png")),
        "BRB: mic": bool(brb and _of_kind(coll, brb, MIC_KINDS)),
    }


def scenes_built(coll: Collection) -> float:
    """Share of the seven content items met: the task's primary change, which the shares that OBS's
    defaults already satisfy (Fade 300 ms) are paid in proportion to (rule 3, docs/catalog.md)."""
    req = scene_requirements(coll)
    content = [v for k, v in req.items() if ":" in k]
    return sum(content) / len(content)


def canvas_ok(ctx: ScoreContext, canvas_px: Sequence[int]) -> tuple[bool, Any]:
    """Base canvas from the active profile's basic.ini [Video] (OBS keeps it per profile)."""
    try:
        prof = active_profile(ctx)
    except AgentOutputError:  # no profile: the canvas is simply not shown as set
        return False, None
    got = (prof.get("Video", "BaseCX"), prof.get("Video", "BaseCY"))
    return got == (str(canvas_px[0]), str(canvas_px[1])), list(got)


def display_full_frame(ctx: ScoreContext, coll: Collection) -> bool:
    live = coll.scenes.get("Live") if not foreign_content(coll).get("Live") else None
    gt = ctx.gt_typed(WeeklyLayout)
    if live is None:
        return False
    for name in _of_kind(coll, live, DISPLAY_KINDS):
        it = live.item(name)
        r = rendered_rect(it.transform, *gt.display_px) if it else None
        if r is not None and r.close_to(_rect(0, 0, *gt.canvas_px), 2.0):
            return True
    return False


def _rect(x: float, y: float, w: float, h: float) -> Any:
    from verifiers.apps.obs.geometry import Rect

    return Rect(x, y, w, h)


def scene_checklist(ctx: ScoreContext, coll: Collection, canvas_px: Sequence[int]) -> tuple[dict[str, bool], Any]:
    """Every scene/source/canvas requirement -> met, and the canvas the profile has."""
    req = scene_requirements(coll)
    req["Live: display capture fills the canvas"] = display_full_frame(ctx, coll)
    ok, got = canvas_ok(ctx, canvas_px)
    req[f"canvas {canvas_px[0]}x{canvas_px[1]}"] = ok
    return req, got


def scenes_sources(ctx: ScoreContext, coll: Collection, canvas_px: Sequence[int], curve: Curve) -> Result:
    """The checklist scored by the check's per-item curve."""
    req, got = scene_checklist(ctx, coll, canvas_px)
    missing = [k for k, v in req.items() if not v]
    return curve.count(sum(req.values()), len(req)), \
        {"met": sum(req.values()), "of": len(req), "missing": missing, "canvas": got}, \
        ("missing: " + "; ".join(missing)) if missing else ""


def cam_error_px(ctx: ScoreContext, coll: Collection, bounds_px: Sequence[int],
                 pos_px: Sequence[int]) -> tuple[float | None, dict[str, Any], str]:
    """Largest error of the Cam's rendered rectangle (x, y, w, h) against the spec; None: no Cam."""
    live = coll.scenes.get("Live")
    it = live.item(CAM) if live else None
    if it is None:
        return None, {}, "no Cam item in scene Live"
    cam_px = ctx.gt_typed(WeeklyLayout).cam_px
    r = rendered_rect(it.transform, *cam_px)
    want = (pos_px[0], pos_px[1], bounds_px[0], bounds_px[1])
    err = max(abs(a - b) for a, b in zip(r.as_tuple(), want, strict=True))
    ev = {"rect_px": [round(v, 2) for v in r.as_tuple()], "want_px": list(want), "max_err_px": round(err, 2)}
    return err, ev, ""


def cam_geometry(ctx: ScoreContext, coll: Collection, bounds_px: Sequence[int], pos_px: Sequence[int],
                 tol_px: float, curve: Curve) -> Result:
    """The Cam rectangle scored by the check's catalog curve (tolerance tol_px)."""
    err, ev, msg = cam_error_px(ctx, coll, bounds_px, pos_px)
    if err is None:
        return 0.0, ev, msg
    return curve.score(err, tol_px), ev, "" if err <= tol_px else f"Cam rectangle off by {err:.1f} px"


def frame_topmost(coll: Collection) -> tuple[bool, str]:
    live = coll.scenes.get("Live")
    if live is None:
        return False, "no scene Live"
    if foreign_content(coll).get("Live"):
        return False, "Live also shows " + ", ".join(foreign_content(coll)["Live"]) + " content: not the Live scene"
    frames = _images_with(coll, live, "overlay/frame.png")
    if not frames:
        return False, "no overlay/frame.png in Live"
    return live.is_topmost(frames[0]), "" if live.is_topmost(frames[0]) else "frame.png is not the top layer of Live"


def brb_mic_muted(coll: Collection) -> tuple[bool, str]:
    brb = coll.scenes.get("BRB")
    if brb is not None and foreign_content(coll).get("BRB"):
        return False, "BRB also shows " + ", ".join(foreign_content(coll)["BRB"]) + " content: not the BRB scene"
    mics = _of_kind(coll, brb, MIC_KINDS) if brb else []
    if not mics:
        return False, "no mic in BRB"
    muted = all(coll.sources[m].muted for m in mics)
    return muted, "" if muted else "BRB mic is not muted"


def transition(coll: Collection, kind: str, duration_ms: int, curve: Curve) -> Result:
    """Default transition kind and duration, scored by the per-item curve (two items)."""
    cur = coll.current_transition
    try:
        got_kind = coll.transition(cur).kind if cur else None
    except KeyError:
        got_kind = None
    dur = coll.transition_duration_ms
    parts = [got_kind == kind, dur == duration_ms]
    msg = []
    if not parts[0]:
        msg.append(f"default transition is {cur!r} ({got_kind}), not Fade")
    if not parts[1]:
        msg.append(f"duration {dur} ms, not {duration_ms} ms")
    # Fade 300 ms is OBS's default: it earns in proportion to the scenes built (rule 3)
    built = scenes_built(coll)
    if built < 1 and sum(parts):
        msg.append(f"Fade 300 ms is OBS's default: paid for {built:.0%} of the scene content built")
    return curve.count(sum(parts), 2) * built, \
        {"transition": cur, "kind": got_kind, "duration_ms": dur, "scenes_built": round(built, 4)}, "; ".join(msg)


# ---- synthetic instance ----------------------------------------------------------------------

CAM_PX = (1280, 720)
DISPLAY_PX = (1920, 1080)
HOME = "/home/streamer/work"  # where the agent's work dir sits on the machine that saved the oracle


def write_inputs(workdir: Path) -> None:
    O.png(workdir / "bg" / "starting.png", 192, 108, (20, 30, 90, 255))
    O.png(workdir / "bg" / "brb.png", 192, 108, (90, 30, 20, 255))
    O.png(workdir / "overlay" / "frame.png", 192, 108, (255, 255, 255, 0))


def write_gt(gt: Path) -> None:
    InstanceWriter.write_json(gt / "layout.json", {"cam_px": list(CAM_PX), "display_px": list(DISPLAY_PX),
                                                   "canvas_px": [1920, 1080]})


def build(rng: np.random.Generator | None = None) -> dict[str, Any]:
    """The collection a correct solution saves (OBS 29 shape)."""
    inputs = [
        O.source("Background", "image_source", {"file": f"{HOME}/bg/starting.png"}),
        O.source("Countdown", "text_ft2_source", {"text": "Starting in 05:00"}, versioned_id="text_ft2_source_v2"),
        O.source("Display Capture", "xshm_input", {"screen": 0}),
        O.source(CAM, "v4l2_input", {"device_id": "/dev/video0", "resolution": (CAM_PX[0] << 16) | CAM_PX[1]}),
        O.source("Frame", "image_source", {"file": f"{HOME}/overlay/frame.png"}),
        O.source("BRB Background", "image_source", {"file": f"{HOME}/bg/brb.png"}),
        O.source("Mic", "pulse_input_capture", {"device_id": "default"}, muted=True),
    ]
    scenes = [
        O.scene("Starting Soon", [O.item("Background", 1), O.item("Countdown", 2, pos=(760, 500))]),
        O.scene("Live", [O.item("Display Capture", 1),
                         O.item(CAM, 2, pos=(1416, 786), bounds=(480, 270), bounds_type=BOUNDS_SCALE_INNER),
                         O.item("Frame", 3)]),
        O.scene("BRB", [O.item("BRB Background", 1), O.item("Mic", 2)]),
    ]
    return O.collection(COLLECTION, scenes, inputs, current_transition="Fade", transition_duration_ms=300)


def write_solution(folder: Path, coll: dict[str, Any], canvas_px: tuple[int, int] = (1920, 1080)) -> None:
    cfg = folder / OBS_DIR
    O.write_collection(cfg, coll)
    O.write_profile(cfg, "Weekly", {"Video": {"BaseCX": canvas_px[0], "BaseCY": canvas_px[1],
                                              "OutputCX": canvas_px[0], "OutputCY": canvas_px[1],
                                              "FPSType": 1, "FPSInt": 30}})
    O.write_global(cfg, coll["name"], "Weekly")


def write_weekly_instance(inst: InstanceWriter, mutants: dict, all_checks: list[str]) -> None:
    """Inputs, GT, oracle and mutants for a Weekly Stream task (T01 and T17 share them).

    `mutants`: name -> (checks it lowers, why, edit of the good collection or None).
    """
    write_inputs(inst.workdir)
    write_gt(inst.gt)
    good = build()
    write_solution(inst.oracle, good)
    for name, (lowers, why, edit) in mutants.items():
        folder = inst.mutant(name, lowers, why)
        c = copy.deepcopy(good)
        if edit is not None:
            edit(c)
        write_solution(folder, c, (1280, 720) if name == "canvas_720p" else (1920, 1080))
    bad = inst.mutant("truncated_collection", all_checks, "collection file cut off mid-write")
    write_solution(bad, good)
    path = bad / collection_rel(COLLECTION)
    path.write_bytes(path.read_bytes()[:500])
    write_weekly_cases(inst, good)


def write_weekly_cases(inst: InstanceWriter, good: dict[str, Any]) -> None:
    """Self-test cases (verifiers.synthcases): the collection as a newer OBS saves it (>= 95) and gaming
    baselines (<= 5): OBS's new collection named Weekly Stream (one empty Scene, Fade 300 ms: OBS's
    defaults are the seed's transition), the structure with random values, every source in every
    scene (each item of the checklist somewhere), and T12's collection under this name."""
    rel = collection_rel(COLLECTION)
    base = inst.root / "baselines"
    write_solution(base / "default", O.collection(COLLECTION, [O.scene("Scene", [])], [],
                                                  current_transition="Fade", transition_duration_ms=300))
    every = copy.deepcopy(good)
    names = [s["name"] for s in every["sources"] if s["id"] != "scene"]
    for sc in ("Starting Soon", "Live", "BRB"):
        O.find_source(every, sc)["settings"]["items"] = [O.item(n, i) for i, n in enumerate(names, 1)]
    write_solution(base / "every", every)
    other = O.collection(COLLECTION, [O.scene("Live", [O.item("Game", 1), O.item("Ticker", 2, pos=(0, 1000))])],
                         [O.source("Game", "xshm_input", {}), O.source("Ticker", "browser_source", {
                             "is_local_file": True, "local_file": f"{HOME}/overlay/ticker.html", "width": 1920,
                             "height": 80})])
    write_solution(base / "other", other)
    inst.export_case("newer_obs_save", [(rel, f"json_variant:oracle/{rel}")],
                     why="keys in another order, unknown keys, versions one higher")
    inst.baseline_case("default_collection", [(rel, f"copy:baselines/default/{rel}")],
                       why="OBS's new collection named Weekly Stream: one empty Scene, Fade 300 ms")
    inst.baseline_case("garbage_collection", [(rel, f"json_garbage:oracle/{rel}")],
                       why="the collection's structure with random values")
    inst.baseline_case("every_source_everywhere", [(rel, f"copy:baselines/every/{rel}")],
                       why="every source in every scene at the origin, unscaled")
    inst.baseline_case("other_task_collection", [(rel, f"copy:baselines/other/{rel}")], max_score=10.0,
                       why="a T12-like collection (Live with a game capture and a ticker) saved as Weekly Stream: its "
                           "Live scene with a full-canvas display capture is 3 of the 12 checklist items (6.25) and 1 "
                           "of the 7 scene-content items the default Fade is paid on (2.9); those may stay")


# ---- planted faults (edits of the good collection), shared by T01's and T17's mutants -------------

def cam_off(c: dict) -> None:
    O.find_item(c, "Live", CAM)["pos"]["x"] += 4


def cam_off_by(px: float) -> Callable[[dict], None]:
    """Near misses at the seed's +-2 px pass line: the Cam moved `px` right of its spot."""
    def edit(c: dict) -> None:
        O.find_item(c, "Live", CAM)["pos"]["x"] += px
    return edit


def frame_under(c: dict) -> None:
    items = O.find_source(c, "Live")["settings"]["items"]
    items[1], items[2] = items[2], items[1]


def mic_live(c: dict) -> None:
    O.find_source(c, "Mic")["muted"] = False


def fade_500(c: dict) -> None:
    c["transition_duration"] = 500


def no_countdown(c: dict) -> None:
    c["sources"] = [s for s in c["sources"] if s["name"] != "Countdown"]
    items = O.find_source(c, "Starting Soon")["settings"]["items"]
    items[:] = [it for it in items if it["name"] != "Countdown"]


def cam_scaled(c: dict) -> None:
    it = O.find_item(c, "Live", CAM)
    it.update(bounds_type=0, bounds={"x": 0.0, "y": 0.0}, scale={"x": 0.375, "y": 0.375})


def weekly_mutants(*, geometry: str, order_mute: str, scenes: str, transition: str,
                   cam_how: str, frame_how: str, fade_how: str) -> dict[str, tuple[list[str], str, Any]]:
    """The Weekly Stream mistakes T01 (GUI) and T17 (websocket) share, for write_weekly_instance.

    Each lowers the check of that task that judges it (`geometry`: the Cam's place; `order_mute`: the
    frame's z-order and the BRB mic; `scenes`: the checklist; `transition`), and `*_how` says how the
    Cam, frame and fade mistakes come about in that task's way of working (a drag, a request).
    """
    return {
        "cam_4px_off": ([geometry], f"Cam {cam_how} 4 px right of its spot", cam_off),
        "cam_2px_off_inside": ([], "Cam 2 px right: on the seed's +-2 px pass line, full marks", cam_off_by(2)),
        "cam_3px_off_outside": ([geometry], "Cam 3 px right: past the +-2 px pass line, the whole share lost",
                                cam_off_by(3)),
        "frame_under_cam": ([order_mute], f"overlay/frame.png {frame_how} the webcam", frame_under),
        "brb_mic_live": ([order_mute], "BRB mic left unmuted", mic_live),
        "fade_500ms": ([transition], fade_how, fade_500),
        "no_countdown": ([scenes, transition], "Starting Soon has no countdown text (the default Fade is "
                         "paid for 6 of the 7 scene-content items)", no_countdown),
        "canvas_720p": ([scenes], "canvas left at 1280x720", None),
        "cam_scaled_not_bounded": ([], "Cam sized by scale 0.375 instead of bounds: same rectangle", cam_scaled),
    }
