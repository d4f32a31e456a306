"""Issue 21 cases of the short-form family, rebuilt here with independent tools (ffmpeg filters,
OpenCV drawing, numpy) from a synthetic instance's inputs and GT, never with synth's writers.

Correct work must keep its points:
- T17: a 50/50 duet made by ffmpeg vstack (student trimmed to the clap), H.264 + AAC, at the
  catalog's own 1080x1920 (a real phone's preset even on a miniature instance): 100.
- T04: a slideshow by ffmpeg zoompan without x/y (its default zoom anchors top-left), 8 % per photo,
  concat, the song's first 24 s as AAC: 100 (the centred-only zoom search saw 0/12).
- T20: a Douyin export made by ffmpeg (drawtext subtitles and sticker, OpenCV arrows with their
  label over the tail, loudnorm'd pink noise at −14 LUFS): 100 (the label end was taken for the
  head: 75; a 45-px cv2 arrow was too 'stubby' by its head's width: 2/3).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest

from verifiers.scoring import score_task
from verifiers.synth import synth_instance

pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")
CJK_FONT = Path("/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf")
LATIN_FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
H264_AAC = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-pix_fmt", "yuv420p", "-colorspace", "bt709",
            "-color_primaries", "bt709", "-color_trc", "bt709", "-c:a", "aac", "-b:a", "128k"]


def _ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True)


def _work(inst: Path, tmp: Path) -> Path:
    work = tmp / "work"
    shutil.copytree(inst / "workdir", work)
    return work


def _score(task: str, work: Path, inst: Path) -> dict:
    rep = score_task(task, work, inst / "gt").to_dict()
    return {"score": rep["score"], **{c["name"]: (c["score"], c.get("message")) for c in rep["checks"]}}


def test_t17_vstack_duet_at_catalog_size_keeps_every_point(tmp_path: Path) -> None:
    task = "R06.04.01.04-T17"
    inst = synth_instance(task, tmp_path / "inst", seed=0)
    claps = json.loads((inst / "gt/claps.json").read_text())
    work = _work(inst, tmp_path)
    lead_s = claps["student_clap_s"] - claps["teacher_clap_s"]
    out = work / "device/Photos/duet.mp4"
    out.parent.mkdir(parents=True, exist_ok=True)
    _ffmpeg("-i", str(work / "fixtures/teacher.mp4"), "-ss", f"{lead_s:.3f}", "-i", str(work / "fixtures/student.mp4"),
            "-filter_complex", "[0:v]scale=1080:960[t];[1:v]scale=1080:960[s];[t][s]vstack=inputs=2[v];"
            "[0:a][1:a]amix=inputs=2:duration=shortest[a]", "-map", "[v]", "-map", "[a]", "-shortest",
            *H264_AAC, str(out))
    got = _score(task, work, inst)
    assert got["score"] >= 95, got


def test_t04_top_left_zoompan_slideshow_keeps_every_point(tmp_path: Path) -> None:
    task = "R06.04.01.04-T04"
    inst = synth_instance(task, tmp_path / "inst", seed=0)
    work = _work(inst, tmp_path)
    photos = sorted((work / "fixtures/trip_photos").glob("*.jpg"))
    args: list[str] = []
    for p in photos:
        args += ["-loop", "1", "-framerate", "24", "-t", "2", "-i", str(p)]
    # zoompan without x/y zooms towards the top-left corner: 1.00 -> 1.08 over each photo's 48 frames
    zp = "zoompan=z='1+0.08*on/47':d=1:s=180x320:fps=24"
    graph = ";".join(f"[{k}:v]{zp},trim=end_frame=48,setsar=1[v{k}]" for k in range(len(photos)))
    graph += ";" + "".join(f"[v{k}]" for k in range(len(photos))) + f"concat=n={len(photos)}:v=1:a=0[v]"
    out = work / "out/trip_slideshow.mp4"
    out.parent.mkdir(parents=True, exist_ok=True)
    _ffmpeg(*args, "-i", str(work / "fixtures/song.mp3"), "-filter_complex", graph, "-map", "[v]",
            "-map", f"{len(photos)}:a", "-t", "24", *H264_AAC, str(out))
    got = _score(task, work, inst)
    assert got["zoom"][0] == 1.0, got
    assert got["score"] >= 95, got


def _srt_cues(text: str) -> list[tuple[float, float, str]]:
    def sec(h: str, m: str, s: str, ms: str) -> float:
        return int(h) * 3600 + int(m) * 60 + int(s) + int(ms) / 1000

    return [(sec(*m[0:4]), sec(*m[4:8]), m[8]) for m in
            re.findall(r"(\d+):(\d+):(\d+),(\d+) --> (\d+):(\d+):(\d+),(\d+)\n(.+)", text)]


@pytest.mark.skipif(not CJK_FONT.exists(), reason="no CJK font for the subtitles")
def test_t20_export_with_labels_over_the_arrow_tails_keeps_every_point(tmp_path: Path) -> None:
    task = "R06.04.01.04-T20"
    inst = synth_instance(task, tmp_path / "inst", seed=0)
    work = _work(inst, tmp_path)
    feats = json.loads((inst / "gt/features.json").read_text())["features"]
    onset_s = json.loads((inst / "gt/price_word.json").read_text())["onset_s"]
    w, h = 270, 480  # the miniature's export size (gt/render.json scale 1/4)
    labels = {"spout": "弯嘴", "handle": "防烫手柄", "base": "底座"}
    ins, graph = [], []
    for f in feats:
        ins += ["-stream_loop", "-1", "-i", str(work / f"fixtures/kettle_clips/{f['clip']}.mp4")]
    for k, f in enumerate(feats):
        tip = np.array(f["point_px"], float)
        d = np.array([1.0, -1.2]) if tip[0] < w / 2 else np.array([-1.0, -1.2])
        tail = tip + 45 * d / np.linalg.norm(d)
        png = np.zeros((h, w, 4), np.uint8)
        cv2.arrowedLine(png, tuple(int(v) for v in tail), tuple(int(v) for v in tip), (255, 255, 0, 255), 3,
                        cv2.LINE_AA, tipLength=0.3)
        cv2.imwrite(str(tmp_path / f"arrow{k}.png"), png)
        ins += ["-i", str(tmp_path / f"arrow{k}.png")]
        # the label's box overlaps the tail's end: one overlay blob with the arrow
        label = (f"drawtext=fontfile={CJK_FONT}:text='{labels[f['name']]}':fontsize=14:fontcolor=white:"
                 f"x={int(tail[0]) - 14}:y={int(tail[1]) - 10}")
        graph.append(f"[{k}:v]fps=60,trim=duration=2,setpts=PTS-STARTPTS[c{k}];"
                     f"[c{k}][{len(feats) + k}:v]overlay=0:0,{label}[o{k}]")
    subs = [f"drawtext=fontfile={CJK_FONT}:text='{text}':fontsize=16:fontcolor=white:borderw=2:x=(w-tw)/2:"
            f"y=0.8*h-th/2:enable='between(t,{a},{b - 0.001})'"
            for a, b, text in _srt_cues((work / "input/vo_zh.srt").read_text(encoding="utf-8"))]
    box = f"fontsize=16:fontcolor=white:box=1:boxcolor=red:boxborderw=4:y=0.18*h:enable='gte(t,{onset_s})'"
    sticker = [f"drawtext=fontfile={CJK_FONT}:text='限时':{box}:x=0.7*w-40",
               f"drawtext=fontfile={LATIN_FONT}:text='¥129':{box}:x=0.7*w-4"]
    graph.append("".join(f"[o{k}]" for k in range(len(feats))) + f"concat=n={len(feats)}:v=1:a=0,"
                 + ",".join(subs + sticker) + "[v]")
    graph.append("anoisesrc=d=6:c=pink:r=48000:a=0.1,lowpass=4000,loudnorm=I=-14:TP=-2:LRA=7,aresample=48000[a]")
    out = work / "out/kettle_douyin.mp4"
    out.parent.mkdir(parents=True, exist_ok=True)
    _ffmpeg(*ins, "-filter_complex", ";".join(graph), "-map", "[v]", "-map", "[a]", "-t", "6", "-r", "60",
            *H264_AAC, str(out))
    got = _score(task, work, inst)
    assert got["callout_arrows"][0] == 1.0, got
    assert got["score"] >= 95, got
