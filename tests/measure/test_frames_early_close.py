"""A reader that stops after one frame must not deadlock, whatever set PyAV's log level before it.

Why this exists: `tally analyze` once called `av.logging.set_level(PANIC)`, which installs PyAV's
GIL-taking log callback for the whole process. The next test that took one frame and closed a
frame-threaded H.264 decoder hung CI until its 90-minute wall, with no traceback, because
pytest-timeout's signal cannot interrupt a C-level join. The child process here runs the same
pattern a few hundred times; a hang shows as the subprocess timeout, not as a stuck suite.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    import av
    av.logging.set_level(av.logging.PANIC)  # what another caller in the same process may do
    from verifiers.measure.frames import iter_frames
    for i in range({n}):
        frame = next(iter(iter_frames({clip!r})))
    print("closed early", {n}, "times; libav log level now", av.logging.get_level())
""")


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")
def test_taking_one_frame_after_someone_set_a_log_level_does_not_hang(tmp_path: Path) -> None:
    clip = tmp_path / "clip.mp4"
    subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                    "testsrc2=s=1280x720:r=25:d=2", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "8",
                    str(clip)], check=True)
    code = CHILD.format(root=str(ROOT), n=300, clip=str(clip))
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("closing a frame-threaded decoder after one frame deadlocked (libav log callback)")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "closed early 300 times; libav log level now None"
