"""The black and held-first-frame baselines (verifiers/synthcases.py) write the same bytes as the
straightforward filter chains they replace: black skips the colour scaler (black is (16, 128, 128) in
every matrix at TV range), the held frame is converted once before it is repeated. Each is compared
with the chain written out here, on a small colourful clip with untagged colour (as the synths write)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from verifiers import synthcases as sc

pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="needs ffmpeg")
N, RATE = 12, "24/1"
BT709 = ["-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv"]


def _ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", *args], check=True)


def _md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


@pytest.fixture
def inst(tmp_path: Path) -> Path:
    """An instance folder with one untagged yuv420p H.264 + AAC clip (moving colour bars and a tone)."""
    _ffmpeg("-f", "lavfi", "-i", f"testsrc2=s=96x64:r={RATE}", "-f", "lavfi", "-i", "sine=f=440:r=48000",
            "-frames:v", str(N), "-shortest", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast",
            "-c:a", "aac", str(tmp_path / "clip.mp4"))
    return tmp_path


def test_black_is_the_scaled_black(inst: Path) -> None:
    scaled = ["-vf", sc._vf("yuv420p"), "-c:v", "libx264", "-preset", "medium", "-crf", "18", *BT709]
    _ffmpeg("-f", "lavfi", "-i", f"color=c=black:s=96x64:r={RATE}", "-frames:v", str(N), *scaled,
            str(inst / "want.mp4"))
    sc.RECIPES["black"](inst, "clip.mp4", inst / "got.mp4", 0)
    assert _md5(inst / "got.mp4") == _md5(inst / "want.mp4")
    _ffmpeg("-f", "lavfi", "-i", f"color=c=black:s=96x64:r={RATE}", "-f", "lavfi", "-i", "anullsrc=r=48000:cl=stereo",
            "-frames:v", str(N), "-shortest", *scaled, "-c:a", "aac", "-b:a", "128k", str(inst / "want_av.mp4"))
    sc.RECIPES["avblack"](inst, "clip.mp4", inst / "got_av.mp4", 0)
    assert _md5(inst / "got_av.mp4") == _md5(inst / "want_av.mp4")


def test_held_frame_converted_once_is_each_copy_converted(inst: Path) -> None:
    each = f"select=eq(n\\,0),loop=loop={N - 1}:size=1:start=0,setpts=N/({RATE})/TB," + sc._vf("yuv420p")
    enc = ["-c:v", "libx264", "-preset", "medium", "-crf", "18", *BT709]
    _ffmpeg("-i", str(inst / "clip.mp4"), "-vf", each, "-frames:v", str(N), "-r", RATE, "-an", *enc,
            str(inst / "want.mp4"))
    sc.RECIPES["still"](inst, "clip.mp4", inst / "got.mp4", 0)
    assert _md5(inst / "got.mp4") == _md5(inst / "want.mp4")
    _ffmpeg("-i", str(inst / "clip.mp4"), "-vf", each, "-frames:v", str(N), "-r", RATE, *enc, "-c:a", "aac",
            "-b:a", "128k", str(inst / "want_av.mp4"))
    sc.RECIPES["avstill"](inst, "clip.mp4", inst / "got_av.mp4", 0)
    assert _md5(inst / "got_av.mp4") == _md5(inst / "want_av.mp4")
    # and the held frame really is the converted first frame, not black or the source's last
