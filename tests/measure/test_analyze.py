"""`tally analyze`: exactly the JSON keys issue 12 lists, right values, and exit 2 + one line on
bad input (zero-length, truncated, NaN samples, not media at all)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from monitor.cli import main

needs_ffmpeg = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")

VIDEO_KEYS = {"index", "type", "codec", "width", "height", "fps", "bitrate_bps", "keyframe_interval_s"}
AUDIO_KEYS = {"index", "type", "codec", "sample_rate_hz", "channels", "loudness"}
LOUD_KEYS = {"integrated_lufs", "lra_lu", "true_peak_dbtp", "sample_peak_dbfs", "max_momentary_lufs",
             "max_short_term_lufs"}


def _run(capfd: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run in-process; capfd (file-descriptor level) also catches C libraries writing to stderr."""
    rc = main(["analyze", *argv])
    out, err = capfd.readouterr()
    return rc, out, err


@needs_ffmpeg
def test_json_keys_and_values(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "clip.mp4"
    subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
                    "-f", "lavfi", "-i", "testsrc2=s=320x180:r=30000/1001:d=5",
                    "-f", "lavfi", "-i", "aevalsrc=0.0707946*sin(2*PI*1000*t)|0.0707946*sin(2*PI*1000*t)"
                    ":s=48000:d=5",
                    "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-keyint_min", "30",
                    "-sc_threshold", "0", "-b:v", "300k", "-c:a", "aac", "-b:a", "128k", str(path)], check=True)
    rc, out, err = _run(capfd, str(path), "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert {"format", "duration_s", "streams"} <= set(data)
    assert data["duration_s"] == pytest.approx(5.0, abs=0.1)
    video = next(s for s in data["streams"] if s["type"] == "video")
    audio = next(s for s in data["streams"] if s["type"] == "audio")
    assert VIDEO_KEYS <= set(video) and AUDIO_KEYS <= set(audio)
    assert set(audio["loudness"]) == LOUD_KEYS
    assert set(video["keyframe_interval_s"]) == {"mean", "min", "max"}
    assert (video["width"], video["height"], video["codec"]) == (320, 180, "h264")
    assert video["fps"] == pytest.approx(29.97, abs=0.01)
    assert video["keyframe_interval_s"]["mean"] == pytest.approx(30 / 29.97, abs=0.01)
    assert 150_000 < video["bitrate_bps"] < 600_000
    # a 1 kHz stereo sine at -23 dBFS peak: -23 LUFS; AAC's start transient lifts the peak < 1 dB
    loud = audio["loudness"]
    assert loud["integrated_lufs"] == pytest.approx(-23.0, abs=0.1)
    assert loud["max_short_term_lufs"] == pytest.approx(-23.0, abs=0.1)
    assert -23.1 <= loud["sample_peak_dbfs"] <= loud["true_peak_dbtp"] <= -21.5
    assert loud["lra_lu"] == pytest.approx(0.0, abs=0.5)
    assert audio["sample_rate_hz"] == 48000 and audio["channels"] == 2
    rc, out, _ = _run(capfd, str(path))
    assert rc == 0 and "LUFS" in out and "320x180" in out


def _bad_files(tmp: Path) -> dict[str, Path]:
    files = {}
    files["empty"] = tmp / "empty.wav"
    files["empty"].write_bytes(b"")
    full = tmp / "full.wav"
    sf.write(full, np.sin(np.arange(48000) / 10) * 0.3, 48000, subtype="PCM_16")
    files["truncated"] = tmp / "truncated.wav"
    files["truncated"].write_bytes(full.read_bytes()[:20000])
    x = np.zeros(4800, dtype=np.float32)
    x[100] = np.nan
    files["nan"] = tmp / "nan.wav"
    sf.write(files["nan"], x, 48000, subtype="FLOAT")
    files["not media"] = tmp / "notes.mp4"
    files["not media"].write_text("this is a shopping list, not a video\n" * 20)
    files["missing"] = tmp / "absent.mkv"
    if shutil.which("ffmpeg"):
        mp3 = tmp / "full.mp3"
        subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-i", str(full),
                        "-b:a", "128k", str(mp3)], check=True)
        files["truncated mp3"] = tmp / "cut.mp3"
        files["truncated mp3"].write_bytes(mp3.read_bytes()[: mp3.stat().st_size // 3])
    return files


@pytest.mark.parametrize("kind", ["empty", "truncated", "nan", "not media", "missing",
                                  pytest.param("truncated mp3", marks=needs_ffmpeg)])
def test_bad_input_exits_2_with_one_line(tmp_path: Path, capfd: pytest.CaptureFixture[str], kind: str) -> None:
    files = _bad_files(tmp_path)
    capfd.readouterr()  # drop whatever making the files printed
    path = files[kind]
    rc, out, err = _run(capfd, str(path), "--json")
    assert rc == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and path.name in lines[0] and "Traceback" not in err
    words = {"empty": "empty", "truncated": "truncated", "nan": "non-finite", "not media": "not a readable",
             "missing": "no such file", "truncated mp3": "truncated"}[kind]
    assert words in lines[0]
