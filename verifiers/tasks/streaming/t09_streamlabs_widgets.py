"""R06.12.01.01-T09: Streamlabs Desktop scene 'Stream' with an Alert Box and a Chat Box widget.

Emulated (catalog): Streamlabs Desktop cannot run here. Evidence is
- streamlabs/SceneCollections/*.json: a Streamlabs Desktop collection, read by
  verifiers.apps.streamlabs (proven on collections the app saved: every array is a node
  `{"schemaVersion", "nodeType", "items"}`, a scene's sceneItems is a SceneItemsNode, items bottom ->
  top with x, y, scaleX, scaleY and, since dual output, display); widgets are browser_source sources
  with propertiesManager "widget", recognised by their widget URL (alert-box / chat-box), else
  widgetType (0 / 6); only the horizontal display's items are judged;
- state/streamlabs_widgets.json: the widget settings the harness exports from the sandbox API
  ({"alert_box": {"follow_sound_href", "follow_sound_volume", "follow_alert_duration"},
  "chat_box": {"text_size"}}; durations in s, or ms when > 100);
- live: a `streamlabs`/`test_alert` event and the first program picture after it: a `probe.video`/
  `frame` event carrying imageData (probes.video_probe.VideoProbe with image_every_s, on the program
  feed; Streamlabs Desktop has no obs-websocket, so the OBS observer's screenshots cannot serve here).
"""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from verifiers.apps.streamlabs import (
    SlCollection,
    SlSource,
    StreamlabsError,
    load_collection,
    parse_collection,
)
from verifiers.base import AgentOutputError, GTError, ScoreContext
from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.evidence import VideoFrame
from verifiers.gtfiles import GTFile, gt_field
from verifiers.params import NoParams
from verifiers.paramtypes.streaming import AlertSettings, ChatBoxStyle, WidgetPlacement
from verifiers.synth import InstanceWriter
from verifiers.tasks.streaming._shared.gt_colours import expect_rgb
from verifiers.tasks.streaming._shared.obs_config import parsed_files, path_ends_with
from verifiers.tasks.streaming._shared.run_events import event, t_ms
from verifiers.tasks.streaming._shared.screenshots import decode_data_uri
from verifiers.tasks.streaming._shared.streamlabs_nodes import array_node, no_hotkeys, node

TASK = "R06.12.01.01-T09"
N = check_names(TASK)
COLLECTIONS = "streamlabs/SceneCollections"
STATE = "state/streamlabs_widgets.json"
CANVAS_PX = (1920, 1080)
WIDGET_TYPES = {0: "alert", 6: "chat"}   # propertiesManagerSettings.widgetType in the real collections


def _load_streamlabs(ctx: ScoreContext) -> SlCollection:
    """The Streamlabs collection that has scene 'Stream' (AgentOutputError when none does)."""
    for _p, coll in parsed_files(ctx.workdir / COLLECTIONS, load_collection, StreamlabsError):
        if coll.scene("Stream") is not None:
            return coll
    raise AgentOutputError(f"artifact missing: no Streamlabs collection with scene 'Stream' in {COLLECTIONS}/")


def widget_role(src: SlSource) -> str | None:
    """'alert' / 'chat' for an Alert Box / Chat Box widget source, else None. The widget URL
    (alert-box / chat-box) is stable across widgetType numbering; a widget whose URL the app
    blanked (an overlay install before it logs in) falls back to widgetType (0 alert box, 6 chat box,
    as the real collections carry)."""
    if src.properties_manager != "widget":
        return None
    url = str(src.settings.get("url", ""))
    if "alert-box" in url:
        return "alert"
    if "chat-box" in url:
        return "chat"
    return WIDGET_TYPES.get(src.widget_type) if not url else None


def widget_rects(coll: SlCollection | dict[str, Any], scene: str = "Stream",
                 display: str = "horizontal") -> dict[str, tuple[float, float, float, float]]:
    """'alert' / 'chat' -> rendered (x, y, w, h) of that widget's item in `scene` (the horizontal
    display's items: dual output saves a second, vertical copy of each item)."""
    if not isinstance(coll, SlCollection):
        coll = parse_collection(coll)
    sc = coll.scene(scene)
    out: dict[str, tuple[float, float, float, float]] = {}
    for it in sc.items_on(display) if sc else []:
        src = coll.sources.get(it.source_id)
        role = widget_role(src) if src else None
        size = src.size_px() if src else None
        if role is None or size is None:
            continue
        out[role] = (it.x, it.y, size[0] * it.scale_x, size[1] * it.scale_y)
    return out


def widget_counts(coll: SlCollection, scene: str = "Stream", display: str = "horizontal") -> dict[str, int]:
    """'alert' / 'chat' -> how many widget items of that role `scene` shows on `display`."""
    sc = coll.scene(scene)
    roles = [widget_role(src) for it in (sc.items_on(display) if sc else [])
             if (src := coll.sources.get(it.source_id)) is not None]
    return {r: roles.count(r) for r in ("alert", "chat")}


def alert_box_target(alert_box_px: tuple[int, int]) -> tuple[float, float, float, float]:
    w, h = alert_box_px
    return ((CANVAS_PX[0] - w) / 2, 0.0, w, h)


class WidgetsFile(GTFile, file="widgets.json", task=TASK):
    """gt/widgets.json: the program's colour where no widget draws (the test alert is what differs)."""

    background_rgb: list[int] = gt_field(doc="the program's background colour behind the widgets")

    def validate(self) -> None:
        expect_rgb(self, "background_rgb")


class StreamlabsWidgets(CheckedTask):
    task_id = TASK

    @provides
    def coll(self) -> SlCollection:
        return _load_streamlabs(self.ctx)

    @provides
    def state(self) -> dict[str, Any]:
        """The sandbox's widget settings; without them the settings checks cannot be judged (error)."""
        self.coll  # noqa: B018 - no collection fails every check first, as before the split
        try:
            return json.loads(self.ctx.artifact(STATE).read_text(encoding="utf-8"))
        except (AgentOutputError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise GTError(f"no sandbox widget settings to judge by: {exc}") from None

    @property
    def target(self) -> tuple[float, float, float, float]:
        return alert_box_target(self.task.check(N.widget_placement).typed.alert_box_px)

    @check(N.widget_placement)
    def widget_placement(self, p: WidgetPlacement, curve: Curve) -> Result:
        rects = widget_rects(self.coll)
        tol = p.tolerance_px
        errs = {}
        if "alert" in rects:
            errs["alert"] = max(abs(a - b) for a, b in zip(rects["alert"], self.target, strict=True))
        if "chat" in rects:
            x, y, w, h = rects["chat"]
            cw, ch = p.chat_box_px
            errs["chat"] = max(abs(x + w - CANVAS_PX[0]), abs(w - cw), abs(h - ch), max(0.0, -y),
                               max(0.0, y + h - CANVAS_PX[1]))
        # one widget of each role is asked for: a scene with several (every position at once) shows
        # no single placement, so that role's unit fails
        many = [k for k, n in widget_counts(self.coll).items() if n > 1]
        parts = [curve.part("box").score(errs[k], tol) if k in errs and k not in many else 0.0
                 for k in ("alert", "chat")]
        return Result(curve.count(parts), {"rects": rects, "max_err_px": errs, "several": many},
                      "; ".join([*(f"{k} box off by {e:.0f} px" for k, e in errs.items() if e > tol),
                                 *(f"{k} widget placed more than once" for k in many)])
                      + ("" if len(errs) == 2 else "; widget missing"))

    @check(N.alert_settings)
    def alert_settings(self, p: AlertSettings, curve: Curve) -> Result:
        ab = self.state.get("alert_box") or {}
        dur = ab.get("follow_alert_duration")
        dur_s = dur / 1000 if isinstance(dur, (int, float)) and dur > 100 else dur
        a = {"sound": path_ends_with(str(ab.get("follow_sound_href", "")).replace("file://", ""), p.sound),
             "volume 40": ab.get("follow_sound_volume") == p.volume_pct,
             "duration 5 s": dur_s == p.duration_s}
        return Result(curve.count(sum(a.values()), 3), {"alert_box": ab},
                      "; ".join(f"wrong {k}" for k, v in a.items() if not v))

    @check(N.chat_box_style)
    def chat_box_style(self, p: ChatBoxStyle, curve: Curve) -> Result:
        size = (self.state.get("chat_box") or {}).get("text_size")
        return Result(curve.passes(size == p.font_size), {"text_size": size},
                      "" if size == p.font_size else f"chat font size {size}, not {p.font_size}")

    @check(N.test_alert_renders)
    def test_alert_renders(self, p: NoParams, curve: Curve) -> Result:
        self.coll  # noqa: B018 - as before the split
        alerts = self.ctx.events_of("streamlabs", "test_alert")
        t0 = t_ms(alerts[0])
        # the probe attaches the picture to one analysed frame every image_every_s: the first such frame
        frames = [VideoFrame.from_event(e) for e in self.ctx.events_of("probe.video", "frame") if t_ms(e) >= t0]
        shots = [f for f in frames if f.imageData is not None]
        img = decode_data_uri(shots[0].imageData) if shots else None
        if img is None:
            return Result.fail("no program frame captured after the test alert")
        inside, outside = alert_pixels(img, self.ctx.gt_typed(WidgetsFile).background_rgb, self.target)
        ok = inside >= 0.05 and outside <= 0.01
        return Result(curve.passes(ok), {"inside": inside, "outside": outside},
                      "" if ok else "the test alert did not render inside the top-centre box")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        bg = [20, 20, 24]
        inst.write_json(inst.gt / WidgetsFile.FILE, WidgetsFile(background_rgb=bg).to_json())
        (inst.workdir / "alerts").mkdir(parents=True)
        (inst.workdir / "alerts" / "ding.mp3").write_bytes(b"ID3\x03\x00\x00\x00\x00\x00\x00")
        good = build()
        state = {"alert_box": {"follow_sound_href": "file:///C:/Users/streamer/work/alerts/ding.mp3",
                               "follow_sound_volume": 40, "follow_alert_duration": 5},
                 "chat_box": {"text_size": 18}}

        def solution(folder: Path, coll: dict, st: dict, alert_box: tuple | None = (56, 0, 80, 30),
                     run: bool = True) -> None:
            InstanceWriter.write_json(folder / COLLECTIONS / "c0a3f1e2-0000-4000-8000-000000000001.json", coll)
            InstanceWriter.write_json(folder / STATE, st)
            if run:
                InstanceWriter.write_events(folder, [
                    event("streamlabs", "test_alert", 1000, {"type": "follow"}),
                    VideoFrame(t_s=1.4, imageData=frame(bg, alert_box)).event(1400)])

        solution(inst.oracle, good, state)
        c = copy.deepcopy(good)
        c["scenes"]["items"][0]["sceneItems"]["items"][1]["x"] = 564
        solution(inst.mutant("alert_4px_right", [N.widget_placement], "Alert Box 4 px right of centre"), c, state)
        for dx, lowers in ((2, []), (3, [N.widget_placement])):  # near misses at the seed's +-2 px pass line
            c = copy.deepcopy(good)
            c["scenes"]["items"][0]["sceneItems"]["items"][1]["x"] = 560 + dx
            solution(inst.mutant(f"alert_{dx}px_right_{'outside' if lowers else 'inside'}", lowers,
                                 f"Alert Box {dx} px right of centre: {'past' if lowers else 'on'} the +-2 px pass line"),
                     c, state)
        c = copy.deepcopy(good)
        c["scenes"]["items"][0]["sceneItems"]["items"][1]["display"] = "vertical"
        solution(inst.mutant("alert_on_vertical_display", [N.widget_placement],
                             "dual output: Alert Box placed only on the vertical display"), c, state)
        st = copy.deepcopy(state)
        st["alert_box"]["follow_sound_volume"] = 50
        solution(inst.mutant("volume_50", [N.alert_settings], "alert volume left at 50%"), st=st, coll=good)
        st = copy.deepcopy(state)
        st["alert_box"]["follow_alert_duration"] = 8000
        solution(inst.mutant("duration_8s", [N.alert_settings], "alert duration 8 s"), good, st)
        st = copy.deepcopy(state)
        st["chat_box"]["text_size"] = 14
        solution(inst.mutant("chat_font_14", [N.chat_box_style], "chat font size 14"), good, st)
        solution(inst.mutant("alert_renders_left", [N.test_alert_renders], "alert pops up in the top-left corner"),
                 good, state, alert_box=(0, 0, 80, 30))
        solution(inst.mutant("no_test_alert", [N.test_alert_renders], "no run recorded: cannot judge"), good, state,
                 run=False)
        write_cases(inst, good)


#: the sandbox's widget settings before anyone edits them (the values the mutants name as "left at")
DEFAULT_STATE = {"alert_box": {"follow_sound_href": "https://uploads.twitchalerts.com/sound-defaults/new-message-4.ogg",
                               "follow_sound_volume": 50, "follow_alert_duration": 8000},
                 "chat_box": {"text_size": 14}}
COLL_FILE = f"{COLLECTIONS}/c0a3f1e2-0000-4000-8000-000000000001.json"


def write_cases(inst: InstanceWriter, good: dict[str, Any]) -> None:
    """Self-test cases (verifiers.synthcases): the collection as a newer Streamlabs saves it (>= 95) and
    gaming baselines (<= 5), each with the sandbox's untouched widget settings and no recorded run."""
    base = inst.root / "baselines"
    inst.write_json(base / "default_state.json", DEFAULT_STATE)
    default = copy.deepcopy(good)   # a fresh collection: scene 'Stream' holding one game capture
    default["scenes"]["items"][0]["sceneItems"]["items"] = default["scenes"]["items"][0]["sceneItems"]["items"][:1]
    default["sources"]["items"] = default["sources"]["items"][:1]
    inst.write_json(base / "default_collection.json", default)
    every = copy.deepcopy(good)     # an Alert Box and a Chat Box at every position of a 40 px grid
    items = every["scenes"]["items"][0]["sceneItems"]["items"]
    extra = [{**copy.deepcopy(it), "id": f"{it['id'][:-6]}{n:06d}", "x": x, "y": y}
             for n, (it, x, y) in enumerate(((it, x, y) for it in items[1:] for x in range(0, 1921, 40)
                                             for y in range(0, 1081, 40)), 1)]
    items[1:] = [*extra, *items[1:]]
    inst.write_json(base / "every_position.json", every)
    state = (STATE, "copy:baselines/default_state.json")
    inst.export_case("newer_streamlabs_save", [(COLL_FILE, f"json_variant:oracle/{COLL_FILE}")],
                     why="keys in another order, unknown keys, schema versions one higher")
    inst.baseline_case("default_collection", [(COLL_FILE, "copy:baselines/default_collection.json"), state],
                       why="a fresh collection with scene Stream, widgets untouched")
    inst.baseline_case("garbage_collection", [(COLL_FILE, f"json_garbage:oracle/{COLL_FILE}"), state],
                       why="the collection's structure with random values")
    inst.baseline_case("every_position", [(COLL_FILE, "copy:baselines/every_position.json"), state],
                       why="Alert Box and Chat Box copies at every 40 px position, the right ones among them")
    inst.baseline_case("other_task_oracle",
                       [(COLL_FILE, "other_oracle:R06.12.01.01-T15:obs-studio/basic/scenes/Migrated.json"), state],
                       why="T15's OBS collection where the Streamlabs collection belongs")


def alert_pixels(img: np.ndarray, bg_rgb: list[int], box: tuple[float, float, float, float]) -> tuple[float, float]:
    """Share of non-background pixels inside the alert box and elsewhere in the top third."""
    h, w = img.shape[:2]
    sx, sy = w / CANVAS_PX[0], h / CANVAS_PX[1]
    x0, y0, bw, bh = box
    mask = np.zeros((h, w), bool)
    mask[int(y0 * sy):int((y0 + bh) * sy), int(x0 * sx):int((x0 + bw) * sx)] = True
    fg = np.linalg.norm(img.astype(float) - np.array(bg_rgb, float), axis=2) > 40
    top = np.zeros((h, w), bool)
    top[: h // 3] = True
    return float(fg[mask].mean()), float(fg[top & ~mask].mean())


def frame(bg: list[int], box: tuple | None) -> str:
    """A 192x108 program frame with the alert (a yellow card with text) drawn in `box` (frame px)."""
    img = np.empty((108, 192, 3), np.uint8)
    img[:] = bg
    img[60:] = (60, 90, 60)  # game capture below
    if box:
        x, y, w, h = box
        img[y + 4:y + h - 4, x + 6:x + w - 6] = (240, 200, 40)
    _ok, buf = cv2.imencode(".png", img[:, :, ::-1])
    return "data:image/png;base64," + base64.b64encode(buf.tobytes()).decode()


def build() -> dict[str, Any]:
    """A Streamlabs Desktop collection as the app saves it (root schema 4, single output): Stream =
    game capture, Alert Box (top centre), Chat Box (right). Keys and node shapes follow the real
    collections in tests/fixtures/real/ (streamlabs/2024-schema*); items bottom -> top."""
    uid = "{}-0000-4000-8000-{:012d}".format

    def source(sid: str, name: str, kind: str, settings: dict[str, Any], manager: str = "default",
               manager_settings: dict[str, Any] | None = None) -> dict[str, Any]:
        return {"hotkeys": no_hotkeys(), "id": sid, "name": name, "type": kind, "settings": settings,
                "volume": 1, "muted": False, "deinterlaceMode": 0, "deinterlaceFieldOrder": 0,
                "filters": {"items": []}, "propertiesManager": manager,
                "propertiesManagerSettings": manager_settings or {}, "forceMono": False,
                "syncOffset": {"sec": 0, "nsec": 0}, "audioMixers": 255, "monitoringType": 0, "mixerHidden": False}

    def widget(sid: str, name: str, url: str, wtype: int, w: int, h: int) -> dict[str, Any]:
        return source(sid, name, "browser_source", {"url": url, "width": w, "height": h, "fps": 30,
                                                     "shutdown": True, "restart_when_active": False},
                      "widget", {"widgetType": wtype})

    def item(n: int, sid: str, x: float, y: float) -> dict[str, Any]:
        return {"hotkeys": no_hotkeys(), "id": uid("1a7e0000", n), "sourceId": sid, "x": x, "y": y,
                "scaleX": 1, "scaleY": 1, "visible": True, "crop": {"top": 0, "bottom": 0, "left": 0, "right": 0},
                "locked": False, "rotation": 0, "streamVisible": True, "recordingVisible": True, "scaleFilter": 0,
                "blendingMode": 0, "blendingMethod": 0, "sceneNodeType": "item", "display": "horizontal"}

    game, alert, chat = (f"game_capture_{uid('9a3e0000', 1)}", f"browser_source_{uid('b5000000', 2)}",
                         f"browser_source_{uid('b5000000', 3)}")
    sources = [
        source(game, "Game Capture", "game_capture", {"capture_mode": "any_fullscreen"}),
        widget(alert, "Alert Box", "https://streamlabs.com/alert-box/v3/SANDBOX01", 0, 800, 300),
        widget(chat, "Chat Box", "https://streamlabs.com/widgets/chat-box/v1/SANDBOX01", 6, 400, 700),
    ]
    items = [item(1, game, 0, 0), item(2, alert, 560, 0), item(3, chat, 1520, 190)]
    scene = {"hotkeys": no_hotkeys(), "filters": array_node("SceneFiltersNode", 1, []),
             "sceneItems": array_node("SceneItemsNode", 1, items), "id": f"scene_{uid('5cee0000', 1)}",
             "name": "Stream", "active": True}
    return node("RootNode", 4, sources=array_node("SourcesNode", 4, sources),
                scenes=array_node("ScenesNode", 1, [scene]),
                transitions=node("TransitionsNode", 2, transitions=[
                    {"id": uid("7a000000", 1), "name": "Global Transition", "type": "fade_transition",
                     "duration": 300, "settings": {}}], connections=[], defaultTransitionId=uid("7a000000", 1)),
                hotkeys=array_node("HotkeysNode", 2, []),
                baseResolution={"baseWidth": CANVAS_PX[0], "baseHeight": CANVAS_PX[1]},
                selectiveRecording=False, dualOutputMode=False, operatingSystem="win32")
