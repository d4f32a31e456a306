"""Does an export play its source in step? (issue 21, rule 2: content identity before quality)

A task that overlays something on a given clip (T14's label over the spinning shoe) is judged on
frames of the export; a still frame of a correct composite repeated for the whole length reads the
same overlay in every sample and, judged frame by frame, earns the overlay's shares without the
clip ever playing. Here each sampled export frame is matched against every frame of the source
(thumbnails, mean absolute difference over the whole picture: a small overlay adds the same error
to every candidate, the moving subject decides which frame is best); the sample *plays* when the
best source frame is the one at the sample's own time.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from verifiers.measure.frames import iter_frames

THUMB_W_PX = 96  # thumbnail width: keeps a moving subject of a few % of the frame several px wide
#: how far (s) the best source frame may sit from the sample's time: two frames at 24 fps covers
#: the rounding of a sample time on another frame grid (29.97 fps exports) plus one frame
PLAY_TOLERANCE_S = 2 / 24


class SourceTimeline:
    """Thumbnails of every source frame with their times."""

    def __init__(self, source: Path) -> None:
        self.times_s: list[float] = []
        thumbs = []
        for fr in iter_frames(source, width=THUMB_W_PX):
            self.times_s.append(fr.t_s)
            thumbs.append(fr.rgb.astype(np.float32))
        self.thumbs = np.stack(thumbs)
        self.size = (self.thumbs.shape[2], self.thumbs.shape[1])

    def best_time_s(self, rgb: np.ndarray) -> float:
        """Time of the source frame the export frame `rgb` shows best (any size: resized to the
        source's thumbnail)."""
        t = cv2.resize(rgb, self.size, interpolation=cv2.INTER_AREA).astype(np.float32)
        err = np.abs(self.thumbs - t[None]).mean(axis=(1, 2, 3))
        return self.times_s[int(np.argmin(err))]

    def plays(self, rgb: np.ndarray, t_s: float) -> bool:
        """The export frame at `t_s` shows the source frame of that time (± PLAY_TOLERANCE_S)."""
        return abs(self.best_time_s(rgb) - t_s) <= PLAY_TOLERANCE_S + 1e-6
