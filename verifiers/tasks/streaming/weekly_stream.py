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
from verifiers.tasks.streaming.common import OBS_DIR, active_profile, collection_rel, path_ends_with

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


def scene_requirements(coll: Collection) -> dict[str, bool]:
    """Each listed scene/source requirement -> met or not (sources matched by kind and file, Cam by name)."""
    req: dict[str, bool] = {}
    for name in SCENES:
        req[f"scene {name}"] = name in coll.scenes
    ss, live, brb = (coll.scenes.get(n) for n in SCENES)
    req["Starting Soon: image bg/starting.png"] = bool(ss and _images_with(coll, ss, "bg/starting.png"))
    req["Starting Soon: countdown text"] = bool(ss and _of_kind(coll, ss, TEXT_PREFIXES))
    req["Live: display capture"] = bool(live and _of_kind(coll, live, DISPLAY_KINDS))
    req["Live: Cam"] = bool(live and live.item(CAM) is not None)
    req["Live: overlay/frame.png"] = bool(live and _images_with(coll, live, "overlay/frame.png"))
    req["BRB: image bg/brb.png"] = bool(brb and _images_with(coll, brb, "bg/brb.png"))
    req["BRB: mic"] = bool(brb and _of_kind(coll, brb, MIC_KINDS))
    return req


def canvas_ok(ctx: ScoreContext, canvas_px: Sequence[int]) -> tuple[bool, Any]:
    """Base canvas from the active profile's basic.ini [Video] (OBS keeps it per profile)."""
    try:
        prof = active_profile(ctx)
    except AgentOutputError:  # no profile: the canvas is simply not shown as set
        return False, None
    got = (prof.get("Video", "BaseCX"), prof.get("Video", "BaseCY"))
    return got == (str(canvas_px[0]), str(canvas_px[1])), list(got)


def display_full_frame(ctx: ScoreContext, coll: Collection) -> bool:
    live = coll.scenes.get("Live")
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
    frames = _images_with(coll, live, "overlay/frame.png")
    if not frames:
        return False, "no overlay/frame.png in Live"
    return live.is_topmost(frames[0]), "" if live.is_topmost(frames[0]) else "frame.png is not the top layer of Live"


def brb_mic_muted(coll: Collection) -> tuple[bool, str]:
    brb = coll.scenes.get("BRB")
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
    return curve.count(sum(parts), 2), {"transition": cur, "kind": got_kind, "duration_ms": dur}, "; ".join(msg)


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
