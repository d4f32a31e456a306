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

Gaming must not earn: T20 every subtitle on every frame in silence (was 45, fair 14); T11 black of
the right length (40) and a truncated faststart MP4 (50); T13 every caption on every frame (72.5);
T01 the source letterboxed with every caption (50.7 here, fair 15). The OCR-heavy T13/T01 cases
are marked slow like the OCR self-tests.
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


def _t20_export(inst: Path, work: Path, tmp: Path, gaming: bool = False) -> None:
    """Correct: each shot 2 s at 60 fps with an OpenCV arrow (45 px, 3 px line) on its feature and
    its label's box over the tail (one overlay blob with the arrow), drawtext subtitles at their
    cue times, the sticker from the price word, pink noise loudnorm'd to −14 LUFS. Gaming: the
    shots with every subtitle on every frame, no arrows, no sticker, digital silence."""
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
        if not gaming:
            cv2.arrowedLine(png, tuple(int(v) for v in tail), tuple(int(v) for v in tip), (255, 255, 0, 255), 3,
                            cv2.LINE_AA, tipLength=0.3)
        cv2.imwrite(str(tmp / f"arrow{k}.png"), png)
        ins += ["-i", str(tmp / f"arrow{k}.png")]
        label = ("null" if gaming else f"drawtext=fontfile={CJK_FONT}:text='{labels[f['name']]}':fontsize=14:"
                 f"fontcolor=white:x={int(tail[0]) - 14}:y={int(tail[1]) - 10}")
        graph.append(f"[{k}:v]fps=60,trim=duration=2,setpts=PTS-STARTPTS[c{k}];"
                     f"[c{k}][{len(feats) + k}:v]overlay=0:0,{label}[o{k}]")
    cues = _srt_cues((work / "input/vo_zh.srt").read_text(encoding="utf-8"))
    if gaming:
        subs = [f"drawtext=fontfile={CJK_FONT}:text='{text}':fontsize=16:fontcolor=white:borderw=2:x=(w-tw)/2:"
                f"y={0.55 * h + 24 * i:.0f}" for i, (_a, _b, text) in enumerate(cues)]
        sticker: list[str] = []
        audio = "anullsrc=r=48000:cl=stereo,atrim=duration=6[a]"
    else:
        subs = [f"drawtext=fontfile={CJK_FONT}:text='{text}':fontsize=16:fontcolor=white:borderw=2:x=(w-tw)/2:"
                f"y=0.8*h-th/2:enable='between(t,{a},{b - 0.001})'" for a, b, text in cues]
        box = f"fontsize=16:fontcolor=white:box=1:boxcolor=red:boxborderw=4:y=0.18*h:enable='gte(t,{onset_s})'"
        sticker = [f"drawtext=fontfile={CJK_FONT}:text='限时':{box}:x=0.7*w-40",
                   f"drawtext=fontfile={LATIN_FONT}:text='¥129':{box}:x=0.7*w-4"]
        # seeded (anoisesrc's default seed is random) and faded in and out: noise cut hard at 0 and 6 s made
        # the AAC encoder overshoot to -0.6..-0.7 dBTP on 2 of 8 seeds (ffmpeg's ebur128 agrees with tally),
        # over the seed's -1 dBTP: the loudness half credit that failed one CI run. Faded, 8 of 8 seeds
        # measured -14.4..-14.6 LUFS and -1.7..-1.9 dBTP, as a mastering engineer's short clip would.
        audio = ("anoisesrc=d=6:c=pink:r=48000:a=0.1:seed=1,lowpass=4000,loudnorm=I=-14:TP=-2:LRA=7,"
                 "aresample=48000,afade=t=in:d=0.05,afade=t=out:st=5.9:d=0.1[a]")
    graph.append("".join(f"[o{k}]" for k in range(len(feats))) + f"concat=n={len(feats)}:v=1:a=0,"
                 + ",".join(subs + sticker) + "[v]")
    graph.append(audio)
    out = work / "out/kettle_douyin.mp4"
    out.parent.mkdir(parents=True, exist_ok=True)
    _ffmpeg(*ins, "-filter_complex", ";".join(graph), "-map", "[v]", "-map", "[a]", "-t", "6", "-r", "60",
            *H264_AAC, str(out))


@pytest.mark.skipif(not CJK_FONT.exists(), reason="no CJK font for the subtitles")
def test_t20_export_with_labels_over_the_arrow_tails_keeps_every_point(tmp_path: Path) -> None:
    task = "R06.04.01.04-T20"
    inst = synth_instance(task, tmp_path / "inst", seed=0)
    work = _work(inst, tmp_path)
    _t20_export(inst, work, tmp_path)
    got = _score(task, work, inst)
    assert got["callout_arrows"][0] == 1.0, got
    assert got["score"] >= 95, got


@pytest.mark.skipif(not CJK_FONT.exists(), reason="no CJK font for the subtitles")
def test_t20_every_subtitle_on_every_frame_in_silence_earns_nothing(tmp_path: Path) -> None:
    """Fair: 0. The subtitle share (CER 0 from one box of the wall) and the true-peak half of
    silence once added 31 to the format's 0.4 x 35 = 14; the format part now pays only with the
    subtitles right (rule 3)."""
    task = "R06.04.01.04-T20"
    inst = synth_instance(task, tmp_path / "inst", seed=0)
    work = _work(inst, tmp_path)
    _t20_export(inst, work, tmp_path, gaming=True)
    got = _score(task, work, inst)
    assert got["score"] <= 1e-6, got


def test_t11_black_and_truncated_exports_earn_nothing(tmp_path: Path) -> None:
    """Black frames of the right length and size (OpenCV scores flat templates high) and the oracle
    cut in half behind an index written up front (faststart): both ≈ 0 (were 40 and 50)."""
    task = "R06.04.01.04-T11"
    inst = synth_instance(task, tmp_path / "inst", seed=0)
    oracle = inst / "oracle/out/kickflip_ramp.mp4"
    black = _work(inst, tmp_path / "black")
    (black / "out").mkdir(parents=True, exist_ok=True)
    _ffmpeg("-f", "lavfi", "-i", "color=c=black:s=180x320:r=30", "-t", "7", "-c:v", "libx264", "-pix_fmt", "yuv420p",
            str(black / "out/kickflip_ramp.mp4"))
    cut = _work(inst, tmp_path / "cut")
    (cut / "out").mkdir(parents=True, exist_ok=True)
    _ffmpeg("-i", str(oracle), "-c", "copy", "-movflags", "+faststart", str(tmp_path / "fs.mp4"))
    data = (tmp_path / "fs.mp4").read_bytes()
    (cut / "out/kickflip_ramp.mp4").write_bytes(data[: len(data) // 2])
    for work in (black, cut):
        got = _score(task, work, inst)
        assert got["score"] <= 5, got


@pytest.mark.slow
def test_t13_every_caption_on_every_frame_earns_nothing(tmp_path: Path) -> None:
    """Each version burns its whole script (drawtext, one line per cue) on every frame: was 72.5
    (the concatenated OCR matched the script; recall forgave the rest); text is now judged cue by
    cue, and glyphs/safe area only describe captions whose text is right."""
    task = "R06.04.01.04-T13"
    inst = synth_instance(task, tmp_path / "inst", seed=0)
    work = _work(inst, tmp_path)
    fonts = {"en": LATIN_FONT, "es": LATIN_FONT, "ja": CJK_FONT}
    srts = {"en": inst / "gt/captions_en.srt", "es": work / "input/captions_es.srt", "ja": work / "input/captions_ja.srt"}
    (work / "out").mkdir(parents=True, exist_ok=True)
    for lang, srt in srts.items():
        lines = [text for _a, _b, text in _srt_cues(srt.read_text(encoding="utf-8"))]
        dt = ",".join(f"drawtext=fontfile={fonts[lang]}:text='{t}':fontsize=24:fontcolor=white:borderw=2:"
                      f"x=(w-tw)/2:y={600 + 34 * i}" for i, t in enumerate(lines))
        _ffmpeg("-i", str(work / "fixtures/tips_en/media/tips.mp4"), "-vf", dt, "-an", *H264_AAC[:-4],
                str(work / f"out/tips_{lang}.mp4"))
    got = _score(task, work, inst)
    assert got["score"] <= 5, got


@pytest.mark.slow
def test_t01_letterboxed_source_with_every_caption_earns_nothing(tmp_path: Path) -> None:
    """The source's first 30 s letterboxed into the 9:16 frame, all six captions burned on every
    frame: 0; was 50.7 (a chance strip match kept the hands 'in frame', and the captions read as
    the whole transcript), then 15 (the format, which now pays only with the source playing as
    strips: rule 3)."""
    task = "R06.04.01.04-T01"
    inst = synth_instance(task, tmp_path / "inst", seed=0)
    work = _work(inst, tmp_path)
    lines = [ln for ln in (work / "input/transcript.txt").read_text().splitlines() if ln.strip()]
    dt = "".join(f",drawtext=fontfile={LATIN_FONT}:text='{c}':fontsize=12:fontcolor=white:borderw=1:"
                 f"x=(w-tw)/2:y={200 + 16 * i}" for i, c in enumerate(lines))
    (work / "out").mkdir(parents=True, exist_ok=True)
    _ffmpeg("-i", str(work / "fixtures/cooking_16x9.mp4"), "-t", "30", "-vf", "scale=180:102,pad=180:320:0:109" + dt,
            *H264_AAC[:-4], str(work / "out/cooking_short.mp4"))
    got = _score(task, work, inst)
    assert got["score"] <= 1e-6, got
