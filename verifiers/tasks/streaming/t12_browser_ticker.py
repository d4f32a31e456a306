"""R06.12.01.01-T12: a local HTML ticker as a Browser source at the bottom edge of Live.

Files: the collection's browser_source settings and its item's rendered rectangle (1920x80 at
y = 1000). Live: the last program screenshot the OBS observer took (`obs`/`screenshot`,
ObsScreenshot: GetSourceScreenshot of the program scene, live need `obs_screenshots`); the ticker
band must show text over the scene underneath (gt/ticker.json: the scene's known colour), i.e. a
transparent page background. Debian's OBS has no browser source, so there the band shows no
ticker and the check fails (catalog `emulated`); no screenshot at all is an error.
"""

from __future__ import annotations

import base64
import copy
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from verifiers.apps.obs.collection import Source
from verifiers.apps.obs.geometry import rendered_rect
from verifiers.base import AgentOutputError, NoLiveEvidence
from verifiers.checks import Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.evidence import ObsScreenshot
from verifiers.gtfiles import GTFile, gt_field
from verifiers.paramtypes.streaming import RendersTransparent, TickerPosition, TickerSettings
from verifiers.synth import InstanceWriter
from verifiers.synthkit import obs_synth as O
from verifiers.tasks.streaming._shared.gt_colours import expect_rgb
from verifiers.tasks.streaming._shared.near_misses import pass_line_pair
from verifiers.tasks.streaming._shared.obs_config import OBS_DIR, path_ends_with
from verifiers.tasks.streaming._shared.obs_task import ObsTask
from verifiers.tasks.streaming._shared.screenshots import decode_data_uri

TICKER = "Ticker"
CANVAS_PX = (1920, 1080)
LOCAL_FILE = "overlay/ticker.html"


TASK = "R06.12.01.01-T12"
N = check_names(TASK)


def band_transparency(img: np.ndarray, bg_rgb: list[int], band_frac: float) -> dict[str, float]:
    """Share of the bottom band that still shows the scene colour, and share that is text."""
    h = img.shape[0]
    band = img[round(h * (1 - band_frac)):].reshape(-1, 3).astype(float)
    d = np.linalg.norm(band - np.array(bg_rgb, float), axis=1)
    return {"scene_visible": float((d < 30).mean()), "text": float((d >= 60).mean())}


class TickerFile(GTFile, file="ticker.json", task=TASK):
    """gt/ticker.json: the scene's colour, which a transparent ticker page lets through its band."""

    scene_rgb: list[int] = gt_field(doc="the colour of the scene under the ticker band")

    def validate(self) -> None:
        expect_rgb(self, "scene_rgb")


class BrowserTicker(ObsTask):
    task_id = TASK
    collection_scene = "Live"

    @provides
    def ticker(self) -> Source:
        src, live = self.coll.sources.get(TICKER), self.coll.scenes["Live"]
        if src is None or live.item(TICKER) is None:
            raise AgentOutputError("no source 'Ticker' in scene Live")
        return src

    @check(N.source_settings)
    def source_settings(self, p: TickerSettings, curve: Curve) -> Result:
        src = self.ticker
        s = src.raw_settings
        parts = {"browser_source": src.kind == "browser_source",
                 "is_local_file": s.get("is_local_file") is True,
                 "local_file": path_ends_with(s.get("local_file"), p.local_file),
                 "width 1920": s.get("width") == p.width_px, "height 80": s.get("height") == p.height_px,
                 "css": s.get("css") == p.css, "shutdown": s.get("shutdown") is p.shutdown}
        bad = [k for k, v in parts.items() if not v]
        return Result(curve.count(sum(parts.values()), len(parts)), {"wrong": bad},
                      "; ".join(f"wrong: {b}" for b in bad))

    @check(N.position)
    def position(self, p: TickerPosition, curve: Curve) -> Result:
        s = self.ticker.raw_settings
        size = (float(s.get("width", 800)), float(s.get("height", 600)))  # OBS's browser defaults
        r = rendered_rect(self.coll.scenes["Live"].item(TICKER).transform, *size)
        err = max(abs(r.y - p.pos_y_px), abs(r.bottom - CANVAS_PX[1]), abs(r.x), abs(r.right - CANVAS_PX[0]))
        return Result(curve.score(err, p.tolerance_px), {"rect_px": list(r.as_tuple())},
                      "" if err <= p.tolerance_px else f"ticker off the bottom edge by {err:.0f} px")

    @check(N.renders_transparent)
    def renders_transparent(self, p: RendersTransparent, curve: Curve) -> Result:
        self.coll  # noqa: B018 - as before the split: no collection fails this check too
        shots = [ObsScreenshot.from_event(e) for e in self.ctx.events_of(ObsScreenshot.SOURCE, ObsScreenshot.KIND)]
        if not shots:
            raise NoLiveEvidence("no live evidence: no program screenshot recorded")
        img = decode_data_uri(shots[-1].image_data)
        if img is None:
            return Result.fail("program screenshot is not a readable image")
        src = self.ticker.raw_settings
        if self.ticker.kind != "browser_source" or src.get("is_local_file") is not True \
                or not path_ends_with(src.get("local_file"), LOCAL_FILE):
            # text over the scene proves a transparent page only when the page is what renders there
            # (a text source named Ticker draws the same band): rule 3, no primary change, no credit
            return Result.fail("Ticker is not a browser source showing overlay/ticker.html: its band proves nothing")
        gt = self.ctx.gt_typed(TickerFile)
        m = band_transparency(img, gt.scene_rgb, 80 / CANVAS_PX[1])
        ok = 100.0 * m["scene_visible"] >= p.min_scene_visible_pct and m["text"] >= 0.01
        return Result(curve.passes(ok), m, "" if ok else "ticker band hides the scene or shows no text")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        scene_rgb = [40, 90, 160]
        inst.write_json(inst.gt / TickerFile.FILE, TickerFile(scene_rgb=scene_rgb).to_json())
        (inst.workdir / "overlay").mkdir(parents=True)
        (inst.workdir / "overlay" / "ticker.html").write_text(
            "<html><body><marquee style='color:white;font:40px sans-serif'>Breaking: tally ships</marquee>"
            "</body></html>\n")
        good = build()

        def solution(folder: Path, coll: dict, cover: float = 0.0, run: bool = True) -> None:
            cfg = folder / OBS_DIR
            O.write_collection(cfg, coll)
            O.write_global(cfg, coll["name"], "Show")
            if run:
                InstanceWriter.write_events(folder, [ObsScreenshot(
                    scene="Live", image_format="png", width_px=192,
                    image_data=screenshot(scene_rgb, cover)).event(1000)])

        solution(inst.oracle, good)
        for name, lowers, why, key, val in [
            ("shutdown_off", [N.source_settings], "'Shutdown source when not visible' left off", "shutdown", False),
            ("no_css", [N.source_settings], "custom CSS not set (OBS default CSS)", "css", None),
            ("remote_url", [N.source_settings, N.renders_transparent],
             "Local file unticked: the band is not the given page's", "is_local_file", False),
        ]:
            c = copy.deepcopy(good)
            st = O.find_source(c, TICKER)["settings"]
            if val is None:
                st.pop(key)
            else:
                st[key] = val
            solution(inst.mutant(name, lowers, why), c)
        c = copy.deepcopy(good)
        O.find_item(c, "Live", TICKER)["pos"]["y"] = 996.0
        solution(inst.mutant("ticker_4px_high", [N.position], "ticker dragged 4 px above the edge"), c)
        for dy, lowers in ((1, []), (2, [N.position])):  # near misses at the seed's y = 1000 +-1 pass line
            c = copy.deepcopy(good)
            O.find_item(c, "Live", TICKER)["pos"]["y"] = 1000.0 - dy
            solution(inst.mutant(f"ticker_{dy}px_high_{'outside' if lowers else 'inside'}", lowers,
                                 f"ticker {dy} px above the edge: {'past' if lowers else 'on'} the +-1 px pass line"), c)
        solution(inst.mutant("opaque_background", [N.renders_transparent], "page background renders black"),
                 good, cover=1.0)
        # the seed's 60 % of the band showing the scene: the page paints an opaque box over the band's right
        # 20 / 30 % (a clock panel): 64.9 / 54.5 % of the band still shows the scene (text takes the rest)
        for cover, lowers, side in pass_line_pair(0.2, 0.3, N.renders_transparent):
            solution(inst.mutant(f"box_over_{cover:.0%}_of_band_{side}".replace("%", "pct"), lowers,
                                 f"an opaque box over {cover:.0%} of the band: {side} the 60 % line"), good, cover=cover)
        solution(inst.mutant("no_screenshot", [N.renders_transparent], "no run recorded: cannot judge"), good,
                 run=False)
        write_cases(inst, good, scene_rgb)


def write_cases(inst: InstanceWriter, good: dict[str, Any], scene_rgb: list[int]) -> None:
    """Self-test cases (verifiers.synthcases): the collection as a newer OBS saves it (>= 95) and gaming
    baselines (<= 5), each with the screenshot the observer would take of what it renders."""
    rel = f"{OBS_DIR}/basic/scenes/Show.json"
    base = inst.root / "baselines"

    def shot(name: str, image_data: str) -> tuple[str, str]:
        (base / name).mkdir(parents=True, exist_ok=True)
        InstanceWriter.write_events(base / name, [ObsScreenshot(
            scene="Live", image_format="png", width_px=192, image_data=image_data).event(1000)])
        return ("events.jsonl", f"copy:baselines/{name}/events.jsonl")

    O.write_collection(base / "default" / OBS_DIR, O.collection("Show", [O.scene("Scene", [])], []))
    text = copy.deepcopy(good)   # a text source named Ticker where the browser source belongs
    O.find_source(text, TICKER).update(id="text_ft2_source", versioned_id="text_ft2_source_v2",
                                       settings={"text": "Breaking: tally ships"})
    O.write_collection(base / "text" / OBS_DIR, text)
    black = np.zeros((108, 192, 3), np.uint8)
    inst.export_case("newer_obs_save", [(rel, f"json_variant:oracle/{rel}"), ("events.jsonl", "copy:oracle/events.jsonl")],
                     why="keys in another order, unknown keys, versions one higher")
    inst.baseline_case("default_collection", [(rel, f"copy:baselines/default/{rel}"), shot("default", _png(black))],
                       why="OBS's new collection (one empty Scene): the program is black")
    inst.baseline_case("garbage_collection", [(rel, f"json_garbage:oracle/{rel}"),
                                              ("events.jsonl", "copy:oracle/events.jsonl")],
                       why="the collection's structure with random values beside the oracle's screenshot")
    inst.baseline_case("text_source_ticker", [(rel, f"copy:baselines/text/{rel}"),
                                              shot("text", screenshot(scene_rgb, cover=0.0))],
                       why="a text source named Ticker at the bottom: the band shows text over the scene, no page")
    inst.baseline_case("other_task_oracle", [(rel, "other_oracle:R06.12.01.01-T01:obs-studio/basic/scenes/"
                                                   "Weekly_Stream.json"), ("events.jsonl", "copy:oracle/events.jsonl")],
                       why="T01's collection (it has a scene Live) beside the oracle's screenshot")


def build() -> dict[str, Any]:
    ticker = O.source(TICKER, "browser_source", {
        "is_local_file": True, "local_file": "/home/streamer/work/overlay/ticker.html", "width": 1920,
        "height": 80, "css": "body{background:rgba(0,0,0,0)}", "shutdown": True})
    inputs = [O.source("Game", "xshm_input", {}), ticker]
    scenes = [O.scene("Live", [O.item("Game", 1), O.item(TICKER, 2, pos=(0, 1000))])]
    return O.collection("Show", scenes, inputs)


def screenshot(scene_rgb: list[int], cover: float) -> str:
    """A 192x108 program screenshot: the scene colour, the ticker band with white text, its right `cover`
    share painted black by the page (1.0: an opaque page background)."""
    img = np.empty((108, 192, 3), np.uint8)
    img[:] = scene_rgb
    img[100:, img.shape[1] - round(img.shape[1] * cover):] = 0
    cv2.putText(img, "Breaking news", (4, 106), cv2.FONT_HERSHEY_PLAIN, 0.6, (255, 255, 255), 1)
    return _png(img)


def _png(img: np.ndarray) -> str:
    """An RGB frame as GetSourceScreenshot returns it: a PNG data: URI."""
    _ok, buf = cv2.imencode(".png", img[:, :, ::-1])
    return "data:image/png;base64," + base64.b64encode(buf.tobytes()).decode()
