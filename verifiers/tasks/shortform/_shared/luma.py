"""Luma (Y') of decoded frames, for short-form measurements of features too thin for chroma.

Why: an H.264/HEVC export is 4:2:0. Its chroma has one sample per 2x2 pixels and the decoder
(verifiers/measure/ycbcr.py) interpolates linearly between the sited samples, so a colour edge is
smeared over about one pixel on each side (CHROMA_BLEED_PX). Any mask made from an R'G'B' channel
difference therefore grows by that pixel, and 2-px features (PIP corners, key edge bands) read
their neighbours' colour. Y' is coded at full resolution: re-deriving it from the decoded R'G'B'
with the stream's own matrix gives back the decoded Y' (to the uint8 rounding), whose only error
is codec noise. Issue 21: regions too thin for chroma are judged on luma, guard bands scale with
the chroma subsampling.
"""

from __future__ import annotations

import cv2
import numpy as np

from verifiers.measure.frames import Frame
from verifiers.measure.ycbcr import MATRIX_K

#: how far (px) linear 4:2:0 / 4:2:2 chroma upsampling carries a colour past an edge: the output
#: pixel next to an edge is interpolated half-way from the chroma sample across it
CHROMA_BLEED_PX = 1


def luma_codes(rgb: np.ndarray, matrix: str = "bt709") -> np.ndarray:
    """(H, W) float32 Y' on the 0…255 scale from (H, W, 3) R'G'B', with the stream's matrix."""
    kr, kb = MATRIX_K.get(matrix, MATRIX_K["bt709"])
    w = np.array([kr, 1.0 - kr - kb, kb], np.float32)
    return rgb.astype(np.float32) @ w


def frame_luma(fr: Frame) -> np.ndarray:
    """Y' of a decoded frame (see luma_codes), using the matrix its tags chose."""
    return luma_codes(fr.rgb, fr.tags.matrix)


def shrink_by_chroma_bleed(mask: np.ndarray) -> np.ndarray:
    """A mask made from colour differences, eroded by CHROMA_BLEED_PX: what remains is colour the
    chroma planes really carry there, not colour interpolated from across an edge."""
    k = 2 * CHROMA_BLEED_PX + 1
    return cv2.erode(mask.astype(np.uint8), np.ones((k, k), np.uint8)) > 0
