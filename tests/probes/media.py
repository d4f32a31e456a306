"""Test media made with ffmpeg's lavfi sources (generated here, never fetched)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

FFMPEG = shutil.which("ffmpeg") or "ffmpeg"

#: Where the clapper flashes are (s, source time) and how late the beep follows each one.
FLASHES_S = (2.0, 4.0, 6.0)
DELAY_S = 0.120
TONES = {0: 440.0, 1: 1000.0}  # channel → Hz, both at −20 dBFS
BEEP_HZ = 3000.0


def sync_expr(seconds: float) -> tuple[str, str]:
    """lavfi video and audio graphs: black with one white frame per flash; tones + beep per flash."""
    enable = "+".join(f"between(t,{t:.3f},{t + 0.02:.3f})" for t in FLASHES_S)
    video = (f"color=c=black:s=320x240:r=30:d={seconds},"
             f"drawbox=c=white:t=fill:enable='{enable}'")
    gate = "+".join(f"between(t,{t + DELAY_S:.3f},{t + DELAY_S + 0.05:.3f})" for t in FLASHES_S)
    beep = f"0.5*sin(2*PI*{BEEP_HZ:g}*t)*({gate})"
    chans = "|".join(f"0.1*sin(2*PI*{TONES[c]:g}*t)+{beep}" for c in (0, 1))
    audio = f"aevalsrc=exprs='{chans}':s=48000:d={seconds}"
    return video, audio


def make_sync_flv(path: Path, seconds: float = 7.0, *, size: str | None = None, rate: int = 30) -> Path:
    """H.264 + AAC FLV of the clapper programme (what OBS or ffmpeg would publish)."""
    video, audio = sync_expr(seconds)
    if size is not None:
        video = video.replace("s=320x240", f"s={size}").replace("r=30", f"r={rate}")
    cmd = [FFMPEG, "-v", "error", "-y", "-f", "lavfi", "-i", video, "-f", "lavfi", "-i", audio,
           "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", str(rate), "-pix_fmt", "yuv420p",
           "-c:a", "aac", "-b:a", "160k", "-f", "flv", str(path)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    return path
