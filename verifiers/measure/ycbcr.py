"""Y'CbCr → R'G'B' in numpy, from the decoded planes, with the stream's matrix, range and siting.

Why not swscale (PyAV's `to_ndarray("rgb24")`): without its accurate-rounding flags it reads
coloured pixels 1–3 codes dark, and 10-bit input dark everywhere (a pixel-exact 10-bit grey 128
came back as 126; a wall colour moved ΔE2000 1.3 with no codec loss). With those flags PyAV 18
dropped the range expansion. Here every step is the textbook formula, in float32 (OpenCV's SIMD resampling and per-pixel affine transform, for speed):

- planes: 8–16-bit planar 4:2:0 / 4:2:2 / 4:4:4 (`yuv*p`, `yuvj*p`, `*p10le` …) are read as they
  are; any other Y'CbCr layout (nv12, yuyv422, …) is first repacked by swscale to 16-bit 4:4:4
  (a layout change, no matrix), then read the same way;
- range: limited ("tv": Y' 16–235, C 16–240 scaled by 2^(bits−8)) or full ("pc": 0–255 scaled by
  2^(bits−8), FFmpeg's convention: white is 1020 at 10 bits, as FFmpeg writes it; BT.2100's 0–1023
  would read such a file 0.75 code bright);
- chroma siting: 4:2:0 and 4:2:2 chroma is co-sited with the even luma columns (MPEG-2/H.264/ProRes,
  "left"), and half-way between the two luma rows it covers for 4:2:0; JPEG-style full-range
  (`yuvj*`) streams site it in the centre horizontally too. Upsampling is linear between the
  sited samples (edges repeat), which is what ffmpeg's accurate swscale path does to ≤ 0.5 code;
- matrix: Kr/Kb of BT.601, BT.709, BT.2020 (non-constant luminance), SMPTE 240M, FCC.

The result is R'G'B' on the 0…255 scale, float32, clipped, for callers to round to uint8 or keep.
"""

from __future__ import annotations

import numpy as np

from verifiers.measure.errors import MediaError

#: (Kr, Kb) per matrix name; Kg = 1 − Kr − Kb
MATRIX_K: dict[str, tuple[float, float]] = {
    "bt601": (0.299, 0.114),
    "bt709": (0.2126, 0.0722),
    "bt2020": (0.2627, 0.0593),
    "smpte240m": (0.212, 0.087),
    "fcc": (0.30, 0.11),
}


def _plane(frame, i: int, width: int, height: int, bits: int) -> np.ndarray:
    """Plane `i` of a planar frame as a (height, width) float32 array of code values."""
    pl = frame.planes[i]
    dtype = np.dtype("<u2") if bits > 8 else np.dtype(np.uint8)
    arr = np.frombuffer(pl, dtype=dtype)
    stride = pl.line_size // dtype.itemsize
    return arr.reshape(-1, stride)[:height, :width].astype(np.float32)


def _upsample(c: np.ndarray, width: int, height: int, sx: int, sy: int, h_cosited: bool) -> np.ndarray:
    """Chroma plane → (height, width), linear between sited samples, edges repeated (OpenCV, SIMD).

    Horizontally, co-sited chroma sample k sits on luma column 2k (odd columns average k and k+1);
    centre-sited it sits half-way between 2k and 2k+1 (weights 3/4, 1/4). Vertically 4:2:0 chroma
    sits half-way between its two luma rows. As an inverse affine map: src = A · dst + t.
    """
    import cv2

    if not sx and not sy:
        return c
    fx, fy = (0.5 if sx else 1.0), (0.5 if sy else 1.0)
    tx = (0.0 if h_cosited else -0.25) if sx else 0.0
    ty = -0.25 if sy else 0.0
    m = np.array([[fx, 0.0, tx], [0.0, fy, ty]], dtype=np.float64)
    return cv2.warpAffine(c, m, (width, height), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                          borderMode=cv2.BORDER_REPLICATE)


def _planar_layout(frame) -> tuple[int, int, int] | None:
    """(bits, x subsampling log2, y subsampling log2) of a planar Y'CbCr frame, else None."""
    fmt = frame.format
    name = fmt.name
    if not name.startswith(("yuv", "yuvj")) or not fmt.is_planar or len(fmt.components) != 3 \
            or name.endswith("be") or any(c.plane != i for i, c in enumerate(fmt.components)):
        return None
    bits = fmt.components[0].bits
    if bits > 16:
        return None
    cw, ch = fmt.components[1].width, fmt.components[1].height
    sx = {frame.width: 0, (frame.width + 1) // 2: 1}.get(cw)
    sy = {frame.height: 0, (frame.height + 1) // 2: 1}.get(ch)
    if sx is None or sy is None:
        return None
    return bits, sx, sy


def ycbcr_planes(frame) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, bool]:
    """(Y', Cb, Cr at full size as code values, bits, centre-sited) of a decoded Y'CbCr frame."""
    w, h = frame.width, frame.height
    layout = _planar_layout(frame)
    jpeg = frame.format.name.startswith("yuvj")
    if layout is None:
        try:
            frame = frame.reformat(format="yuv444p16le")
        except Exception as exc:  # libav raises several kinds for odd layouts
            raise MediaError(f"pixel format {frame.format.name} cannot be read as Y'CbCr ({exc})") from None
        layout = (16, 0, 0)
    bits, sx, sy = layout
    y = _plane(frame, 0, w, h, bits)
    cw, ch = (w + sx) >> sx, (h + sy) >> sy
    cb, cr = (_upsample(_plane(frame, i, cw, ch, bits), w, h, sx, sy, h_cosited=not jpeg) for i in (1, 2))
    return y, cb, cr, bits, jpeg


def conversion_matrix(*, bits: int, matrix: str, full_range: bool) -> np.ndarray:
    """3×4 affine map from (Y', Cb, Cr) code values to R'G'B' on 0…255 (last column: offsets)."""
    if matrix not in MATRIX_K:
        raise MediaError(f"unknown Y'CbCr matrix {matrix!r}")
    kr, kb = MATRIX_K[matrix]
    kg = 1.0 - kr - kb
    scale = float(1 << (bits - 8))
    if full_range:
        # FFmpeg's full range above 8 bits: 8-bit codes shifted (white 1020 at 10 bits)
        y_off, y_span, c_off, c_span = 0.0, 255.0 * scale, 128.0 * scale, 255.0 * scale
    else:
        y_off, y_span, c_off, c_span = 16.0 * scale, 219.0 * scale, 128.0 * scale, 224.0 * scale
    # rows R, G, B; columns Y', Pb, Pr on normalised values
    k = np.array([[1.0, 0.0, 2 * (1 - kr)],
                  [1.0, -2 * kb * (1 - kb) / kg, -2 * kr * (1 - kr) / kg],
                  [1.0, 2 * (1 - kb), 0.0]])
    lin = k * np.array([1.0 / y_span, 1.0 / c_span, 1.0 / c_span]) * 255.0
    off = -lin @ np.array([y_off, c_off, c_off])
    return np.c_[lin, off]


def ycbcr_to_rgb(y: np.ndarray, cb: np.ndarray, cr: np.ndarray, *, bits: int, matrix: str,
                 full_range: bool) -> np.ndarray:
    """Full-size Y'CbCr code values → (H, W, 3) float32 R'G'B' on 0…255, clipped."""
    import cv2

    m = conversion_matrix(bits=bits, matrix=matrix, full_range=full_range)
    rgb = cv2.transform(cv2.merge([y, cb, cr]), m)
    np.clip(rgb, 0.0, 255.0, out=rgb)
    return rgb


def frame_to_rgb_float(frame, *, matrix: str, full_range: bool) -> np.ndarray:
    """A decoded PyAV Y'CbCr frame → (H, W, 3) float32 R'G'B' on 0…255 (see the module doc)."""
    y, cb, cr, bits, _ = ycbcr_planes(frame)
    return ycbcr_to_rgb(y, cb, cr, bits=bits, matrix=matrix, full_range=full_range)
