"""Hard cuts at known frames of an H.264 edit of moving shots: found exactly, none elsewhere."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from verifiers.measure.scenes import detect_cuts

pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")

# (lavfi source, frames) at 25 fps; every shot moves, so motion must not read as a cut
SHOTS = [("testsrc2=s=320x180:r=25", 40), ("mandelbrot=s=320x180:r=25", 35),
         ("smptehdbars=s=320x180:r=25,hue=H=t*2", 30), ("life=s=320x180:r=25:mold=10:ratio=0.5", 45),
         ("testsrc=s=320x180:r=25", 30)]


def test_cuts_are_exact(tmp_path: Path) -> None:
    args: list[str] = []
    for src, _ in SHOTS:
        args += ["-f", "lavfi", "-i", src]
    chain = "".join(f"[{i}:v]trim=end_frame={n},setpts=PTS-STARTPTS,format=yuv420p[v{i}];"
                    for i, (_, n) in enumerate(SHOTS))
    chain += "".join(f"[v{i}]" for i in range(len(SHOTS))) + f"concat=n={len(SHOTS)}:v=1:a=0[out]"
    out = tmp_path / "edit.mp4"
    subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", *args,
                    "-filter_complex", chain, "-map", "[out]", "-c:v", "libx264", "-preset", "ultrafast",
                    "-crf", "23", str(out)], check=True)
    want, acc = [], 0
    for _, n in SHOTS[:-1]:
        acc += n
        want.append(acc)
    cuts = detect_cuts(out)
    assert [c.frame for c in cuts] == want
    assert [round(c.t_s * 25) for c in cuts] == want
