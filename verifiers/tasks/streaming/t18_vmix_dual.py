"""R06.12.01.01-T18: vMix streams to two local RTMP endpoints and records Program (MP4) plus CAM1/CAM2 ISOs.

Emulated (catalog): vMix is Windows-only; the emulator publishes and writes the files here, and
D:\\rec\\ is the work dir's rec/. Live: the RTMP ingest's stats for apps `a` and `b` (any key), and the
vMix observer's `output` events (streaming, recording, multiCorder on/off). Files: the ISO recordings
are the videos whose names carry CAM1 / CAM2 (MultiCorder names files after the input); the Program
recording is the other MP4. Cuts are shot boundaries found by the live video probe's cut detector
(`verifiers.measure.scenes.LumaCutDetector`) on small grey frames.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np

from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.evidence import (
    AudioStats,
    RtmpListening,
    RtmpPublish,
    RtmpUnpublish,
    StreamSnapshot,
    Summary,
    VideoStats,
    VmixOutput,
)
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.detect import Change, Picture
from verifiers.measure.errors import MediaError
from verifiers.measure.scenes import LumaCutDetector
from verifiers.paramtypes.streaming import DualStreaming, IsoFiles, ProgramRecording, VmixSettings
from verifiers.synth import InstanceWriter
from verifiers.synthkit.streaming_media import write_media
from verifiers.tasks.streaming._shared.frame_rate import fps_ok
from verifiers.tasks.streaming._shared.ingest import snapshots_of
from verifiers.tasks.streaming._shared.near_misses import pass_line_pair
from verifiers.tasks.streaming._shared.recording import frames, probe
from verifiers.tasks.streaming._shared.run_events import t_ms

TASK = "R06.12.01.01-T18"
N = check_names(TASK)


class CamLooks(GTFile, file="cams.json", task=TASK, root="mean_rgb"):
    """gt/cams.json (optional): each test camera's mean colour, to tell the ISO recordings apart."""

    mean_rgb: dict[str, list[float]] = gt_field(doc="camera name -> mean (R, G, B), 0-255")

    def validate(self) -> None:
        self.expect(all(len(v) == 3 for v in self.mean_rgb.values()), "mean_rgb", "every colour is (R, G, B)")
REC_DIR = "rec"
VIDEO_EXT = (".mp4", ".mov", ".mkv", ".avi")
FPS = 2
#: an ISO's mean colour may differ this much (max channel, 8-bit codes) from its camera's: the harness's
#: test cameras differ by 100+ codes, an H.264 recording moves a mean by a few
CAM_LOOK_TOL = 30.0
#: "a 45 s run": the recording's span from vMix's start to its stop, by hand, within 3 s
RUN_TOL_S = 3.0


def cuts_s(path: Path) -> tuple[list[float], float, list[float]]:
    """Shot boundaries (s), the duration seen, and the mean RGB of the picture."""
    detector, ts, means = LumaCutDetector(), [], []
    cuts: list[Change] = []
    for t, img in frames(path, max_width_px=64):
        means.append(img.reshape(-1, 3).mean(axis=0))
        cuts += detector.push(Picture(t, cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)))
        ts.append(t)
    mean_rgb = [round(float(v), 1) for v in np.mean(means, axis=0)] if means else []
    return [c.t_s for c in cuts + detector.flush()], ts[-1] if ts else 0.0, mean_rgb


def classify(files: list[Path]) -> tuple[Path | None, dict[str, Path]]:
    isos = {cam: f for cam in ("CAM1", "CAM2") for f in files if cam.lower() in f.name.lower()}
    prog = [f for f in files if f not in isos.values() and f.suffix.lower() == ".mp4"]
    return (prog[0] if prog else None), isos


class VmixDualStream(CheckedTask):
    task_id = TASK

    @provides
    def files(self) -> tuple[Path | None, dict[str, Path]]:
        """(Program MP4, {CAM1/CAM2: ISO file}) in rec/."""
        d = self.ctx.workdir / REC_DIR
        return classify(sorted(f for f in d.iterdir() if f.is_file() and f.suffix.lower() in VIDEO_EXT)
                        if d.is_dir() else [])

    @provides
    def cam_looks(self) -> dict[str, list[float]]:
        """GT mean RGB of each test camera (gt/cams.json); none: the ISOs' content is not compared."""
        path = self.ctx.gt / CamLooks.FILE
        return self.ctx.gt_typed(CamLooks).mean_rgb if path.exists() else {}

    @check(N.program_recording)
    def program_recording(self, p: ProgramRecording, curve: Curve) -> Result:
        prog = self.files[0]
        if prog is None:
            return Result.fail(f"no Program MP4 in {REC_DIR}/")
        try:
            found, _dur, _rgb = cuts_s(prog)
        except MediaError as exc:
            return Result.fail(str(exc))
        hit = [any(abs(c - want) <= p.tolerance_s for c in found) for want in p.cuts_s]
        extra = [c for c in found if all(abs(c - w) > p.tolerance_s for w in p.cuts_s)]
        # "no other cut" counts only beside an asked cut: a file with no cut at all (black) has no extras
        s = curve.count([*hit, any(hit) and not extra])
        return Result(s, {"cuts_s": found, "extra_cuts_s": extra}, "" if s >= 1 else f"cuts at {[round(c, 1) for c in found]}")

    @check(N.iso_files)
    def iso_files(self, p: IsoFiles, curve: Curve) -> Result:
        iso_ok = {}
        for cam in ("CAM1", "CAM2"):
            f = self.files[1].get(cam)
            if f is None:
                iso_ok[cam] = {"ok": False, "why": "missing"}
                continue
            try:
                found, _, rgb = cuts_s(f)
                dur = probe(f).duration_s
            except MediaError as exc:
                iso_ok[cam] = {"ok": False, "why": str(exc)}
                continue
            look = self.cam_looks.get(cam)
            # the ISO shows its camera: its mean colour within CAM_LOOK_TOL of that camera's (GT); black
            # or another source of the right length is continuous too, but no recording of the camera
            its_cam = look is None or (bool(rgb) and max(abs(a - b) for a, b in zip(rgb, look, strict=True)) <= CAM_LOOK_TOL)
            iso_ok[cam] = {"ok": not found and dur >= p.min_duration_s and its_cam, "duration_s": dur, "cuts_s": found,
                           "mean_rgb": rgb, **({} if its_cam else {"why": f"not {cam}'s picture"})}
        return Result(curve.count(sum(v["ok"] for v in iso_ok.values()), p.count), iso_ok,
                      "; ".join(f"{c}: {v.get('why') or ('cut inside' if v.get('cuts_s') else 'too short')}"
                                for c, v in iso_ok.items() if not v["ok"]))

    @check(N.dual_streaming)
    def dual_streaming(self, p: DualStreaming, curve: Curve) -> Result:
        rtmp = self.ctx.events_of("rtmp")
        parts: dict[str, float] = {}
        for url in p.endpoints:
            app = url.rstrip("/").rsplit("/", 1)[-1]
            snaps = snapshots_of(rtmp, app)
            if not snaps:
                parts[f"{app}: stream"] = 0.0
                continue
            v = snaps[-1].video
            kbps = v.gop_bitrate_kbps or 0.0
            parts[f"{app}: 1080p30"] = float([v.width, v.height] == list(p.size_px) and fps_ok(v.fps, p.fps))
            parts[f"{app}: 6 Mbps"] = curve.part("bitrate").score(abs(kbps - p.bitrate_kbps) / p.bitrate_kbps * 100,
                                                                  p.bitrate_tolerance_pct)
        return Result(curve.count(list(parts.values()), 2 * len(p.endpoints)), parts,
                      "; ".join(f"not {k}" for k, s in parts.items() if s < 1))

    @check(N.settings)
    def settings(self, p: VmixSettings, curve: Curve) -> Result:
        on: dict[str, list[tuple[float, bool]]] = {}
        for t, o in [(t_ms(e), VmixOutput.from_event(e)) for e in self.ctx.events_of("vmix", "output")]:
            on.setdefault(o.name, []).append((t, o.active))

        def span(name: str) -> float:
            """Seconds from the output's first start to its last stop (0 when it never ran)."""
            starts = [t for t, a in on.get(name, []) if a]
            stops = [t for t, a in on.get(name, []) if not a]
            return (max(stops) - min(starts)) / 1000 if starts and stops and max(stops) > min(starts) else 0.0
        parts = {"streaming": span("streaming") > 0, "recording": span("recording") > 0,
                 "multiCorder": span("multiCorder") > 0, "45 s run": abs(span("recording") - p.run_s) <= RUN_TOL_S,
                 "Program as MP4": self.files[0] is not None}
        return Result(curve.count(sum(parts.values()), len(parts)),
                      {"spans_s": {k: span(k) for k in ("streaming", "recording", "multiCorder")}, **parts},
                      "; ".join(f"not {k}" for k, v in parts.items() if not v))

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        (inst.workdir / REC_DIR).mkdir(parents=True)
        cams = {"CAM1": cam_frames(rng, (40, 70, 160), 45), "CAM2": cam_frames(rng, (190, 110, 40), 45)}
        inst.write_json(inst.gt / "cams.json", {c: [round(float(v), 1) for v in np.mean([f.reshape(-1, 3).mean(axis=0)
                                                                                         for f in fr], axis=0)]
                                                for c, fr in cams.items()})
        cache: dict[tuple, bytes] = {}

        def video(path: Path, key: tuple, make) -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            if key not in cache:
                write_media(path, make(), FPS)
                cache[key] = path.read_bytes()
            else:
                path.write_bytes(cache[key])

        def program(cuts: tuple[float, ...]) -> list[np.ndarray]:
            out = []
            for i in range(45 * FPS):
                n = sum(i / FPS >= c for c in cuts)
                out.append(cams["CAM1" if n % 2 == 0 else "CAM2"][i])
            return out

        def solution(folder: Path, *, cuts: tuple[float, ...] = (15.0, 30.0), iso_cut: bool = False,
                     iso2: bool = True, b_kbps: float = 6000.0, only_a: bool = False, run_s: float = 45.0,
                     run: bool = True, iso1_s: float = 45.0, b_fps: float = 30.0) -> None:
            video(folder / REC_DIR / "capture 20261130 211500.mp4", ("prog", cuts), lambda: program(cuts))
            video(folder / REC_DIR / "CAM1 20261130 211500.mp4", ("iso1", iso_cut, iso1_s),
                  lambda: (program((20.0,)) if iso_cut else cams["CAM1"])[: int(iso1_s * FPS)])
            if iso2:
                video(folder / REC_DIR / "CAM2 20261130 211500.mp4", ("iso2",), lambda: cams["CAM2"])
            if not run:
                return
            evs = [RtmpListening("127.0.0.1", 1935).event(-1000)]
            for app, kbps, fps in (("a", 6000.0, 30.0), ("b", b_kbps, b_fps)):
                if only_a and app == "b":
                    continue
                snap = StreamSnapshot(duration_s=run_s, video=VideoStats(
                    codec="h264", width=1920, height=1080, fps=fps, bitrate_gop_bps=Summary(mean=kbps * 1000)),
                    audio=AudioStats(codec="aac", sample_rate_hz=48000))
                evs += [RtmpPublish(app, "vmix").event(0), RtmpUnpublish(app, "vmix", snap).event(run_s * 1000)]
            for name in ("streaming", "recording", "multiCorder"):
                evs += [VmixOutput(name, True, via="tcp").event(0),
                        VmixOutput(name, False, via="tcp").event(run_s * 1000)]
            InstanceWriter.write_events(folder, sorted(evs, key=lambda e: e["mono_ns"]))

        solution(inst.oracle)
        solution(inst.mutant("iso_with_cut", [N.iso_files], "CAM1 ISO recorded the program: a cut inside"),
                 iso_cut=True)
        solution(inst.mutant("no_cam2_iso", [N.iso_files], "MultiCorder only on CAM1"), iso2=False)
        solution(inst.mutant("cut_at_22s", [N.program_recording], "second cut at 22 s"), cuts=(15.0, 22.0))
        solution(inst.mutant("extra_cut", [N.program_recording], "a stray cut at 38 s"), cuts=(15.0, 30.0, 38.0))
        solution(inst.mutant("b_at_4500", [N.dual_streaming], "destination b at 4500 kbps"), b_kbps=4500.0)
        solution(inst.mutant("b_at_5460_inside", [], "destination b at 5460 kbps: 9 % low, inside +-10 %"),
                 b_kbps=5460.0)
        solution(inst.mutant("b_at_5340_outside", [N.dual_streaming], "destination b at 5340 kbps: 11 % low, past +-10 %"),
                 b_kbps=5340.0)
        solution(inst.mutant("only_a", [N.dual_streaming], "second destination never started"), only_a=True)
        solution(inst.mutant("run_35s", [N.settings], "stopped after 35 s"), run_s=35.0)
        solution(inst.mutant("no_run_recorded", [N.dual_streaming, N.settings], "no ingest/observer: cannot judge"),
                 run=False)
        near_misses(inst, solution)
        write_cases(inst)


def near_misses(inst: InstanceWriter, solution: Any) -> None:
    """Just inside / just outside the other pass lines: the second cut at 31.5 / 32.5 s (30 +- 2 s; the
    program is 2 fps, so cuts fall on 0.5 s), CAM1's ISO 40.5 / 39.5 s long (at least 40 s), the run
    47.5 / 48.5 s (45 +- 3 s), destination b at 29.97 / 29.4 fps (30 +- 0.5)."""
    for cut_s, lowers, side in pass_line_pair(31.5, 32.5, N.program_recording):
        solution(inst.mutant(f"cut_at_{cut_s}s_{side}", lowers, f"second cut at {cut_s} s: {side} 30 +- 2 s"),
                 cuts=(15.0, cut_s))
    for iso_s, lowers, side in pass_line_pair(40.5, 39.5, N.iso_files):
        solution(inst.mutant(f"cam1_iso_{iso_s}s_{side}", lowers, f"CAM1's ISO {iso_s} s long: {side} >= 40 s"),
                 iso1_s=iso_s)
    for run_s, lowers, side in pass_line_pair(47.5, 48.5, N.settings):
        solution(inst.mutant(f"run_{run_s}s_{side}", lowers, f"outputs stopped after {run_s} s: {side} 45 +- 3 s"),
                 run_s=run_s)
    for fps, lowers, side in pass_line_pair(29.97, 29.4, N.dual_streaming):
        solution(inst.mutant(f"b_at_{fps}fps_{side}", lowers, f"destination b at {fps} fps: {side} 30 +- 0.5"),
                 b_fps=fps)


def write_cases(inst: InstanceWriter) -> None:
    """Self-test cases (verifiers.synthcases): the three recordings re-encoded H.264 CRF 23 (>= 95) and
    gaming baselines (<= 5) without a recorded run: black files, another task's recording."""
    files = [f"{REC_DIR}/{n} 20261130 211500.mp4" for n in ("capture", "CAM1", "CAM2")]
    inst.export_case("h264_crf23", [(f, f"export:h264_crf23:oracle/{f}") for f in files],
                     why="Program and ISOs as 8-bit 4:2:0 H.264 at CRF 23")
    inst.baseline_case("black_files", [(f, f"black:oracle/{f}") for f in files],
                       why="black Program and ISOs of the right length, no run recorded")
    inst.baseline_case("other_task_oracle", [(f, "other_oracle:R06.12.01.01-T16:recordings/stinger.mkv")
                                             for f in files], why="T16's recording as all three files")


def cam_frames(rng: np.random.Generator, rgb: tuple[int, int, int], dur_s: int) -> list[np.ndarray]:
    """A camera: a coloured set with a slowly drifting blocky texture (no cuts)."""
    base = rng.integers(-40, 40, size=(6, 8, 3))
    out = []
    for i in range(dur_s * FPS):
        tex = cv2.resize(base.astype(np.float32), (160, 90), interpolation=cv2.INTER_LINEAR)
        img = np.clip(np.array(rgb, np.float32) + np.roll(tex, i, axis=1), 0, 255).astype(np.uint8)
        out.append(img)
    return out
