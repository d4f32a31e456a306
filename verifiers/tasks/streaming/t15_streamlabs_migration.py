"""R06.12.01.01-T15: import a Streamlabs collection as 'Migrated', relink media, replace widgets.

Work dir: fixtures/streamlabs_collection.overlay (File > Export Overlay: a zip of config.json, the
nodes/overlays RootNode of scenes -> slots -> content nodes, with every image/video copied in under
a new name and widget URLs blanked; read by verifiers.apps.streamlabs.load_overlay; no public
.overlay exists, the shape follows the app's save code),
assets/ (the media to relink to), widget_urls.txt ("<widget source name> <url>" per line).
Output: obs-studio/basic/scenes/Migrated.json and OBS's log of loading it (obs-studio/logs/).
GT: gt/migration.json = scenes, the original items' transforms, and the widget sources.

A saved path counts as existing when it exists as saved, or — because OBS saves absolute paths of
the machine the run happened on — when its part from `assets/` on exists in the work dir.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import numpy as np

from verifiers.base import ScoreContext
from verifiers.checks import Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.evidence.base import Payload
from verifiers.gtfiles import GTFile, gt_field
from verifiers.params import NoParams
from verifiers.paramtypes.streaming import Import, TransformsPreserved
from verifiers.synth import InstanceWriter
from verifiers.synthkit import obs_synth as O
from verifiers.tasks.streaming._shared.near_misses import pass_line_pair
from verifiers.tasks.streaming._shared.obs_config import OBS_DIR
from verifiers.tasks.streaming._shared.obs_task import ObsTask
from verifiers.tasks.streaming._shared.streamlabs_nodes import array_node, node

TASK = "R06.12.01.01-T15"
N = check_names(TASK)


@dataclass(frozen=True)
class MigratedItem(Payload):
    """One scene item of the original collection, as it was placed."""

    scene: str = gt_field(doc="the scene's name")
    source: str = gt_field(doc="the source's name")
    pos_px: list[float] = gt_field("pos", "position (x, y) on the base canvas")
    scale: list[float] = gt_field(doc="scale (x, y)")


class MigrationFile(GTFile, file="migration.json", task=TASK):
    """gt/migration.json: the original collection's scenes, item transforms, widgets and media."""

    scenes: list[str] = gt_field(doc="scene names in order")
    items: list[MigratedItem] = gt_field(doc="every scene item with its transform")
    widgets: list[str] = gt_field(doc="the Streamlabs widgets to replace by browser sources")
    media_sha256: dict[str, str] = gt_field(doc="file source -> sha256 of its own media", default_factory=dict)

    def validate(self) -> None:
        self.expect(all(len(i.pos_px) == 2 and len(i.scale) == 2 for i in self.items), "items",
                    "every item's pos and scale are (x, y)")
COLLECTION = "Migrated"
FILE_KEYS = {"image_source": "file", "ffmpeg_source": "local_file", "vlc_source": None}
#: OBS 29 log lines that mean a media file could not be found/opened.
MISSING_RE = re.compile(r"failed to load texture|Failed to open media|missing files?|Failed to open file",
                        re.IGNORECASE)
HOME = "/home/streamer/work"


def resolve(workdir: Path, saved: Any) -> Path | None:
    if not isinstance(saved, str) or not saved:
        return None
    p = Path(saved)
    if p.is_absolute() and p.is_file():   # a folder (assets/ itself) is no media file
        return p
    parts = PureWindowsPath(saved).parts if "\\" in saved else PurePosixPath(saved).parts
    if "assets" in parts:
        cand = workdir.joinpath(*parts[parts.index("assets"):])
        if cand.is_file():
            return cand
    return None


def file_paths(coll: Any) -> dict[str, Any]:
    out = {}
    for name, src in coll.inputs.items():
        key = FILE_KEYS.get(src.kind)
        if key and not (src.kind == "ffmpeg_source" and src.settings.get("is_local_file") is False):
            out[name] = src.settings.get(key)
    return out


def _widget_urls(ctx: ScoreContext) -> dict[str, str]:
    """widget_urls.txt: '<source name> <url>' per line; the URL is the last word."""
    out = {}
    for line in ctx.input("widget_urls.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and " " in line.strip():
            name, url = line.strip().rsplit(" ", 1)
            out[name.strip()] = url
    return out


class StreamlabsMigration(ObsTask):
    task_id = TASK
    gt_file = MigrationFile
    collection_name = COLLECTION

    @provides
    def relinked(self) -> dict[str, bool]:
        """Each file source -> its saved path exists (in the work dir's assets/ or as saved) and holds
        that source's own media (sha256 in the GT: the .overlay carries each source's file), so every
        source pointed at one existing asset is relinked once, not five times."""
        want = self.gt.media_sha256
        out = {}
        for n, v in file_paths(self.coll).items():
            f = resolve(self.ctx.workdir, v)
            out[n] = f is not None and (n not in want or hashlib.sha256(f.read_bytes()).hexdigest() == want[n])
        return out

    @provides
    def replaced(self) -> dict[str, bool]:
        """Each widget of the original -> now a browser source with its URL from widget_urls.txt."""
        coll, urls = self.coll, _widget_urls(self.ctx)
        out = {}
        for name in self.gt.widgets:
            src = coll.sources.get(name)
            out[name] = bool(src and src.kind == "browser_source" and src.raw_settings.get("url") == urls.get(name)
                             and not src.raw_settings.get("is_local_file", False))
        return out

    @property
    def primary_change(self) -> bool:
        """The migration's own work is present: a media source relinked or a widget replaced. Without
        it the shares that pay for what the import keeps by itself (scenes, transforms) earn 0: the
        .overlay imported as it is shows every scene and every transform unchanged."""
        return any(self.relinked.values()) or any(self.replaced.values())

    @check(N.import_)
    def import_(self, p: Import, curve: Curve) -> Result:
        gt, coll = self.gt, self.coll
        present = [s for s in gt.scenes if s in coll.scenes]
        n_scenes = len([s for s in coll.scenes.values() if not s.is_group])
        items = [*(s in coll.scenes for s in gt.scenes), n_scenes == p.scene_count]
        ev = {"scenes": sorted(coll.scenes), "missing": [s for s in gt.scenes if s not in present],
              "scene_count": n_scenes}
        if not self.primary_change:
            return Result.fail("the collection is the .overlay as imported: no media relinked, no widget replaced", ev)
        return Result(curve.count(items), ev,
                      "; ".join([*(["scenes missing from the import"] if len(present) < len(gt.scenes) else []),
                                 *([f"{n_scenes} scenes, not {p.scene_count}"] if n_scenes != p.scene_count else [])]))

    @check(N.media_relinked)
    def media_relinked(self, p: NoParams, curve: Curve) -> Result:
        paths, ok = file_paths(self.coll), self.relinked
        logs = sorted((self.ctx.workdir / OBS_DIR / "logs").glob("*.txt"))
        log_text = logs[-1].read_text(encoding="utf-8", errors="replace") if logs else ""
        missing_lines = [ln.strip() for ln in log_text.splitlines() if MISSING_RE.search(ln)][:5]
        # a clean log says nothing about media when no saved path resolves (it was not loaded at all)
        parts = [*ok.values(), bool(logs) and not missing_lines and any(ok.values())]
        bad = [n for n, v in ok.items() if not v]
        return Result(curve.count(sum(parts), len(parts)) if paths else 0.0,
                      {"unresolved": bad, "log": logs[-1].name if logs else None, "log_missing_lines": missing_lines},
                      "; ".join([*(f"missing file for {b}" for b in bad),
                                 *(["no OBS log of loading the collection"] if not logs else []),
                                 *(["OBS log reports missing media"] if missing_lines else [])]))

    @check(N.widgets_replaced)
    def widgets_replaced(self, p: NoParams, curve: Curve) -> Result:
        wok = self.replaced
        return Result(curve.count(sum(wok.values()), len(wok)), {"widgets": wok},
                      "; ".join(f"{n} not a browser source with its URL" for n, v in wok.items() if not v))

    @check(N.transforms_preserved)
    def transforms_preserved(self, p: TransformsPreserved, curve: Curve) -> Result:
        tol, tok = p.tolerance_px, {}
        canvas = self.coll.resolution_px or BASE_PX   # OBS 31+ loads pos_rel on this canvas, not pos
        for it in self.gt.items:
            sc = self.coll.scenes.get(it.scene)
            got = sc.item(it.source) if sc else None
            pos = got.loaded_pos_px(canvas) if got else (0.0, 0.0)
            tok[f"{it.scene}/{it.source}"] = bool(got) and abs(pos[0] - it.pos_px[0]) <= tol \
                and abs(pos[1] - it.pos_px[1]) <= tol \
                and abs(got.transform.scale_x - it.scale[0]) <= 0.01 \
                and abs(got.transform.scale_y - it.scale[1]) <= 0.01
        if not self.primary_change:
            return Result.fail("the collection is the .overlay as imported: transforms kept by doing nothing earn 0",
                               {"moved": [k for k, v in tok.items() if not v]})
        return Result(curve.count(sum(tok.values()), len(tok)), {"moved": [k for k, v in tok.items() if not v]},
                      "; ".join(f"{k} moved or missing" for k, v in tok.items() if not v))

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        w = inst.workdir
        for n, rgb in (("intro.png", (200, 80, 0, 255)), ("frame.png", (255, 255, 255, 0)),
                       ("outro.png", (0, 80, 200, 255)), ("logo.png", (250, 250, 0, 255))):
            O.png(w / "assets" / n, 64, 36, rgb)
        (w / "assets" / "music.mp3").write_bytes(b"ID3\x03\x00\x00\x00\x00\x00\x00")  # exists only
        (w / "widget_urls.txt").write_text("".join(f"{n} {u}\n" for n, u in WIDGETS.items()))
        good = build()
        items = [{"scene": s["name"], "source": it["name"], "pos": [it["pos"]["x"], it["pos"]["y"]],
                  "scale": [it["scale"]["x"], it["scale"]["y"]]}
                 for s in good["sources"] if s["id"] == "scene" for it in s["settings"]["items"]]
        sha = {s["name"]: hashlib.sha256((w / "assets" / PurePosixPath(f).name).read_bytes()).hexdigest()
               for s in good["sources"] if (k := FILE_KEYS.get(s["id"])) and (f := s["settings"].get(k))}
        inst.write_json(inst.gt / "migration.json", {"scenes": [s["name"] for s in good["scene_order"]],
                                                     "items": items, "widgets": sorted(WIDGETS),
                                                     "media_sha256": sha})
        (w / "fixtures").mkdir()
        media = {p.name: p.read_bytes() for p in (w / "assets").iterdir()}
        (w / "fixtures" / "streamlabs_collection.overlay").write_bytes(overlay_zip(good, media))

        def solution(folder: Path, coll: dict, log: str = CLEAN_LOG) -> None:
            cfg = folder / OBS_DIR
            O.write_collection(cfg, coll)
            O.write_global(cfg, coll["name"], "Untitled")
            (cfg / "logs").mkdir(parents=True, exist_ok=True)
            (cfg / "logs" / "2026-11-30 21-00-00.txt").write_text(log)

        solution(inst.oracle, good)
        c = copy.deepcopy(good)
        old_path = OVERLAY_INSTALL_DIR + "\\1.png"   # where Streamlabs unpacked the overlay on the old PC
        O.find_source(c, "Intro BG")["settings"]["file"] = old_path
        solution(inst.mutant("intro_not_relinked", [N.media_relinked], "Intro BG still points at the old PC"), c,
                 CLEAN_LOG + f"21:00:01.200: [image_source: 'Intro BG'] failed to load texture '{old_path}'\n")
        solution(inst.mutant("log_reports_missing", [N.media_relinked], "OBS log shows a missing file on load"),
                 good, CLEAN_LOG + "21:00:01.300: MP: Failed to open media: '/home/streamer/old/music.mp3'\n")
        c = copy.deepcopy(good)
        s = O.find_source(c, "Alert Box")
        s.update(id="streamlabs_alertbox", versioned_id="streamlabs_alertbox", settings={})
        solution(inst.mutant("widget_left", [N.widgets_replaced], "Alert Box left as a Streamlabs widget"), c)
        c = copy.deepcopy(good)
        O.find_source(c, "Chat Box")["settings"]["url"] = "https://streamlabs.com/widgets/chat-box/v1/OTHER"
        solution(inst.mutant("wrong_widget_url", [N.widgets_replaced], "Chat Box pointed at another URL"), c)
        c = copy.deepcopy(good)
        O.find_item(c, "Main", "Logo")["pos"]["x"] += 5
        solution(inst.mutant("logo_moved_5px", [N.transforms_preserved], "Logo nudged 5 px"), c)
        for dx, lowers, side in pass_line_pair(2, 3, N.transforms_preserved):  # the seed's +-2 px pass line
            c = copy.deepcopy(good)
            O.find_item(c, "Main", "Logo")["pos"]["x"] += dx
            solution(inst.mutant(f"logo_{dx}px_{side}", lowers,
                                 f"Logo {dx} px off its imported place: {side} the +-2 px pass line"), c)
        c = copy.deepcopy(good)
        c["sources"] = [s for s in c["sources"] if s["name"] != "Outro"]
        c["scene_order"] = [s for s in c["scene_order"] if s["name"] != "Outro"]
        solution(inst.mutant("outro_scene_lost", [N.import_, N.transforms_preserved], "Outro scene not imported"), c)
        write_cases(inst, good, solution)


def write_cases(inst: InstanceWriter, good: dict[str, Any], solution: Any) -> None:
    """Self-test cases (verifiers.synthcases): the collection as a newer OBS saves it (>= 95) and gaming
    baselines (<= 5), each with a clean load log. `solution(folder, coll)` writes collection and log."""
    base = inst.root / "baselines"
    as_is = copy.deepcopy(good)      # the .overlay imported with nothing fixed: paths on the old PC
    for n, s in enumerate((s for s in as_is["sources"] if FILE_KEYS.get(s["id"])), 1):
        key = FILE_KEYS[s["id"]]
        s["settings"][key] = f"{OVERLAY_INSTALL_DIR}\\{n}{PurePosixPath(s['settings'][key]).suffix}"
    for name in WIDGETS:
        O.find_source(as_is, name).update(id="streamlabs_widget", versioned_id="streamlabs_widget", settings={})
    solution(base / "as_is", as_is)
    every = copy.deepcopy(as_is)     # every file source at the assets folder, every widget with all URLs
    for s in every["sources"]:
        if FILE_KEYS.get(s["id"]):
            s["settings"][FILE_KEYS[s["id"]]] = f"{HOME}/assets"
    for name in WIDGETS:
        O.find_source(every, name).update(id="browser_source", versioned_id="browser_source",
                                          settings={"url": " ".join(WIDGETS.values())})
    solution(base / "every_file_and_url", every)
    solution(base / "default", O.collection(COLLECTION, [O.scene("Scene", [])], []))
    coll_rel, log_rel = "obs-studio/basic/scenes/Migrated.json", "obs-studio/logs/2026-11-30 21-00-00.txt"
    inst.export_case("newer_obs_save", [(coll_rel, f"json_variant:oracle/{coll_rel}")],
                     why="keys in another order, unknown keys of a newer OBS, other indentation")
    for name, why in (("as_is", "the .overlay imported with nothing relinked or replaced"),
                      ("every_file_and_url", "every file source at the assets folder, every widget with all URLs"),
                      ("default", "OBS's new collection (one empty Scene) named Migrated")):
        inst.baseline_case(f"{name}_collection", [(coll_rel, f"copy:baselines/{name}/{coll_rel}"),
                                                  (log_rel, f"copy:baselines/{name}/{log_rel}")], why=why)
    inst.baseline_case("garbage_collection", [(coll_rel, f"json_garbage:oracle/{coll_rel}"),
                                              (log_rel, f"copy:oracle/{log_rel}")],
                       why="the collection's structure with random values")
    inst.baseline_case("other_task_oracle", [(coll_rel, "other_oracle:R06.12.01.01-T01:"
                                                        "obs-studio/basic/scenes/Weekly_Stream.json"),
                                             (log_rel, f"copy:oracle/{log_rel}")],
                       why="T01's collection saved as Migrated")


WIDGETS = {"Alert Box": "https://streamlabs.com/alert-box/v3/SANDBOX01",
           "Chat Box": "https://streamlabs.com/widgets/chat-box/v1/SANDBOX01",
           "Event List": "https://streamlabs.com/widgets/event-list/v1/SANDBOX01"}
CLEAN_LOG = ("21:00:00.000: OBS 29.0.2 (linux)\n21:00:00.500: Loading scene collection 'Migrated'\n"
             "21:00:01.000: All scene data cleared\n21:00:01.100: Switched to scene 'Intro'\n")


def build() -> dict[str, Any]:
    inputs = [
        O.source("Intro BG", "image_source", {"file": f"{HOME}/assets/intro.png"}),
        O.source("Frame", "image_source", {"file": f"{HOME}/assets/frame.png"}),
        O.source("Logo", "image_source", {"file": f"{HOME}/assets/logo.png"}),
        O.source("Outro BG", "image_source", {"file": f"{HOME}/assets/outro.png"}),
        O.source("Music", "ffmpeg_source", {"local_file": f"{HOME}/assets/music.mp3", "looping": True}),
        O.source("Game", "xcomposite_input", {}),
        O.source("Cam", "v4l2_input", {}),
        *[O.source(n, "browser_source", {"url": u, "width": 800, "height": 600}) for n, u in WIDGETS.items()],
    ]
    scenes = [
        O.scene("Intro", [O.item("Intro BG", 1), O.item("Music", 2)]),
        O.scene("Main", [O.item("Game", 1), O.item("Frame", 2), O.item("Logo", 3, pos=(1780, 24), scale=(0.5, 0.5)),
                         O.item("Alert Box", 4, pos=(560, 0)), O.item("Event List", 5, pos=(1500, 300))]),
        O.scene("Chatting", [O.item("Cam", 1, scale=(1.5, 1.5)), O.item("Chat Box", 2, pos=(1420, 200))]),
        O.scene("BRB", [O.item("Intro BG", 1), O.item("Logo", 2, pos=(860, 440))]),
        O.scene("Outro", [O.item("Outro BG", 1), O.item("Music", 2)]),
    ]
    return O.collection(COLLECTION, scenes, inputs)


#: Streamlabs WidgetType numbers (app/services/widgets/widgets-data.ts) of the widgets the overlay holds.
WIDGET_TYPES = {"Alert Box": 0, "Chat Box": 6, "Event List": 7}
#: Windows source kinds Streamlabs saved these as (the migrated OBS collection is on Linux).
STREAMLABS_KINDS = {"Game": "game_capture", "Cam": "dshow_input"}
BASE_PX = (1920, 1080)
#: loadOverlay unpacks to <appData>/Overlays/<overlay name>/ and points each source there (overlays.ts).
OVERLAY_INSTALL_DIR = "C:\\Users\\streamer\\AppData\\Roaming\\slobs-client\\Overlays\\streamlabs_collection"


def _slot_content(src: dict[str, Any], assets: dict[str, tuple[str, bytes]], media: dict[str, bytes]) -> dict[str, Any]:
    """The content node Streamlabs saves for one source (nodes/overlays/slots.ts saveItem): media
    copied into the zip under a new unique name (once per file), widget URLs blanked."""
    kind, st = src["id"], src["settings"]
    if src["name"] in WIDGET_TYPES:
        return node("WidgetNode", 1, settings={**st, "url": ""}, type=WIDGET_TYPES[src["name"]])
    if kind in ("image_source", "ffmpeg_source"):
        path = st["file" if kind == "image_source" else "local_file"]
        if path not in assets:
            assets[path] = (f"{len(assets) + 1}{PurePosixPath(path).suffix}", media[PurePosixPath(path).name])
        if kind == "image_source":
            return node("ImageNode", 1, filename=assets[path][0])
        return node("VideoNode", 1, settings={**st, "local_file": ""}, filename=assets[path][0])
    if STREAMLABS_KINDS.get(src["name"]) == "game_capture":
        return node("GameCaptureNode", 2, width=BASE_PX[0], height=BASE_PX[1])
    return node("WebcamNode", 1, width=1.0, height=1.0)


def overlay_config(coll: dict[str, Any], media: dict[str, bytes]) -> tuple[dict[str, Any], dict[str, bytes]]:
    """config.json of a Streamlabs .overlay of this collection (RootNode schema 2 of
    nodes/overlays/root.ts, as OverlaysPersistenceService.saveOverlay writes it) and the zip's
    media files. Slots bottom -> top; x/y are fractions of the base resolution and scaleX/scaleY
    the scale divided by the base width/height (slots.ts saveItem)."""
    by_name = {s["name"]: s for s in coll["sources"]}
    assets: dict[str, tuple[str, bytes]] = {}
    scenes = []
    for n, entry in enumerate(coll["scene_order"], 1):
        slots = []
        for it in by_name[entry["name"]]["settings"]["items"]:
            src = by_name[it["name"]]
            slot = {"id": f"{n:02d}{it['id']:02d}a0e2-0000-4000-8000-000000000000", "sceneNodeType": "item",
                    "name": it["name"], "x": it["pos"]["x"] / BASE_PX[0], "y": it["pos"]["y"] / BASE_PX[1],
                    "scaleX": it["scale"]["x"] / BASE_PX[0], "scaleY": it["scale"]["y"] / BASE_PX[1],
                    "crop": {"top": it["crop_top"], "bottom": it["crop_bottom"], "left": it["crop_left"],
                             "right": it["crop_right"]}, "rotation": it["rot"], "visible": it["visible"],
                    "display": "horizontal", "filters": [], "locked": False}
            if src.get("mixers"):
                slot["mixerHidden"] = False
            slots.append({**slot, "content": _slot_content(src, assets, media)})
        scenes.append({"slots": array_node("SlotsNode", 1, slots), "name": entry["name"],
                       "sceneId": f"scene_{n:08d}-0000-4000-8000-000000000000"})
    root = node("RootNode", 2, scenes=array_node("ScenesNode", 2, scenes),
                transition=node("TransitionNode", 1, type="fade_transition", duration=300, settings={}),
                nodeMap=node("NodeMapNode", 1))
    return root, dict(assets.values())


def overlay_zip(coll: dict[str, Any], media: dict[str, bytes]) -> bytes:
    """A Streamlabs .overlay: a zip of config.json (2-space JSON) and the media beside it."""
    cfg, files = overlay_config(coll, media)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo("config.json", (2026, 1, 1, 0, 0, 0)), json.dumps(cfg, indent=2))
        for name, data in sorted(files.items()):
            z.writestr(zipfile.ZipInfo(name, (2026, 1, 1, 0, 0, 0)), data)
    return buf.getvalue()
