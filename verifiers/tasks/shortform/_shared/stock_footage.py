"""Which stock shot (and moment) an explainer frame shows, whatever way the clip sits on the canvas.

Stock footage is mostly landscape; on a 9:16 canvas an editor either fills the frame (centre crop,
CapCut's "fill") or fits it (scaled to the width, bars above and below), and a portrait clip simply
fills it. Each stock frame is indexed in each placement its aspect allows, drawn at the export's
aspect, so a whole-frame fingerprint (verifiers.measure.fingerprint) finds it. A panned or zoomed
crop other than the centre is not modelled.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from verifiers.base import AgentOutputError, GTError
from verifiers.measure.errors import MediaError
from verifiers.measure.fingerprint import FrameIndex, FrameMatch, apply_crop
from verifiers.measure.frames import iter_frames
from verifiers.tasks.shortform._shared.clips import MATCH_WIDTH_PX, MIN_NCC, Labelled, identify_frame

DECODE_WIDTH_PX = 480  # stock is decoded this wide: enough to crop a 9:16 strip from a 16:9 frame
TOP_SHARE = 0.55  # the top region of a frame matched on its own (captions sit lower in 9:16 explainers)
SAME_ASPECT = 0.03  # relative aspect difference below which a clip just fills the canvas


def placements(rgb: np.ndarray, width_px: int, height_px: int) -> dict[str, np.ndarray]:
    """The stock frame as it would look on a width x height canvas: "full", or "fill" and "fit"."""
    h, w = rgb.shape[:2]
    src, dst = w / h, width_px / height_px
    size = (width_px, height_px)
    if abs(src - dst) / dst <= SAME_ASPECT:
        return {"full": cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)}
    if src > dst:  # wider than the canvas: crop the sides / bars above and below
        cw = round(h * dst)
        x0 = (w - cw) // 2
        fill = rgb[:, x0:x0 + cw]
        fh = max(1, round(width_px / src))
        fit = np.zeros((height_px, width_px, 3), np.uint8)
        y0 = (height_px - fh) // 2
        fit[y0:y0 + fh] = cv2.resize(rgb, (width_px, fh), interpolation=cv2.INTER_AREA)
    else:  # taller: crop top and bottom / bars at the sides
        ch = round(w / dst)
        y0 = (h - ch) // 2
        fill = rgb[y0:y0 + ch]
        fw = max(1, round(height_px * src))
        fit = np.zeros((height_px, width_px, 3), np.uint8)
        x0 = (width_px - fw) // 2
        fit[:, x0:x0 + fw] = cv2.resize(rgb, (fw, height_px), interpolation=cv2.INTER_AREA)
    return {"fill": cv2.resize(fill, size, interpolation=cv2.INTER_AREA), "fit": fit}


class StockMatcher:
    """Fingerprint indexes over the stock clips in every placement; `labels[i]` is entry i's clip
    stem and `placement[i]` how it sits on the canvas.

    Two indexes share those entries: the whole frame, and its top TOP_SHARE (captions of a vertical
    explainer sit lower down, and over a plain shot they can outweigh the picture in a whole-frame
    thumbnail). A frame is labelled by whichever region matches better.
    """

    def __init__(self, sources: dict[str, Path], canvas_w_px: int, canvas_h_px: int) -> None:
        th = max(2, round(MATCH_WIDTH_PX * canvas_h_px / canvas_w_px))
        frames, times, self.labels, self.placement = [], [], [], []
        for label, path in sources.items():
            try:
                for fr in iter_frames(path, width=DECODE_WIDTH_PX):
                    for name, img in placements(fr.rgb, MATCH_WIDTH_PX, th).items():
                        frames.append(img)
                        times.append(fr.t_s)
                        self.labels.append(label)
                        self.placement.append(name)
            except MediaError as exc:
                raise GTError(f"stock clip {label}: {exc}") from None
        if not frames:
            raise GTError("no stock clips to match against")
        steps = np.diff(np.unique(times))
        #: the stock clips' frame duration (their frames' commonest time step), for `playing_flags`
        self.frame_s = float(np.median(steps)) if len(steps) else None
        self.regions: dict[str, tuple[int, int, int, int] | None] = {
            "full": None, "top": (0, 0, MATCH_WIDTH_PX, max(2, round(th * TOP_SHARE)))}
        self.index = {r: FrameIndex.from_frames(frames, times, crop=c) for r, c in self.regions.items()}

    def crop(self, rgb: np.ndarray, region: str) -> np.ndarray:
        return apply_crop(rgb, self.regions[region])

    def identify(self, rgb: np.ndarray) -> tuple[FrameMatch, str]:
        """The entry a (160-px) export frame shows and the region that matched it best, each region
        through `clips.identify_frame` (a sticker or caption over the shot is scored on what it
        leaves visible, as for every other short-form source)."""
        return max(((identify_frame(self.crop(rgb, r), ix), r) for r, ix in self.index.items()),
                   key=lambda mr: mr[0].ncc)

    def label_video(self, path: Path) -> list[Labelled]:
        """Every frame of the export: the stock clip it shows (None below MIN_NCC), kept at 160 px.
        `src_index` is the entry; `region_of[i]` says which region matched frame i."""
        out = []
        self.region_of: list[str] = []
        try:
            for fr in iter_frames(path, width=MATCH_WIDTH_PX):
                m, region = self.identify(fr.rgb)
                label = self.labels[m.index] if m.ncc >= MIN_NCC else None
                out.append(Labelled(fr.t_s, label, m.t_s, m.ncc, m.index, fr.rgb))
                self.region_of.append(region)
        except MediaError as exc:
            raise AgentOutputError(str(exc)) from None
        return out

    def entries(self, label: str, placement: str) -> list[int]:
        return [i for i, (lab, pl) in enumerate(zip(self.labels, self.placement, strict=True))
                if lab == label and pl == placement]
