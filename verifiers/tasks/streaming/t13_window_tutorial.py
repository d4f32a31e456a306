"""R06.12.01.01-T13: record only the Calculator window (1280x720, ~20 s) while computing 12 x 34 =.

Emulated (catalog): the harness's stand-in calculator window plays Calculator here; its display
font and layout are known, so "OCR" is template classification: the display box of the last
frames is matched (normalised cross-correlation) against renders of the candidate readings in
gt/display/<text>.png and must read 408. Leaks are colour signatures: the desktop wallpaper is a
known template and the notification fired mid-task (scenario action `notify`) a known banner colour
(gt/t13.json). window_only also needs the audit: no process but OBS may have written obs-studio/,
and none of the catalog's forbidden writers (ffmpeg, bash, sh) the recording.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from verifiers.base import AgentOutputError, NoLiveEvidence
from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.evidence import AuditWrite, ScenarioAction
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.errors import MediaError
from verifiers.params import NoParams
from verifiers.paramtypes.streaming import ActionRecorded, CanvasDuration
from verifiers.synth import InstanceWriter
from verifiers.synthkit import obs_synth as O
from verifiers.synthkit.streaming_media import truncate, write_media
from verifiers.tasks.streaming._shared.near_misses import pass_line_pair
from verifiers.tasks.streaming._shared.obs_config import OBS_DIR, collection_with
from verifiers.tasks.streaming._shared.recording import frames, probe

TASK = "R06.12.01.01-T13"
N = check_names(TASK)


class TutorialLayout(GTFile, file="t13.json", task=TASK):
    """gt/t13.json: the calculator window's size, its display's box, and the leak colour signatures."""

    window_px: list[int] = gt_field(doc="the calculator window's width, height")
    display_box_px: list[int] = gt_field(doc="the display's x0, y0, x1, y1 inside the window")
    wallpaper_rgb: list[list[int]] = gt_field(doc="the desktop wallpaper's colours (a leak signature)")
    notification_rgb: list[int] = gt_field(doc="the notification's colour (a leak signature)")

    def validate(self) -> None:
        self.expect(len(self.window_px) == 2 and min(self.window_px) > 0, "window_px", "must be a positive width, height")
        b = self.display_box_px
        self.expect(len(b) == 4 and b[0] < b[2] and b[1] < b[3], "display_box_px", "must be x0, y0, x1, y1 with x0 < x1, y0 < y1")
        self.expect(all(len(c) == 3 for c in [*self.wallpaper_rgb, self.notification_rgb]), "wallpaper_rgb",
                    "colours are (R, G, B)")
REC = "recordings/calc_tutorial.mp4"
WINDOW_KINDS = ("xcomposite_input", "window_capture", "game_capture", "pipewire-window-capture-source")
DISPLAY_KINDS = ("xshm_input", "monitor_capture", "display_capture", "pipewire-desktop-capture-source")
OBS_WRITERS = {"obs", "obs-studio", "obs64.exe", "obs.exe", "obs64"}
CANDIDATES = ("0", "1", "12", "34", "408", "1234")
FPS = 2
#: a display box whose best candidate reading correlates this well is the calculator's (action_recorded's line)
MIN_READ_NCC = 0.6


def colour_share(img: np.ndarray, colours: list[list[int]], tol: int = 18) -> float:
    """Share of pixels within tol (per channel) of any of the colours."""
    px = img.reshape(-1, 3).astype(np.int16)
    hit = np.zeros(len(px), bool)
    for c in colours:
        hit |= (np.abs(px - np.array(c, np.int16)) <= tol).all(axis=1)
    return float(hit.mean())


def display_box(gt: TutorialLayout, w: int, h: int) -> tuple[int, int, int, int]:
    """The calculator display in frame pixels: window scaled to fit the canvas and centred (OBS 'fit')."""
    ww, wh = gt.window_px
    s = min(w / ww, h / wh)
    ox, oy = (w - ww * s) / 2, (h - wh * s) / 2
    x0, y0, x1, y1 = gt.display_box_px
    return round(ox + x0 * s), round(oy + y0 * s), round(ox + x1 * s), round(oy + y1 * s)


def read_display(img: np.ndarray, refs: dict[str, np.ndarray]) -> tuple[str, float]:
    g = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY).astype(np.float32)
    best, score = "", -1.0
    for text, ref in refs.items():
        r = cv2.resize(ref, (g.shape[1], g.shape[0]), interpolation=cv2.INTER_AREA).astype(np.float32)
        a, b = g - g.mean(), r - r.mean()
        ncc = float((a * b).sum() / (np.sqrt((a * a).sum() * (b * b).sum()) + 1e-9))
        if ncc > score:
            best, score = text, ncc
    return best, score


@dataclass(frozen=True)
class Recording:
    """The tutorial recording: probe, first video stream, sampled frames, and why it is unusable ("" if usable)."""

    info: Any
    video: Any
    samples: list[tuple[float, np.ndarray]]
    err: str


class WindowTutorial(CheckedTask):
    task_id = TASK

    @provides
    def gt(self) -> tuple[TutorialLayout, dict[str, np.ndarray]]:
        """GT layout and the display references; every check needs them (GT missing: all error)."""
        gt = self.ctx.gt_typed(TutorialLayout)
        refs = {t: cv2.imread(str(self.ctx.gt_path(f"display/{t}.png")), cv2.IMREAD_GRAYSCALE) for t in CANDIDATES}
        return gt, refs

    @provides
    def rec(self) -> Recording:
        try:
            info = probe(self.ctx.artifact(REC))
            v = info.video[0] if info.video else None
            return Recording(info, v, list(frames(self.ctx.artifact(REC), max_width_px=320)), "")
        except (AgentOutputError, MediaError) as exc:
            return Recording(None, None, [], str(exc))

    @provides
    def shows_calculator(self) -> bool:
        """Content identity: some sampled frame shows the calculator's display (it reads as one of the
        candidate numbers at the NCC line action_recorded uses). Black frames or another window do
        not; without it the shares for what is absent (wallpaper, notification) and for the file's
        size and length pay for nothing."""
        gt, refs = self.gt
        for _t, img in self.rec.samples:
            x0, y0, x1, y1 = display_box(gt, img.shape[1], img.shape[0])
            if read_display(img[y0:y1, x0:x1], refs)[1] >= MIN_READ_NCC:
                return True
        return False

    @check(N.window_only)
    def window_only(self, p: NoParams, curve: Curve) -> Result:
        gt, rec = self.gt[0], self.rec
        try:
            coll = collection_with(self.ctx, scene="Tutorial")
            kinds = [coll.sources[n].kind for n in coll.scenes["Tutorial"].item_names() if n in coll.sources]
        except AgentOutputError:
            kinds = []
        wall = max((colour_share(img, gt.wallpaper_rgb) for _t, img in rec.samples), default=0.0)
        try:
            audit = self.ctx.events_of("audit", "write")
        except NoLiveEvidence as exc:
            return Result.cannot_judge(f"{exc} (who wrote the scene JSON and the recording must be audited)")
        forbidden = set(self.task.forbidden_writers)
        writes = [AuditWrite.from_event(e) for e in audit]
        bad = [w.to_payload() for w in writes
               if ("obs-studio" in w.path and (w.process or "").lower() not in OBS_WRITERS)
               or (w.process or "").lower() in forbidden]
        parts = {"window capture in Tutorial": any(k.startswith(WINDOW_KINDS) for k in kinds),
                 "no display capture": bool(kinds) and not any(k.startswith(DISPLAY_KINDS) for k in kinds),
                 "no wallpaper in frames": bool(rec.samples) and wall <= 0.001 and self.shows_calculator}
        ev = {"sources": kinds, "max_wallpaper_share": wall, "bad_writers": bad,
              "shows_calculator": self.shows_calculator, **parts}
        if bad:   # a gate, not an item: "no outside writer" alone would pay for doing nothing
            return Result.fail("obs-studio/ or the recording written by another process than OBS", ev)
        return Result(curve.count(sum(parts.values()), 3), ev,
                      "; ".join(f"not {k}" for k, s in parts.items() if not s) or rec.err)

    @check(N.canvas_duration)
    def canvas_duration(self, p: CanvasDuration, curve: Curve) -> Result:
        self.gt  # noqa: B018 - as before the split: without GT nothing is judged
        info, v = self.rec.info, self.rec.video
        if info is None or v is None:
            return Result.fail(self.rec.err or "no video stream")
        if not self.shows_calculator:
            return Result.fail("the recording does not show the calculator", {"duration_s": info.duration_s})
        parts = {"1280x720": [v.width_px, v.height_px] == list(p.size_px),
                 "18-25 s": p.min_duration_s <= info.duration_s <= p.max_duration_s}
        return Result(curve.count(sum(parts.values()), 2),
                      {"size": [v.width_px, v.height_px], "duration_s": info.duration_s, **parts},
                      "; ".join(f"not {k}" for k, s in parts.items() if not s))

    @check(N.action_recorded)
    def action_recorded(self, p: ActionRecorded, curve: Curve) -> Result:
        gt, refs = self.gt
        rec = self.rec
        if rec.info is None or rec.video is None:
            return Result.fail(rec.err or "no video stream")
        reads = []
        for _t, img in rec.samples[-3:] if rec.samples else []:
            x0, y0, x1, y1 = display_box(gt, img.shape[1], img.shape[0])
            reads.append(read_display(img[y0:y1, x0:x1], refs))
        ok = bool(reads) and any(r[0] == p.expected_text and r[1] >= MIN_READ_NCC for r in reads)
        return Result(curve.passes(ok), {"read": reads}, "" if ok else f"display does not read {p.expected_text} at the end")

    @check(N.no_notification_leak)
    def no_notification_leak(self, p: NoParams, curve: Curve) -> Result:
        gt, samples = self.gt[0], self.rec.samples
        notify = [e for e in self.ctx.events_of("scenario", "action") if ScenarioAction.from_event(e).action == "notify"]
        if not notify:
            return Result.cannot_judge("no live evidence: the scenario fired no test notification")
        leak = [t for t, img in samples if colour_share(img, [gt.notification_rgb]) > 0.002]
        if samples and not self.shows_calculator:
            return Result.fail("the recording does not show the calculator: nothing in it to keep clean")
        return Result(curve.passes(not (leak or not samples)), {"frames_with_notification_s": leak[:10]},
                      "notification visible in the recording" if leak else (self.rec.err if not samples else ""))

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        gt = {"window_px": [320, 480], "display_box_px": [20, 20, 300, 100],
              "wallpaper_rgb": [[200, 30, 170], [20, 170, 160]], "notification_rgb": [250, 140, 10]}
        inst.write_json(inst.gt / "t13.json", gt)
        (inst.gt / "display").mkdir(parents=True)
        for t in CANDIDATES:
            cv2.imwrite(str(inst.gt / "display" / f"{t}.png"), display_img(t))
        (inst.workdir / "recordings").mkdir(parents=True)
        good = build()
        cache: dict[tuple, bytes] = {}

        def solution(folder: Path, coll: dict, *, dur_s: float = 20.0, size=(1280, 720), final: str = "408",
                     wallpaper: bool = False, notification: bool = False, writer: str = "obs",
                     run: bool = True) -> None:
            cfg = folder / OBS_DIR
            O.write_collection(cfg, coll)
            O.write_global(cfg, coll["name"], "Tutorial")
            key = (dur_s, size, final, wallpaper, notification)
            path = folder / REC
            path.parent.mkdir(parents=True, exist_ok=True)
            if key not in cache:
                write_media(path, recording(gt, dur_s, size, final, wallpaper, notification), FPS)
                cache[key] = path.read_bytes()
            else:
                path.write_bytes(cache[key])
            if run:
                InstanceWriter.write_events(folder, [
                    ScenarioAction("toast", action="notify", arg="Test notification").event(9000),
                    AuditWrite("obs-studio/basic/scenes/Tutorial.json", process="obs").event(1000),
                    AuditWrite(REC, process=writer).event(21000)])

        solution(inst.oracle, good)
        c = copy.deepcopy(good)
        O.find_source(c, "Calculator")["id"] = O.find_source(c, "Calculator")["versioned_id"] = "xshm_input"
        solution(inst.mutant("display_capture", [N.window_only], "display capture cropped to the calculator"), c,
                 wallpaper=True)
        solution(inst.mutant("notification_leaks", [N.no_notification_leak], "notification drawn over the window"),
                 good, notification=True)
        solution(inst.mutant("recording_15s", [N.canvas_duration], "stopped after 15 s"), good, dur_s=15.0)
        for inside, outside in ((18.5, 17.5), (24.5, 25.5)):   # the seed's 18-25 s window, lower and upper edge
            for dur_s, lowers, side in pass_line_pair(inside, outside, N.canvas_duration):
                solution(inst.mutant(f"recording_{dur_s}s_{side}", lowers, f"stopped after {dur_s} s: {side} 18-25 s"),
                         good, dur_s=dur_s)
        solution(inst.mutant("canvas_1080p", [N.canvas_duration], "canvas left at 1920x1080"), good, size=(1920, 1080))
        solution(inst.mutant("no_equals", [N.action_recorded], "= never pressed: display shows 34"), good, final="34")
        solution(inst.mutant("ffmpeg_wrote_recording", [N.window_only], "recording made with ffmpeg x11grab"), good,
                 writer="ffmpeg")
        solution(inst.mutant("no_run_recorded", [N.window_only, N.no_notification_leak], "no audit/scenario: cannot judge"),
                 good, run=False)
        solution(inst.mutant("truncated", [N.window_only, N.canvas_duration, N.action_recorded, N.no_notification_leak],
                             "recording never finalised"), good)
        truncate(inst.root / "mutants" / "truncated" / REC, 0.05)
        write_cases(inst, good)


def write_cases(inst: InstanceWriter, good: dict[str, Any]) -> None:
    """Self-test cases (verifiers.synthcases): the recording re-encoded H.264 CRF 23 (>= 95) and gaming
    baselines (<= 5): black frames with the oracle's run (no scene), another task's recording. (Beside
    the oracle's scene the black file keeps window_only's two scene items, 20 points of scene work.)"""
    inst.export_case("h264_crf23", [(REC, f"export:h264_crf23:oracle/{REC}")], why="8-bit 4:2:0 H.264 at CRF 23")
    inst.baseline_case("black_recording", [(REC, f"black:oracle/{REC}"), ("events.jsonl", "copy:oracle/events.jsonl")],
                       why="black frames of the right size and length, the oracle's run, no scene")
    inst.baseline_case("other_task_oracle", [(REC, "other_oracle:R06.12.01.01-T16:recordings/stinger.mkv")],
                       why="T16's recording, no scene, no run")



def display_img(text: str) -> np.ndarray:
    """The stand-in calculator's display (280x80, black digits right-aligned on white)."""
    img = np.full((80, 280), 255, np.uint8)
    (tw, _th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 1.8, 3)
    cv2.putText(img, text, (270 - tw, 62), cv2.FONT_HERSHEY_SIMPLEX, 1.8, 0, 3)
    return img


def window_img(text: str) -> np.ndarray:
    win = np.full((480, 320, 3), 70, np.uint8)
    win[20:100, 20:300] = cv2.cvtColor(display_img(text), cv2.COLOR_GRAY2RGB)
    for r in range(4):
        for c in range(4):
            x, y = 20 + c * 72, 120 + r * 88
            win[y:y + 76, x:x + 64] = (110, 110, 120)
    return win


def recording(gt: dict, dur_s: float, size: tuple[int, int], final: str, wallpaper: bool,
              notification: bool) -> list[np.ndarray]:
    w, h = size
    out = []
    for i in range(round(dur_s * FPS)):
        t = i / FPS
        text = "0" if t < 3 else "12" if t < 6 else "34" if t < 9 else final if t >= 11 else "34"
        win = window_img(text)
        s = min(w / 320, h / 480)
        ww, wh = round(320 * s), round(480 * s)
        img = np.zeros((h, w, 3), np.uint8)
        if wallpaper:
            img[:] = gt["wallpaper_rgb"][0]
            img[::40, :] = gt["wallpaper_rgb"][1]
        ox, oy = (w - ww) // 2, (h - wh) // 2
        img[oy:oy + wh, ox:ox + ww] = cv2.resize(win, (ww, wh), interpolation=cv2.INTER_AREA)
        if notification and 9 <= t < 14:
            img[20:120, w - 420:w - 20] = gt["notification_rgb"]
        out.append(img)
    return out


def build() -> dict[str, Any]:
    inputs = [O.source("Calculator", "xcomposite_input", {"capture_window": "0x3a00007\rCalculator\rtally-calc",
                                                          "show_cursor": True}),
              O.source("Mic", "pulse_input_capture", {"device_id": "default"})]
    scenes = [O.scene("Tutorial", [O.item("Calculator", 1, bounds=(1280, 720), bounds_type=2), O.item("Mic", 2)])]
    return O.collection("Tutorial", scenes, inputs)
