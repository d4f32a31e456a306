"""Near misses built independently of synth's writers (issue 21 acceptance).

Each case takes the synthetic instance's oracle files as they are on disk, edits them here with
plain json (no verifiers.synthkit, no task module helpers), and scores the result with the real
scoring path. What the seeds say: a threshold is the pass line of its unit, so a near miss just
past it loses that unit's whole share and one just inside loses nothing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from verifiers.synth import score_solution, synth_instance

T01, T09, T12, T20 = (f"R06.12.01.01-T{n}" for n in ("01", "09", "12", "20"))
WEEKLY = "obs-studio/basic/scenes/Weekly_Stream.json"


@pytest.fixture(scope="module")
def instances(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("inst")
    return {t: synth_instance(t, root / t, seed=11) for t in (T01, T09, T12, T20)}


def _solution(inst: Path, tmp: Path) -> Path:
    sol = tmp / "solution"
    shutil.copytree(inst / "oracle", sol)
    return sol


def _checks(report: dict[str, Any]) -> dict[str, float]:
    return {c["name"]: c["score"] for c in report["checks"]}


def _scene_items(coll: dict[str, Any], scene: str) -> list[dict[str, Any]]:
    """A scene's items in an OBS collection JSON (a scene is a source with id 'scene')."""
    src = next(s for s in coll["sources"] if s["name"] == scene and s["id"] == "scene")
    return src["settings"]["items"]


@pytest.mark.parametrize(("dx_px", "cam_score", "total"), [(4, 0.0, 65.0), (3, 0.0, 65.0), (2, 1.0, 100.0)])
def test_t01_cam_moved_right(instances: dict[str, Path], tmp_path: Path, dx_px: int, cam_score: float,
                             total: float) -> None:
    """Seed: Cam bounds 480x270 at (1416,786) +-2 px, 35 % for the Cam geometry. Cam 4 px (or 3 px)
    right loses the whole 35 %; 2 px is on the line and loses nothing."""
    sol = _solution(instances[T01], tmp_path)
    path = sol / WEEKLY
    coll = json.loads(path.read_text())
    cam = next(it for it in _scene_items(coll, "Live") if it["name"] == "Cam")
    assert cam["pos"] == {"x": 1416.0, "y": 786.0}
    cam["pos"]["x"] += dx_px
    path.write_text(json.dumps(coll, indent=4))
    rep = score_solution(T01, instances[T01], sol)
    checks = _checks(rep)
    assert checks["cam_geometry"] == cam_score
    assert {n: s for n, s in checks.items() if n != "cam_geometry"} == {
        "scenes_sources": 1.0, "z_order_mute": 1.0, "transition": 1.0}
    assert rep["score"] == pytest.approx(total)


@pytest.mark.parametrize(("x_px", "placement"), [(563, 0.5), (562, 1.0)])
def test_t09_alert_box_off_centre(instances: dict[str, Path], tmp_path: Path, x_px: int, placement: float) -> None:
    """Seed: widget transforms +-2 px. The Alert Box (800 wide, centre x 560) at 563 is out: its half
    of the 30 % placement share is lost; at 562 it is in."""
    sol = _solution(instances[T09], tmp_path)
    path = next((sol / "streamlabs" / "SceneCollections").glob("*.json"))
    coll = json.loads(path.read_text())
    sources = {s["id"]: s for s in coll["sources"]["items"]}
    stream = next(sc for sc in coll["scenes"]["items"] if sc["name"] == "Stream")
    alert = next(it for it in stream["sceneItems"]["items"] if sources[it["sourceId"]]["name"] == "Alert Box")
    assert alert["x"] == 560
    alert["x"] = x_px
    path.write_text(json.dumps(coll))
    checks = _checks(score_solution(T09, instances[T09], sol))
    assert checks["widget_placement"] == placement
    assert all(s == 1.0 for n, s in checks.items() if n != "widget_placement")


@pytest.mark.parametrize(("y_px", "position"), [(998.0, 0.0), (999.0, 1.0)])
def test_t12_ticker_above_the_edge(instances: dict[str, Path], tmp_path: Path, y_px: float, position: float) -> None:
    """Seed: transform y = 1000 +-1. At 998 the whole 30 % position share is lost; 999 keeps it."""
    sol = _solution(instances[T12], tmp_path)
    path = next((sol / "obs-studio" / "basic" / "scenes").glob("*.json"))
    coll = json.loads(path.read_text())
    ticker = next(it for it in _scene_items(coll, "Live") if it["name"] == "Ticker")
    ticker["pos"]["y"] = y_px
    path.write_text(json.dumps(coll))
    checks = _checks(score_solution(T12, instances[T12], sol))
    assert checks["position"] == position
    assert all(s == 1.0 for n, s in checks.items() if n != "position")


@pytest.mark.parametrize(("late_ms", "returned"), [(600, 0.5), (400, 1.0)])
def test_t20_return_late(instances: dict[str, Path], tmp_path: Path, late_ms: int, returned: float) -> None:
    """Seed: back to the previous scene 2 +-0.5 s after the window loses focus. The oracle's run
    returns after 2.1 s; moving the first return (and the unmute that follows it) 0.6 s later
    puts it at 2.7 s: that return is out, half the share; 0.4 s later (2.5 s) is on the line."""
    sol = _solution(instances[T20], tmp_path)
    events = [json.loads(line) for line in (sol / "events.jsonl").read_text().splitlines()]
    # the OBS observer's wire shape: kind "event", payload {"type": <OBS event>, "data": <its eventData>}
    def obs(e: dict, kind: str) -> dict | None:
        p = e["payload"]
        return p["data"] if e["source"] == "obs" and e["kind"] == "event" and p.get("type") == kind else None

    backs = [e for e in events if (d := obs(e, "CurrentProgramSceneChanged")) and d["sceneName"] != "Privacy"]
    first = backs[0]
    unmute = next(e for e in events if (d := obs(e, "InputMuteStateChanged")) and not d["inputMuted"]
                  and e["mono_ns"] > first["mono_ns"])
    for e in (first, unmute):
        e["mono_ns"] += late_ms * 1_000_000
    events.sort(key=lambda e: e["mono_ns"])
    (sol / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    checks = _checks(score_solution(T20, instances[T20], sol))
    assert checks["return_previous"] == returned
    assert all(s == 1.0 for n, s in checks.items() if n != "return_previous")


T02 = "R06.12.01.01-T02"
T02_MP4 = "recordings/test_rec.mp4"


@pytest.fixture(scope="module")
def t02_instance(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # seed 7: the self-test's instance, so the session instance cache pays its 1080p60 synth once
    return synth_instance(T02, tmp_path_factory.mktemp("inst") / T02, seed=7)


@pytest.mark.slow
@pytest.mark.parametrize(("audio", "expect"), [
    ("copied", {"video_settings": 1.0, "recording_exists": 1.0, "remuxed_mp4": 1.0, "three_tracks": 0.0}),
    ("silent", {"video_settings": 0.0, "recording_exists": 0.0, "remuxed_mp4": 0.0, "three_tracks": 0.0})])
def test_t02_tracks_remade_by_ffmpeg(t02_instance: Path, tmp_path: Path, audio: str, expect: dict[str, float]) -> None:
    """The oracle's MKV with its tracks remade by ffmpeg (not synth's writer), remuxed by ffmpeg:
    track 1 copied to tracks 1-3 keeps the video/recording shares but not the layout or the mix (one
    track copied is OBS's unrouted default); three silent AAC tracks are not a recording of this run
    (no track is the harness's feed), so nothing of it counts (rule 2)."""
    if audio == "copied":
        args = ["-map", "0:v", *(["-map", "0:a:0"] * 3), "-c", "copy"]
    else:
        args = ["-f", "lavfi", "-t", "10", "-i", "anullsrc=r=48000:cl=mono", "-map", "0:v",
                *(["-map", "1:a"] * 3), "-c:v", "copy", "-c:a", "aac", "-b:a", "128k"]
    checks = _checks(_t02_remade_by_ffmpeg(t02_instance, tmp_path, [], args))
    assert checks == expect, checks


def _t02_remade_by_ffmpeg(inst: Path, tmp_path: Path, input_args: list[str], args: list[str]) -> dict[str, Any]:
    """The oracle's MKV rewritten by ffmpeg (`input_args` before its -i, `args` after), remuxed by
    ffmpeg to test_rec.mp4, scored."""
    if shutil.which("ffmpeg") is None:
        pytest.skip("ffmpeg needed")
    import subprocess

    sol = _solution(inst, tmp_path)
    (mkv,) = (sol / "recordings").glob("*.mkv")
    src = tmp_path / "src.mkv"
    shutil.move(mkv, src)
    subprocess.run(["ffmpeg", "-v", "error", "-y", *input_args, "-i", str(src), *args, str(mkv)], check=True,
                   timeout=120)
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(mkv), "-map", "0", "-c", "copy", str(sol / T02_MP4)],
                   check=True, timeout=120)
    return score_solution(T02, inst, sol)


@pytest.mark.slow
@pytest.mark.parametrize(("scale", "sixty"), [(1.001, 1.0), (60 / 59.4, 0.0)])
def test_t02_frame_rate_restamped_by_ffmpeg(t02_instance: Path, tmp_path: Path, scale: float, sixty: float) -> None:
    """The oracle's recording restamped by ffmpeg (-itsscale on the video, stream copy): 59.94 fps is
    "60 fps" (docs/catalog.md, frame rates: N or N x 1000/1001 within 0.5 fps); 59.4 is not, and only
    the 60 fps item of video_settings goes (1 of its 6 items)."""
    report = _t02_remade_by_ffmpeg(t02_instance, tmp_path, ["-itsscale:v", str(scale)], ["-map", "0", "-c", "copy"])
    video = next(c for c in report["checks"] if c["name"] == "video_settings")
    assert video["evidence"]["60 fps"] == sixty, video
    assert video["score"] == pytest.approx(1.0 if sixty else 5 / 6), video
    assert all(c["score"] == 1.0 for c in report["checks"] if c["name"] != "video_settings"), report["checks"]
