"""_shared/luma: Y' re-derived from the decoded R'G'B' is the coded (full-resolution) Y', and a mask
made on it ends where the picture edge is, where an R'G'B' mask grows by the 4:2:0 chroma bleed."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np

from verifiers.measure.frames import iter_frames
from verifiers.synthkit.shortform_video import write_video
from verifiers.tasks.shortform._shared.luma import frame_luma, shrink_by_chroma_bleed


def _box(mask: np.ndarray) -> tuple[int, int, int, int]:
    ys, xs = np.nonzero(mask)
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def test_luma_is_the_coded_luma_and_its_mask_has_the_true_edge(tmp_path: Path) -> None:
    bg = np.full((64, 96, 3), (20, 90, 20), np.uint8)  # dark green: Y' 61 (BT.601) / 70 (BT.709)
    f = bg.copy()
    f[16:40, 30:70] = (240, 60, 240)  # magenta: Y' 134 / 111, and far off in chroma
    path = write_video(tmp_path / "x.mp4", [f] * 3 + [bg] * 3)
    decoded = list(iter_frames(path))
    fr, ref = decoded[0], decoded[-1]  # both through the codec, as a PIP over a decoded trailer
    with av.open(str(path)) as c:
        y_codes = next(c.decode(video=0)).to_ndarray()[:64].astype(np.float32)  # yuv420p: Y' rows first
    y_full = (y_codes - 16) * 255 / 219  # limited-range Y' on the 0..255 scale
    unclipped = ((fr.rgb > 0) & (fr.rgb < 255)).all(axis=2)
    err = np.abs(frame_luma(fr) - y_full)[unclipped]
    assert err.max() <= 1.0, err.max()  # R'G'B' rounded to uint8: <= 0.5 code per channel

    dy = np.abs(frame_luma(fr) - frame_luma(ref))
    d = np.abs(fr.rgb.astype(np.int16) - ref.rgb.astype(np.int16)).max(axis=2) > 40
    assert _box(dy > 12) == (30, 16, 70, 40)
    assert _box(d) != (30, 16, 70, 40)  # chroma bleed carries the patch's colour past its edge
    x0, y0, x1, y1 = _box(shrink_by_chroma_bleed(d))
    assert 30 <= x0 and 16 <= y0 and x1 <= 70 and y1 <= 40
