"""Stream probe vs `ffprobe -show_packets` on files encoded here with known -g, -b:v and fps
(incl. 29.97 and B-frames): identical packet timestamps and keyframe flags; bitrate within 2 %."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from verifiers.measure.errors import MediaError
from verifiers.measure.streams import probe

pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None or shutil.which("ffprobe") is None,
                                reason="ffmpeg/ffprobe not installed")

CASES = [  # name, fps, gop, bframes, bitrate, container
    ("ntsc_bframes", "30000/1001", 30, 2, "600k", "mp4"),
    ("pal_no_b", "25", 50, 0, "400k", "mkv"),
    ("p60_flv", "60", 120, 0, "800k", "flv"),
]


def _encode(tmp: Path, name: str, fps: str, gop: int, bf: int, rate: str, ext: str) -> Path:
    out = tmp / f"{name}.{ext}"
    subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
                    "-f", "lavfi", "-i", f"testsrc2=s=320x240:r={fps}:d=6",
                    "-f", "lavfi", "-i", "sine=f=440:d=6:r=48000",
                    "-c:v", "libx264", "-preset", "ultrafast", "-g", str(gop), "-keyint_min", str(gop),
                    "-sc_threshold", "0", "-bf", str(bf), "-b:v", rate, "-maxrate", rate, "-bufsize", rate,
                    "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "96k", "-shortest", str(out)], check=True)
    return out


def _ffprobe_packets(path: Path) -> dict[int, list[dict]]:
    out = subprocess.run(["ffprobe", "-v", "error", "-show_packets", "-of", "json", str(path)],
                         capture_output=True, text=True, check=True).stdout
    by_stream: dict[int, list[dict]] = {}
    for p in json.loads(out)["packets"]:
        by_stream.setdefault(p["stream_index"], []).append(p)
    return by_stream


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_packets_match_ffprobe(tmp_path: Path, case: tuple) -> None:
    _name, fps, gop, bf, rate, ext = case
    path = _encode(tmp_path, *case)
    ours = probe(path)
    theirs = _ffprobe_packets(path)
    assert len(ours.streams) == 2
    for st in ours.streams:
        ref = theirs[st.index]
        assert st.packets == len(ref)
        assert st.pts.tolist() == [int(p["pts"]) for p in ref]
        assert st.dts.tolist() == [int(p["dts"]) for p in ref]
        assert st.keyframe.tolist() == ["K" in p["flags"] for p in ref]
        assert st.size_bytes.tolist() == [int(p["size"]) for p in ref]
    video = ours.first("video")
    assert (video.width, video.height, video.codec) == (320, 240, "h264")
    num, _, den = fps.partition("/")
    want_fps = int(num) / int(den or 1)
    assert video.fps == pytest.approx(want_fps, rel=0.005)
    assert video.base_fps == pytest.approx(want_fps, rel=1e-6)
    if bf:
        assert np.any(video.pts != video.dts), "B-frames reorder: pts and dts must differ"
    intervals = video.keyframe_intervals_s()
    assert len(intervals) >= 2
    assert np.allclose(intervals, gop / want_fps, atol=1.5 / want_fps)
    ff_bits = sum(int(p["size"]) for p in theirs[video.index]) * 8
    ff_pts = [float(p["pts_time"]) for p in theirs[video.index]]
    ff_rate = ff_bits / (max(ff_pts) - min(ff_pts) + float(theirs[video.index][0]["duration_time"]))
    assert video.bitrate_bps == pytest.approx(ff_rate, rel=0.02)
    streams = json.loads(subprocess.run(["ffprobe", "-v", "error", "-show_streams", "-of", "json", str(path)],
                                        capture_output=True, text=True, check=True).stdout)["streams"]
    if ext == "mp4":  # MP4's stream bit_rate is sizes / duration; FLV's is the encoder's target
        assert video.bitrate_bps == pytest.approx(int(streams[video.index]["bit_rate"]), rel=0.02)
    target = int(rate[:-1]) * 1000
    assert video.bitrate_bps == pytest.approx(target, rel=0.35)  # encoder's own rate control
    starts, bps = video.bitrate_windows_bps(1.0)
    assert len(starts) == 6 and np.all(bps > 0)
    audio = ours.first("audio")
    assert audio.sample_rate_hz == 48000 and audio.codec == "aac"


def test_bad_inputs_raise_media_error(tmp_path: Path) -> None:
    empty = tmp_path / "e.mp4"
    empty.write_bytes(b"")
    junk = tmp_path / "j.mp4"
    junk.write_bytes(b"\x00garbage" * 100)
    for path, words in ((empty, "empty"), (junk, "not a readable"), (tmp_path / "none.mp4", "no such")):
        with pytest.raises(MediaError, match=words):
            probe(path)
