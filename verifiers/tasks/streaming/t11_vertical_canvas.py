"""R06.12.01.01-T11: an Aitum Vertical 1080x1920 canvas with scene V-Live, recorded beside the main canvas.

Emulated (catalog): the plugin is not in Debian's OBS. Read as the plugin saves (verifiers.apps.vertical,
proven on configs and OBS 32 collections users saved with it):
- obs-studio/plugin_config/vertical-canvas/config.json `{"canvas": [{width, height, current_scene,
  record_path, ...}]}`: the 1080x1920 canvas and its recording folder (`record_path`); the plugin
  saves no scenes there;
- the vertical scenes are in the OBS scene collection (obs-studio/basic/scenes/*.json): with OBS 31+
  on the canvas named "Aitum Vertical" (`canvases[]`, scenes carrying its `canvas_uuid`, not in
  `scene_order`), with older plugin versions as custom-size 1080x1920 scenes. Item positions are
  read as OBS 31+ loads them (`pos_rel` when saved with `scale_rel`/`scale_ref`, else `pos`).

Frames: sampled frames of the vertical recording; the top 810 px must match the Cam crop and the
band below it the gameplay crop (SSIM against gt/cam_ref.png and gt/game_ref.png). Recordings: one
1920x1080 file in recordings/ and one 1080x1920 in recordings/vertical/, ~15 s, started together
(OBS's "%CCYY-%MM-%DD %hh-%mm-%ss" names, else file times). Audit: the config and the collection must have
been written by OBS, not another process (audit events: source `audit`, kind `write`, payload {path, process}).
"""

from __future__ import annotations

import copy
import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from skimage.metrics import structural_similarity

from verifiers.apps.obs.collection import Scene
from verifiers.apps.vertical import VerticalCanvas as PluginCanvas
from verifiers.apps.vertical import VerticalConfigError, load_config, vertical_scenes
from verifiers.base import AgentOutputError, GTError, NoLiveEvidence, ScoreContext
from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.evidence import AuditWrite
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.errors import MediaError
from verifiers.params import NoParams
from verifiers.paramtypes.streaming import BothRecordings, LayoutInFrames, VerticalCanvasConfig
from verifiers.synth import InstanceWriter
from verifiers.synthkit import obs_synth as O
from verifiers.synthkit.streaming_media import write_media
from verifiers.tasks.streaming._shared.near_misses import pass_line_pair
from verifiers.tasks.streaming._shared.obs_config import (
    OBS_DIR,
    SCENES_DIR,
    load_collections,
    parsed_files,
    path_ends_with,
)
from verifiers.tasks.streaming._shared.recording import agent_media, frames, probe
from verifiers.tasks.streaming._shared.vertical_canvas_synth import (
    vertical_collection,
    vertical_config,
    write_obs31_collection,
)

TASK = "R06.12.01.01-T11"
N = check_names(TASK)
PLUGIN_DIR = f"{OBS_DIR}/plugin_config/vertical-canvas"
VERT_DIR = "recordings/vertical"
VIDEO_EXT = (".mkv", ".mp4", ".mov", ".flv")
NAME_TIME = re.compile(r"(\d{4})-(\d\d)-(\d\d)[ _](\d\d)-(\d\d)-(\d\d)")
OBS_WRITERS = {"obs", "obs-studio", "obs64.exe", "obs.exe", "obs64"}
AUDITED = ("plugin_config", "basic/scenes")   # the plugin's config and the collection holding its scenes


def find_canvas(ctx: ScoreContext, size: tuple[int, int]) -> tuple[PluginCanvas | None, Path | None]:
    """The vertical canvas of that size in the plugin's config JSON (config.json as the plugin names
    it; any other *.json in its folder too), and the file it came from."""
    for p, canvases in parsed_files(ctx.workdir / PLUGIN_DIR, load_config, VerticalConfigError):
        for c in canvases:
            if (c.width_px, c.height_px) == tuple(size):
                return c, p
    return None, None


def find_vertical_scene(ctx: ScoreContext, canvas: PluginCanvas, name: str) -> tuple[Scene | None, str | None]:
    """Scene `name` on the vertical canvas in any readable collection (with that collection's file
    name), found as verifiers.apps.vertical.vertical_scenes finds them."""
    for coll in load_collections(ctx):
        sc = next((s for s in vertical_scenes(coll, canvas) if s.name == name), None)
        if sc is not None:
            return sc, Path(coll.path).name
    return None, None


def _videos(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in VIDEO_EXT) \
        if folder.is_dir() else []


def _start_time(p: Path) -> float:
    m = NAME_TIME.search(p.name)
    if m:
        return datetime(*map(int, m.groups())).timestamp()
    return os.stat(p).st_mtime


def _region_ssim(frame: np.ndarray, ref: np.ndarray) -> float:
    a = cv2.cvtColor(cv2.resize(frame, (ref.shape[1], ref.shape[0]), interpolation=cv2.INTER_AREA), cv2.COLOR_RGB2GRAY)
    b = cv2.cvtColor(ref, cv2.COLOR_RGB2GRAY)
    return float(structural_similarity(a, b, data_range=255))


class VerticalFile(GTFile, file="vertical.json", task=TASK):
    """gt/vertical.json: where the gameplay band sits in the 1080x1920 vertical canvas (beside the GT
    crops gt/cam_ref.png and gt/game_ref.png)."""

    game_band_px: list[int] = gt_field(doc="the band's first and end row (y0, y1) in canvas pixels")

    def validate(self) -> None:
        b = self.game_band_px
        self.expect(len(b) == 2 and 0 <= b[0] < b[1], "game_band_px", "must be y0, y1 with 0 <= y0 < y1")


class VerticalCanvas(CheckedTask):
    task_id = TASK

    @provides
    def canvas(self) -> tuple[PluginCanvas | None, Path | None]:
        return find_canvas(self.ctx, self.task.check(N.vertical_canvas_config).typed.canvas_px)

    @provides
    def vscene(self) -> tuple[Scene | None, str | None]:
        canvas, _ = self.canvas
        if canvas is None:
            return None, None
        return find_vertical_scene(self.ctx, canvas, self.task.check(N.vertical_canvas_config).typed.scene)

    @provides
    def verts(self) -> list[Path]:
        return _videos(self.ctx.workdir / VERT_DIR)

    @check(N.vertical_canvas_config)
    def vertical_canvas_config(self, p: VerticalCanvasConfig, curve: Curve) -> Result:
        canvas, cfg_path = self.canvas
        try:
            audit = self.ctx.events_of("audit", "write")
        except NoLiveEvidence as exc:
            return Result.cannot_judge(f"{exc} (the config's writer must be audited)")
        if canvas is None:
            return Result.fail("no 1080x1920 canvas in the Aitum Vertical config")
        writes = [AuditWrite.from_event(e) for e in audit]
        outsiders = [w.to_payload() for w in writes if any(a in w.path for a in AUDITED)
                     and (w.process or "").lower() not in OBS_WRITERS]
        scene, coll_file = self.vscene
        parts = {"scene V-Live on the vertical canvas": scene is not None,
                 "record path recordings/vertical/": path_ends_with(canvas.record_path, p.record_path)}
        if outsiders:   # a file another process wrote is not the setup made in OBS: nothing of it counts
            return Result.fail("the config or collection was written by another process than OBS",
                               {"file": cfg_path.name if cfg_path else None, "outside_writers": outsiders, **parts})
        return Result(curve.count(sum(parts.values()), len(parts)),
                      {"file": cfg_path.name if cfg_path else None, "collection": coll_file,
                       "outside_writers": outsiders, **parts},
                      "; ".join(f"not {k}" for k, v in parts.items() if not v))

    @check(N.captions_source)
    def captions_source(self, p: NoParams, curve: Curve) -> Result:
        canvas, _ = self.canvas
        if canvas is None:
            return Result.fail("no 1080x1920 canvas in the Aitum Vertical config")
        pc = self.task.check(N.vertical_canvas_config).typed
        scene, _ = self.vscene
        if scene is None:
            return Result.fail(f"no scene {pc.scene} on the vertical canvas in {SCENES_DIR}/")
        size = (canvas.width_px, canvas.height_px)
        texts = [it for it in scene.items if it.name.lower().startswith(("caption", "subtitle"))
                 and it.loaded_pos_px(size)[1] >= 0.75 * pc.canvas_px[1]]
        return Result(curve.passes(bool(texts)), {"captions_items": [t.name for t in texts]},
                      "" if texts else "no captions text at the bottom of V-Live")

    @provides
    def sims(self) -> dict[str, float]:
        """SSIMs of the first vertical recording's top region and gameplay band against the GT crops
        (and crossed: Cam in the band, gameplay on top); GTError / AgentOutputError when unjudgeable."""
        try:
            cam_ref = cv2.imread(str(self.ctx.gt_path("cam_ref.png")))[:, :, ::-1]
            game_ref = cv2.imread(str(self.ctx.gt_path("game_ref.png")))[:, :, ::-1]
        except TypeError:
            raise GTError("GT reference frames unreadable") from None
        gt = self.ctx.gt_typed(VerticalFile)
        if not self.verts:
            raise AgentOutputError(f"no recording in {VERT_DIR}/")
        canvas_px = self.task.check(N.vertical_canvas_config).typed.canvas_px
        top_h = self.task.check(N.layout_in_frames).typed.top_region_px[1]
        with agent_media():
            return self._ssims(self.verts[0], cam_ref, game_ref, top_h, gt.game_band_px, canvas_px)

    @check(N.layout_in_frames)
    def layout_in_frames(self, p: LayoutInFrames, curve: Curve) -> Result:
        sims = self.sims
        lo = p.min_ssim
        s = curve.count([curve.part("ssim").score(max(0.0, lo - sims["cam"]), 0),
                         curve.part("ssim").score(max(0.0, lo - sims["game"]), 0)])
        return Result(s, sims, "" if s >= 1 else "vertical layout does not match the crops")

    @check(N.both_recordings)
    def both_recordings(self, p: BothRecordings, curve: Curve) -> Result:
        mains = _videos(self.ctx.workdir / "recordings")
        ok: dict[str, Any] = {}
        for label, files, size in (("main", mains, p.sizes_px[0]), ("vertical", self.verts, p.sizes_px[1])):
            ok[label] = None
            for f in files:
                try:
                    info = probe(f)
                except MediaError:
                    continue
                v = info.video[0] if info.video else None
                if v and [v.width_px, v.height_px] == list(size) and abs(info.duration_s - p.duration_s) <= 2.0:
                    ok[label] = f
                    break
        overlap = bool(ok["main"] and ok["vertical"]) and abs(_start_time(ok["main"]) - _start_time(ok["vertical"])) <= 5
        parts = {"main 1920x1080 ~15 s": ok["main"] is not None, "vertical 1080x1920 ~15 s": ok["vertical"] is not None,
                 "recorded together": overlap}
        # files of the right size and length earn only when the vertical one is a recording of the
        # canvas: the Cam crop or the gameplay crop shows somewhere in it (black of the right length,
        # another clip: 0)
        min_ssim = self.task.check(N.layout_in_frames).typed.min_ssim
        try:
            derived = max(v for k, v in self.sims.items() if k != "frames_sampled") >= min_ssim
        except AgentOutputError:
            derived = False
        if not derived:
            return Result.fail("the vertical recording shows neither the Cam nor the gameplay crop", parts)
        return Result(curve.count(sum(parts.values()), 3), parts,
                      "; ".join(f"missing: {k}" for k, v in parts.items() if not v))

    @staticmethod
    def _ssims(path: Path, cam_ref: np.ndarray, game_ref: np.ndarray, top_h: int, band: list[int],
               canvas: list[int]) -> dict[str, float]:
        cams, games, crossed = [], [], []
        for i, (_t, img) in enumerate(frames(path, max_width_px=216)):
            if i % 3:
                continue
            sy = img.shape[0] / canvas[1]
            top, mid = img[: round(top_h * sy)], img[round(band[0] * sy): round(band[1] * sy)]
            cams.append(_region_ssim(top, cam_ref))
            games.append(_region_ssim(mid, game_ref))
            crossed.append(max(_region_ssim(top, game_ref), _region_ssim(mid, cam_ref)))
        if not cams:
            raise MediaError(f"{path.name}: no frames")
        return {"cam": float(np.median(cams)), "game": float(np.median(games)),
                "crossed": float(np.median(crossed)), "frames_sampled": len(cams)}

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        cam = blocks(rng, (216, 162), (6, 5))      # 1/5 of 1080x810
        game = blocks(rng, (216, 160), (8, 6))     # 1/5 of 1080x800 (810..1610)
        cv2.imwrite(str(inst.gt / "cam_ref.png"), cam[:, :, ::-1])
        cv2.imwrite(str(inst.gt / "game_ref.png"), game[:, :, ::-1])
        inst.write_json(inst.gt / VerticalFile.FILE, VerticalFile(game_band_px=[810, 1610]).to_json())
        (inst.workdir / "recordings" / "vertical").mkdir(parents=True)
        good = config()
        coll = vertical_collection()

        cache: dict[tuple[str, float], bytes] = {}

        def media(path: Path, key: tuple[str, float], make) -> None:
            """Encode each distinct recording once; mutants reuse the bytes (keeps synth fast)."""
            if key not in cache:
                write_media(path, *make())
                cache[key] = path.read_bytes()
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(cache[key])

        def solution(folder: Path, cfg: dict, *, coll: dict[str, Any] = coll, vert_frames: list | None = None, vert_s: float = 15.0,
                     vert_name: str = "2026-11-30 21-00-01.mkv", writer: str = "obs", run: bool = True,
                     lossless: bool = False, main_s: float = 15.0) -> None:
            InstanceWriter.write_json(folder / PLUGIN_DIR / "config.json", cfg)
            write_obs31_collection(folder / OBS_DIR, coll)
            media(folder / "recordings" / "2026-11-30 21-00-00.mkv", ("main", main_s),
                  lambda: ([np.full((1080, 1920, 3), 60, np.uint8)] * round(main_s * 2), 2))
            vf = vert_frames if vert_frames is not None else vertical_frames(cam, game)
            if lossless:
                write_media(folder / VERT_DIR / vert_name, vf * round(vert_s / len(vf)), 1, codec="ffv1")
            else:
                media(folder / VERT_DIR / vert_name, ("swap" if vert_frames is not None else "vert", vert_s),
                      lambda: (vf * round(vert_s / len(vf)), 1))
            if run:
                InstanceWriter.write_events(folder, [
                    AuditWrite(f"{PLUGIN_DIR}/config.json", process=writer, pid=4242).event(100)])

        solution(inst.oracle, good)
        c = copy.deepcopy(good)
        c["canvas"][0]["record_path"] = "/home/streamer/Videos"
        solution(inst.mutant("record_path_default", [N.vertical_canvas_config], "vertical recordings left in ~/Videos"), c)
        solution(inst.mutant("config_by_script", [N.vertical_canvas_config], "config JSON written by python3"), good,
                 writer="python3")
        c = copy.deepcopy(coll)
        O.find_source(c, "V-Live")["settings"]["items"].pop()
        solution(inst.mutant("no_captions", [N.captions_source], "captions text not added"), good, coll=c)
        c = vertical_collection(on_main_canvas=True)
        solution(inst.mutant("v_live_on_main_canvas", [N.vertical_canvas_config, N.captions_source],
                             "V-Live made as an ordinary scene of the main canvas"), good, coll=c)
        solution(inst.mutant("cam_bottom_game_top", [N.layout_in_frames], "webcam and gameplay swapped"), good,
                 vert_frames=vertical_frames(game, cam, swap=True))
        solution(inst.mutant("vertical_8s", [N.both_recordings], "vertical recording stopped after 8 s"), good, vert_s=8)
        ssim_near_misses(inst, solution, cam, game)
        solution(inst.mutant("vertical_later", [N.both_recordings], "vertical recording started a minute later"), good,
                 vert_name="2026-11-30 21-01-05.mkv")
        solution(inst.mutant("no_audit", [N.vertical_canvas_config],
                 "no audit recorded: cannot judge"), good, run=False)
        # "~15 s" is 15 +- 2 s (the main recording 16.5 / 17.5 s: one flat colour, cheap to encode at 2 fps);
        # "recorded together" is starts within 5 s (file names carry whole seconds: 5 s on the line, 6 s past it)
        for main_s, lowers, side in pass_line_pair(16.5, 17.5, N.both_recordings):
            solution(inst.mutant(f"main_{main_s}s_{side}", lowers, f"main recording {main_s} s: {side} 15 +- 2 s"),
                     good, main_s=main_s)
        for late_s, lowers, side in pass_line_pair(5, 6, N.both_recordings):
            solution(inst.mutant(f"vertical_{late_s}s_later_{side}", lowers, f"vertical recording started {late_s} s "
                                 f"after the main one: {side} 5 s"), good, vert_name=f"2026-11-30 21-00-0{late_s}.mkv")
        write_cases(inst)


def _top_ssim(img: np.ndarray, cam_ref: np.ndarray) -> float:
    """The Cam SSIM the scorer reads from an FFV1 (yuv444p) recording of this frame: the same
    conversions (to 4:4:4 Y'CbCr, scaled to 216 px wide, to RGB) without the lossless codec."""
    import av

    from verifiers.measure.frames import to_rgb

    small, _tags = to_rgb(av.VideoFrame.from_ndarray(img, format="rgb24").reformat(format="yuv444p"), width=216)
    return _region_ssim(small[:162], cam_ref)


def _last_shift_at_least(ssim_at: Any, line: float, hi_px: int = 540) -> int:
    """The largest shift (px) whose Cam SSIM is still >= line (SSIM falls as the crop moves off)."""
    lo, hi = 0, hi_px
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ssim_at(mid) >= line else (lo, mid)
    return lo


def ssim_near_misses(inst: InstanceWriter, solution: Any, cam: np.ndarray, game: np.ndarray) -> None:
    """The Cam crop a few px right of its place, found so that its SSIM sits 0.02 inside (>= 0.92) and
    0.02 outside (<= 0.88) the seed's 0.9 line; recorded losslessly (FFV1 in MKV, as OBS's lossless
    preset writes) so the codec cannot move it across the line."""
    cache: dict[int, float] = {}

    def ssim_at(shift: int) -> float:
        if shift not in cache:
            cache[shift] = _top_ssim(vertical_frames(cam, game, top_shift_px=shift)[0], cam)
        return cache[shift]

    inside = _last_shift_at_least(ssim_at, 0.92)
    outside = _last_shift_at_least(ssim_at, 0.88) + 1
    for shift, lowers, side in pass_line_pair(inside, outside, N.layout_in_frames):
        solution(inst.mutant(f"cam_ssim_{side}", lowers,
                             f"Cam crop {shift} px right of its place: SSIM {ssim_at(shift):.3f}, {side} the 0.9 line"),
                 config(), vert_frames=vertical_frames(cam, game, top_shift_px=shift), lossless=True)


def write_cases(inst: InstanceWriter) -> None:
    """Self-test cases (verifiers.synthcases): the oracle re-exported / re-saved the way real apps do
    (>= 95) and gaming baselines (<= 5), all with OBS as the audited writer. (Garbage configs are
    T09/T10/T15's cases; here they would only add two 1080x1920 encodes.)"""
    cfg_rel, coll_rel = f"{PLUGIN_DIR}/config.json", f"{SCENES_DIR}/Untitled.json"
    main_rel, vert_rel = "recordings/2026-11-30 21-00-00.mkv", f"{VERT_DIR}/2026-11-30 21-00-01.mkv"
    base = inst.root / "baselines"
    # the plugin as installed: its canvas recording to ~/Videos, an OBS collection without V-Live
    InstanceWriter.write_json(base / cfg_rel, vertical_config("Vertical Scene", "/home/streamer/Videos"))
    O.write_collection(base / OBS_DIR, O.collection("Untitled", [O.scene("Scene", [])], []))
    audit = ("events.jsonl", "copy:oracle/events.jsonl")
    black = [(main_rel, f"black:oracle/{main_rel}"), (vert_rel, f"black:oracle/{vert_rel}")]
    default = [(cfg_rel, f"copy:baselines/{cfg_rel}"), (coll_rel, f"copy:baselines/{coll_rel}")]
    inst.export_case("vertical_h264_crf23", [(vert_rel, f"export:h264_crf23:oracle/{vert_rel}")],
                     why="the vertical recording as an 8-bit 4:2:0 H.264 export")
    inst.export_case("newer_obs_and_plugin_save", [(cfg_rel, f"json_variant:oracle/{cfg_rel}"),
                                                   (coll_rel, f"json_variant:oracle/{coll_rel}")],
                     why="config and collection with keys in another order, unknown keys, versions one higher")
    inst.baseline_case("default_config_black_recordings", [*default, *black, audit],
                       why="the plugin as installed and black recordings of the right size and length")
    inst.baseline_case("other_task_oracle", [*default, audit,
                                             (main_rel, "other_oracle:R06.12.01.01-T16:recordings/stinger.mkv"),
                                             (vert_rel, "other_oracle:R06.12.01.01-T16:recordings/stinger.mkv")],
                       why="T16's stinger recording as both recordings (T16 runs before T11 in the suite: no extra synth)")


def blocks(rng: np.random.Generator, size: tuple[int, int], grid: tuple[int, int]) -> np.ndarray:
    """A blocky colour pattern (compresses well, survives H.264, distinct per seed)."""
    small = rng.integers(30, 226, size=(grid[1], grid[0], 3)).astype(np.uint8)
    return cv2.resize(small, size, interpolation=cv2.INTER_NEAREST)


def vertical_frames(top: np.ndarray, band: np.ndarray, swap: bool = False, top_shift_px: int = 0) -> list[np.ndarray]:
    """One vertical canvas frame: `top` in the top 810 px (shifted right by top_shift_px, the gap
    left black as OBS leaves an uncovered canvas), `band` below, the captions text at the bottom."""
    img = np.full((1920, 1080, 3), 16, np.uint8)
    if swap:
        img[:800] = cv2.resize(top, (1080, 800), interpolation=cv2.INTER_NEAREST)
        img[810:1620] = cv2.resize(band, (1080, 810), interpolation=cv2.INTER_NEAREST)
    else:
        img[:810, top_shift_px:] = cv2.resize(top, (1080, 810), interpolation=cv2.INTER_NEAREST)[:, :1080 - top_shift_px]
        img[810:1610] = cv2.resize(band, (1080, 800), interpolation=cv2.INTER_NEAREST)
    cv2.putText(img, "captions go here", (60, 1800), cv2.FONT_HERSHEY_SIMPLEX, 2, (255, 255, 255), 4)
    return [img]


def config() -> dict[str, Any]:
    """The plugin's config.json for the 1080x1920 canvas recording to recordings/vertical/."""
    return vertical_config("V-Live", "/home/streamer/work/recordings/vertical")
