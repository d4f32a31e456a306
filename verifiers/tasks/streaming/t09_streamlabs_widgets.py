"""R06.12.01.01-T09: Streamlabs Desktop scene 'Stream' with an Alert Box and a Chat Box widget.

Emulated (catalog): Streamlabs Desktop cannot run here. Evidence is
- streamlabs/SceneCollections/*.json: Streamlabs Desktop's collection format (scenes.items[] with
  sceneItems {sourceId, x, y, scaleX, scaleY}; sources.items[] with type, settings, and widgets marked
  propertiesManager "widget" + propertiesManagerSettings.widgetType); widgets are recognised by
  their widget URL (alert-box / chat-box), which is stable across widgetType numbering;
- state/streamlabs_widgets.json: the widget settings the harness exports from the sandbox API
  ({"alert_box": {"follow_sound_href", "follow_sound_volume", "follow_alert_duration"},
  "chat_box": {"text_size"}}; durations in s, or ms when > 100);
- live: a `streamlabs`/`test_alert` event and a program frame (`probe.video`/`frame`, imageData) after it.
"""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from verifiers.base import AgentOutputError, GTError, ScoreContext
from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.params import NoParams
from verifiers.paramtypes.streaming import AlertSettings, ChatBoxStyle, WidgetPlacement
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.tasks.streaming._shared.screenshots import decode_data_uri
from verifiers.tasks.streaming.common import event, path_ends_with, payload, t_ms

TASK = "R06.12.01.01-T09"
N = check_names(TASK)
COLLECTIONS = "streamlabs/SceneCollections"
STATE = "state/streamlabs_widgets.json"
CANVAS_PX = (1920, 1080)


def _load_streamlabs(ctx: ScoreContext) -> dict[str, Any]:
    """The Streamlabs collection that has scene 'Stream' (AgentOutputError when none does)."""
    d = ctx.workdir / COLLECTIONS
    for p in sorted(d.glob("*.json")) if d.is_dir() else []:
        try:
            obj = json.loads(p.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        scenes = (obj.get("scenes") or {}).get("items") if isinstance(obj, dict) else None
        if isinstance(scenes, list) and any(isinstance(s, dict) and s.get("name") == "Stream" for s in scenes):
            return obj
    raise AgentOutputError(f"artifact missing: no Streamlabs collection with scene 'Stream' in {COLLECTIONS}/")


def widget_rects(coll: dict[str, Any]) -> dict[str, tuple[float, float, float, float]]:
    """'alert' / 'chat' -> rendered (x, y, w, h) of that widget's item in scene Stream."""
    sources = {s.get("id"): s for s in (coll.get("sources") or {}).get("items", []) if isinstance(s, dict)}
    scene = next(s for s in coll["scenes"]["items"] if s.get("name") == "Stream")
    out = {}
    for it in scene.get("sceneItems", []):
        src = sources.get(it.get("sourceId"))
        if not src:
            continue
        url = str((src.get("settings") or {}).get("url", ""))
        role = "alert" if "alert-box" in url else "chat" if "chat-box" in url else None
        if role is None or src.get("propertiesManager") != "widget":
            continue
        st = src.get("settings") or {}
        w = float(st.get("width", 800)) * float(it.get("scaleX", 1.0))
        h = float(st.get("height", 600)) * float(it.get("scaleY", 1.0))
        out[role] = (float(it.get("x", 0)), float(it.get("y", 0)), w, h)
    return out


def alert_box_target(alert_box_px: tuple[int, int]) -> tuple[float, float, float, float]:
    w, h = alert_box_px
    return ((CANVAS_PX[0] - w) / 2, 0.0, w, h)


@register
class StreamlabsWidgets(CheckedTask):
    task_id = TASK

    @provides
    def coll(self) -> dict[str, Any]:
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
        parts = [curve.part("box").score(errs[k], tol) if k in errs else 0.0 for k in ("alert", "chat")]
        return Result(curve.count(parts), {"rects": rects, "max_err_px": errs},
                      "; ".join(f"{k} box off by {e:.0f} px" for k, e in errs.items() if e > tol)
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
        shots = [e for e in self.ctx.events_of("probe.video", "frame") if t_ms(e) >= t0]
        img = decode_data_uri(payload(shots[0]).get("imageData")) if shots else None
        if img is None:
            return Result.fail("no program frame captured after the test alert")
        inside, outside = alert_pixels(img, self.ctx.gt_json("widgets.json")["background_rgb"], self.target)
        ok = inside >= 0.05 and outside <= 0.01
        return Result(curve.passes(ok), {"inside": inside, "outside": outside},
                      "" if ok else "the test alert did not render inside the top-centre box")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        bg = [20, 20, 24]
        inst.write_json(inst.gt / "widgets.json", {"background_rgb": bg})
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
                    event("probe.video", "frame", 1400, {"imageData": frame(bg, alert_box)})])

        solution(inst.oracle, good, state)
        c = copy.deepcopy(good)
        c["scenes"]["items"][0]["sceneItems"][1]["x"] = 564
        solution(inst.mutant("alert_4px_right", [N.widget_placement], "Alert Box 4 px right of centre"), c, state)
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
    """A Streamlabs Desktop collection: Stream = game capture, Alert Box (top centre), Chat Box (right)."""
    def widget(sid: str, name: str, url: str, wtype: int, w: int, h: int) -> dict[str, Any]:
        return {"id": sid, "name": name, "type": "browser_source", "channels": 0, "muted": False,
                "settings": {"url": url, "width": w, "height": h}, "volume": 1, "propertiesManager": "widget",
                "propertiesManagerSettings": {"widgetType": wtype}}

    sources = [
        {"id": "game_capture_1", "name": "Game Capture", "type": "game_capture", "settings": {},
         "propertiesManager": "default", "propertiesManagerSettings": {}},
        widget("browser_source_2", "Alert Box", "https://streamlabs.com/alert-box/v3/SANDBOX01", 0, 800, 300),
        widget("browser_source_3", "Chat Box", "https://streamlabs.com/widgets/chat-box/v1/SANDBOX01", 6, 400, 700),
    ]
    items = [
        {"id": "item1", "sourceId": "game_capture_1", "x": 0, "y": 0, "scaleX": 1, "scaleY": 1, "visible": True,
         "crop": {"top": 0, "bottom": 0, "left": 0, "right": 0}, "rotation": 0},
        {"id": "item2", "sourceId": "browser_source_2", "x": 560, "y": 0, "scaleX": 1, "scaleY": 1, "visible": True,
         "crop": {"top": 0, "bottom": 0, "left": 0, "right": 0}, "rotation": 0},
        {"id": "item3", "sourceId": "browser_source_3", "x": 1520, "y": 190, "scaleX": 1, "scaleY": 1,
         "visible": True, "crop": {"top": 0, "bottom": 0, "left": 0, "right": 0}, "rotation": 0},
    ]
    return {"scenes": {"activeId": "scene_1", "displayOrder": ["scene_1"],
                       "items": [{"id": "scene_1", "name": "Stream", "sceneItems": items}]},
            "sources": {"items": sources}, "transitions": {"items": []}}
