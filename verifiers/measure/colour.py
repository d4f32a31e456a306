"""Colour: CIELAB, ΔE2000, hue, chroma, exposure difference in stops, and masks.

scikit-image does the colour science (`rgb2lab`, `deltaE_ciede2000`; 4× faster than colour-science,
agreeing to 1e-13; the Sharma 2005 pairs pass to 1e-4 in the tests). RGB means 8-bit or [0, 1]
sRGB, D65: what :mod:`verifiers.measure.frames` hands out after honouring the stream's matrix.

Speed: full-frame ΔE2000 at 1080p costs ~0.1–0.8 s a frame, so the masked functions take only the
mask's pixels, optionally every `stride`-th one; a check that subsamples must say so in its evidence
(the returned :class:`MaskedDelta` carries `pixels` and `stride`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from skimage.color import deltaE_ciede2000, rgb2lab, xyz2lab
from skimage.color.colorconv import xyz_from_rgb

from verifiers.measure.errors import MediaError


def _as_float_rgb(rgb: np.ndarray) -> np.ndarray:
    arr = np.asarray(rgb)
    if arr.shape[-1] != 3:
        raise MediaError(f"expected RGB with 3 channels, got shape {arr.shape}")
    if arr.dtype == np.uint8:
        return arr.astype(np.float32) / 255.0
    arr = arr.astype(np.float64, copy=False)
    if not np.isfinite(arr).all():
        raise MediaError("RGB contains non-finite values")
    return arr


_SRGB8_LINEAR_F32: np.ndarray | None = None


def _srgb8_linear_f32() -> np.ndarray:
    """skimage's rgb2xyz transfer step applied to the 256 codes of an 8-bit channel, float32 as
    rgb2lab computes it for uint8 input (the same numpy operations on the same values)."""
    global _SRGB8_LINEAR_F32
    if _SRGB8_LINEAR_F32 is None:
        arr = np.arange(256, dtype=np.uint8).astype(np.float32) / 255.0
        mask = arr > 0.04045
        arr[mask] = np.power((arr[mask] + 0.055) / 1.055, 2.4)
        arr[~mask] /= 12.92
        arr.setflags(write=False)
        _SRGB8_LINEAR_F32 = arr
    return _SRGB8_LINEAR_F32


def rgb_to_lab(rgb: np.ndarray) -> np.ndarray:
    """sRGB (uint8 or float in [0, 1]) → CIELAB (D65), any leading shape (..., 3).

    Speed: for uint8 the per-channel transfer curve (a power per value, a third of rgb2lab's time)
    is looked up from its 256 values; the matrix and xyz2lab are skimage's own calls, so the result
    is bit-identical to `rgb2lab` (tests/measure/test_colour.py)."""
    arr = np.asarray(rgb)
    if arr.dtype == np.uint8 and arr.ndim >= 2 and arr.shape[-1] == 3:
        lin = _srgb8_linear_f32()[arr]
        return xyz2lab(lin @ xyz_from_rgb.T.astype(np.float32))
    return rgb2lab(_as_float_rgb(rgb))


def delta_e2000(lab1: np.ndarray, lab2: np.ndarray) -> np.ndarray:
    """CIEDE2000 colour difference (kL = kC = kH = 1) between Lab arrays of the same shape."""
    return deltaE_ciede2000(np.asarray(lab1, dtype=np.float64), np.asarray(lab2, dtype=np.float64))


def chroma(lab: np.ndarray) -> np.ndarray:
    """C*ab = √(a² + b²)."""
    lab = np.asarray(lab)
    return np.hypot(lab[..., 1], lab[..., 2])


def hue_deg(lab: np.ndarray) -> np.ndarray:
    """h_ab in degrees [0, 360)."""
    lab = np.asarray(lab)
    return np.degrees(np.arctan2(lab[..., 2], lab[..., 1])) % 360.0


def hue_difference_deg(h1: np.ndarray | float, h2: np.ndarray | float) -> np.ndarray | float:
    """Signed shortest hue difference h2 − h1 in (−180, 180]."""
    d = (np.asarray(h2) - np.asarray(h1) + 180.0) % 360.0 - 180.0
    return np.where(d == -180.0, 180.0, d) if np.ndim(d) else (180.0 if d == -180.0 else float(d))


def srgb_to_linear(rgb: np.ndarray) -> np.ndarray:
    """Undo the sRGB transfer curve: values proportional to light."""
    c = _as_float_rgb(rgb)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def relative_luminance(rgb: np.ndarray) -> np.ndarray:
    """Linear-light Y (BT.709/sRGB primaries), 0..1."""
    lin = srgb_to_linear(rgb)
    return lin @ np.array([0.2126, 0.7152, 0.0722])


def exposure_gain_stops(reference: np.ndarray, graded: np.ndarray, mask: np.ndarray | None = None, *,
                        clip_low: float = 0.02, clip_high: float = 0.98) -> float:
    """Exposure change from `reference` to `graded` in stops (log2 of linear-light ratio).

    The median of per-pixel log2(Y_graded / Y_reference) over pixels that are neither near black
    nor clipped in either frame: robust to a few changed pixels and to clipping after a push.
    """
    y0 = relative_luminance(reference)
    y1 = relative_luminance(graded)
    ok = (y0 > clip_low) & (y1 > clip_low) & (y0 < clip_high) & (y1 < clip_high)
    if mask is not None:
        ok &= np.asarray(mask, dtype=bool)
    if not ok.any():
        raise MediaError("no usable pixels for exposure: all dark, clipped or masked out")
    return float(np.median(np.log2(y1[ok] / y0[ok])))


def rect_mask(height: int, width: int, x: int, y: int, w: int, h: int) -> np.ndarray:
    """Boolean (height, width) mask of a pixel rectangle (clipped to the frame)."""
    m = np.zeros((height, width), dtype=bool)
    m[max(0, y): max(0, y + h), max(0, x): max(0, x + w)] = True
    return m


def mean_lab(rgb: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Lab of the mean linear colour of the masked pixels (averaging in light, not in code values)."""
    lin = srgb_to_linear(rgb)
    px = lin[np.asarray(mask, dtype=bool)] if mask is not None else lin.reshape(-1, 3)
    if len(px) == 0:
        raise MediaError("empty mask")
    mean_lin = px.mean(axis=0)
    enc = np.where(mean_lin <= 0.0031308, mean_lin * 12.92, 1.055 * mean_lin ** (1 / 2.4) - 0.055)
    return rgb2lab(np.clip(enc, 0, 1)[None, None, :])[0, 0]


@dataclass(frozen=True)
class MaskedDelta:
    """ΔE2000 statistics over a mask, and how many pixels were actually compared."""

    mean: float
    median: float
    p95: float
    max: float
    pixels: int
    stride: int  # 1 = every mask pixel; k = every k-th (say so in evidence)


def delta_e_masked(rgb: np.ndarray, reference: np.ndarray, mask: np.ndarray | None = None, *,
                   stride: int = 1) -> MaskedDelta:
    """ΔE2000 between a frame and a reference (frame of the same size, or one RGB/Lab colour).

    `reference` of shape (3,) is taken as an RGB colour if its dtype is uint8, else as Lab.
    Only mask pixels are converted (every `stride`-th of them).
    """
    arr = np.asarray(rgb)
    sel = np.ones(arr.shape[:2], dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    idx = np.flatnonzero(sel)[:: max(1, stride)]
    if len(idx) == 0:
        raise MediaError("empty mask")
    px = arr.reshape(-1, 3)[idx]
    lab = rgb_to_lab(px[None])[0]
    ref = np.asarray(reference)
    if ref.shape == (3,):
        ref_lab = rgb_to_lab(ref[None, None])[0, 0] if ref.dtype == np.uint8 else ref.astype(np.float64)
        ref_lab = np.tile(ref_lab, (len(lab), 1))
    else:
        ref_lab = rgb_to_lab(ref.reshape(-1, 3)[idx][None])[0]
    d = delta_e2000(lab, ref_lab)
    return MaskedDelta(mean=float(d.mean()), median=float(np.median(d)), p95=float(np.percentile(d, 95)),
                       max=float(d.max()), pixels=len(idx), stride=max(1, stride))
