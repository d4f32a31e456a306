"""Frame matching: output frames (9:16 crop, rescaled, re-encoded) are traced to their exact source
frames, after the crop is estimated from the pixels."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from verifiers.measure.fingerprint import FrameIndex, estimate_crop, hamming, match_frame, phash
from verifiers.measure.frames import iter_frames

pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")

PICKS = [7, 33, 58, 90]
CROP = (420, 0, 405, 720)  # x, y, w, h in the 1280×720 source


def _ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", *args], check=True)


def test_output_frames_traced_to_source(tmp_path: Path) -> None:
    src = tmp_path / "source.mp4"
    _ffmpeg("-f", "lavfi", "-i", "testsrc2=s=1280x720:r=25:d=4", "-c:v", "libx264", "-preset", "ultrafast",
            "-crf", "18", "-pix_fmt", "yuv420p", str(src))
    out = tmp_path / "vertical.mp4"
    select = "+".join(f"eq(n\\,{n})" for n in PICKS)
    x, y, w, h = CROP
    _ffmpeg("-i", str(src), "-vf", f"select='{select}',crop={w}:{h}:{x}:{y},scale=540:960", "-fps_mode",
            "passthrough", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "28", str(out))
    outs = [f.rgb for f in iter_frames(out)]
    assert len(outs) == len(PICKS)
    source = list(iter_frames(src))
    est = estimate_crop(outs[0], source[PICKS[0]].rgb)
    assert est.x == pytest.approx(x, abs=4) and est.y == pytest.approx(y, abs=4)
    assert est.w == pytest.approx(w, abs=6) and est.h == pytest.approx(h, abs=6)
    assert est.scale == pytest.approx(540 / 405, rel=0.01) and abs(est.rotation_deg) < 0.5
    index = FrameIndex.from_frames([f.rgb for f in source], [f.t_s for f in source],
                                   crop=(est.x, est.y, est.w, est.h))
    for rgb, want in zip(outs, PICKS, strict=True):
        m = match_frame(rgb, index)
        assert m.index == want, (m, want)
        assert m.t_s == pytest.approx(want / 25, abs=1e-6)
        assert m.ncc > 0.9 and m.margin > 0.0
    # without the crop the vertical frame's hash is no closer to its own source frame than to others
    full = phash(source[PICKS[1]].rgb)
    assert hamming(phash(outs[1]), full) > 10


def test_phash_is_stable_under_recompression_and_distinct_across_content() -> None:
    rng = np.random.default_rng(0)
    a = (rng.random((72, 128, 3)) * 255).astype(np.uint8)
    a = np.repeat(np.repeat(a, 10, axis=0), 10, axis=1)  # blocky image with structure
    noisy = np.clip(a.astype(int) + rng.integers(-6, 7, a.shape), 0, 255).astype(np.uint8)
    b = (rng.random((72, 128, 3)) * 255).astype(np.uint8).repeat(10, axis=0).repeat(10, axis=1)
    assert hamming(phash(a), phash(noisy)) <= 4
    assert hamming(phash(a), phash(b)) >= 16
