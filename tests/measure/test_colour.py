"""Colour: ΔE2000 on the 34 Sharma (2005) pairs to 1e-4; frames decoded honouring the stream's
matrix and range (a BT.709-tagged H.264 of patches within 1 ΔE2000 of the source patches, and
ignoring the tag is measurably worse); exposure in stops; masks."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from verifiers.measure.colour import (
    chroma,
    delta_e2000,
    delta_e_masked,
    exposure_gain_stops,
    hue_deg,
    hue_difference_deg,
    mean_lab,
    rect_mask,
    rgb_to_lab,
)
from verifiers.measure.errors import MediaError
from verifiers.measure.frames import iter_frames

# Sharma, Wu, Dalal (2005), "The CIEDE2000 color-difference formula: implementation notes,
# supplementary test data, and mathematical observations", Table 1: L1 a1 b1 L2 a2 b2 ΔE00.
SHARMA = np.array([
    [50.0000, 2.6772, -79.7751, 50.0000, 0.0000, -82.7485, 2.0425],
    [50.0000, 3.1571, -77.2803, 50.0000, 0.0000, -82.7485, 2.8615],
    [50.0000, 2.8361, -74.0200, 50.0000, 0.0000, -82.7485, 3.4412],
    [50.0000, -1.3802, -84.2814, 50.0000, 0.0000, -82.7485, 1.0000],
    [50.0000, -1.1848, -84.8006, 50.0000, 0.0000, -82.7485, 1.0000],
    [50.0000, -0.9009, -85.5211, 50.0000, 0.0000, -82.7485, 1.0000],
    [50.0000, 0.0000, 0.0000, 50.0000, -1.0000, 2.0000, 2.3669],
    [50.0000, -1.0000, 2.0000, 50.0000, 0.0000, 0.0000, 2.3669],
    [50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0009, 7.1792],
    [50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0010, 7.1792],
    [50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0011, 7.2195],
    [50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0012, 7.2195],
    [50.0000, -0.0010, 2.4900, 50.0000, 0.0009, -2.4900, 4.8045],
    [50.0000, -0.0010, 2.4900, 50.0000, 0.0010, -2.4900, 4.8045],
    [50.0000, -0.0010, 2.4900, 50.0000, 0.0011, -2.4900, 4.7461],
    [50.0000, 2.5000, 0.0000, 50.0000, 0.0000, -2.5000, 4.3065],
    [50.0000, 2.5000, 0.0000, 73.0000, 25.0000, -18.0000, 27.1492],
    [50.0000, 2.5000, 0.0000, 61.0000, -5.0000, 29.0000, 22.8977],
    [50.0000, 2.5000, 0.0000, 56.0000, -27.0000, -3.0000, 31.9030],
    [50.0000, 2.5000, 0.0000, 58.0000, 24.0000, 15.0000, 19.4535],
    [50.0000, 2.5000, 0.0000, 50.0000, 3.1736, 0.5854, 1.0000],
    [50.0000, 2.5000, 0.0000, 50.0000, 3.2972, 0.0000, 1.0000],
    [50.0000, 2.5000, 0.0000, 50.0000, 1.8634, 0.5757, 1.0000],
    [50.0000, 2.5000, 0.0000, 50.0000, 3.2592, 0.3350, 1.0000],
    [60.2574, -34.0099, 36.2677, 60.4626, -34.1751, 39.4387, 1.2644],
    [63.0109, -31.0961, -5.8663, 62.8187, -29.7946, -4.0864, 1.2630],
    [61.2901, 3.7196, -5.3901, 61.4292, 2.2480, -4.9620, 1.8731],
    [35.0831, -44.1164, 3.7933, 35.0232, -40.0716, 1.5901, 1.8645],
    [22.7233, 20.0904, -46.6940, 23.0331, 14.9730, -42.5619, 2.0373],
    [36.4612, 47.8580, 18.3852, 36.2715, 50.5065, 21.2231, 1.4146],
    [90.8027, -2.0831, 1.4410, 91.1528, -1.6435, 0.0447, 1.4441],
    [90.9257, -0.5406, -0.9208, 88.6381, -0.8985, -0.7239, 1.5381],
    [6.7747, -0.2908, -2.4247, 5.8714, -0.0985, -2.2286, 0.6377],
    [2.0776, 0.0795, -1.1350, 0.9033, -0.0636, -0.5514, 0.9082],
])


def test_sharma_2005_pairs_to_1e4() -> None:
    assert SHARMA.shape == (34, 7)
    got = delta_e2000(SHARMA[:, 0:3], SHARMA[:, 3:6])
    assert np.max(np.abs(got - SHARMA[:, 6])) <= 1e-4
    # symmetric, as the formula is
    assert np.allclose(delta_e2000(SHARMA[:, 3:6], SHARMA[:, 0:3]), got, atol=1e-9)


def test_lab_hue_chroma_of_known_colours() -> None:
    lab = rgb_to_lab(np.array([[[255, 255, 255], [255, 0, 0], [0, 0, 0]]], dtype=np.uint8))[0]
    assert lab[0] == pytest.approx([100.0, 0.0, 0.0], abs=0.01)
    assert lab[1] == pytest.approx([53.24, 80.09, 67.20], abs=0.05)  # sRGB red, D65
    assert chroma(lab[1]) == pytest.approx(104.55, abs=0.1)
    assert hue_deg(lab[1]) == pytest.approx(40.0, abs=0.1)
    assert hue_difference_deg(350.0, 10.0) == pytest.approx(20.0)
    assert hue_difference_deg(10.0, 350.0) == pytest.approx(-20.0)


def test_exposure_in_stops() -> None:
    rng = np.random.default_rng(0)
    lin = rng.uniform(0.05, 0.4, (64, 64, 3))
    enc = lambda v: np.clip(np.where(v <= 0.0031308, v * 12.92, 1.055 * v ** (1 / 2.4) - 0.055), 0, 1)  # noqa: E731
    assert exposure_gain_stops(enc(lin), enc(lin * 2.0)) == pytest.approx(1.0, abs=0.01)
    assert exposure_gain_stops(enc(lin), enc(lin * 0.5)) == pytest.approx(-1.0, abs=0.01)
    with pytest.raises(MediaError):
        exposure_gain_stops(np.zeros((4, 4, 3)), np.zeros((4, 4, 3)))


def test_masked_delta_counts_and_strides() -> None:
    frame = np.zeros((100, 200, 3), dtype=np.uint8)
    frame[20:60, 50:150] = (200, 40, 40)
    mask = rect_mask(100, 200, 50, 20, 100, 40)
    same = delta_e_masked(frame, np.array([200, 40, 40], dtype=np.uint8), mask)
    # uint8 RGB becomes float32 Lab: L* near 50-100 at float32 epsilon (1.2e-7) is ~1e-5, and numpy's
    # SIMD loops (4000 pixels) and scalar path (1 pixel) may round differently on another CPU
    # (1.79e-6 was seen on a fresh machine), so "the same colour" means ΔE2000 below 1e-4, four orders
    # of magnitude under a just-noticeable difference (~1).
    assert same.max < 1e-4 and same.pixels == 4000 and same.stride == 1
    other = delta_e_masked(frame, np.array([40, 200, 40], dtype=np.uint8), mask, stride=7)
    assert other.mean > 50 and other.pixels == len(range(0, 4000, 7)) and other.stride == 7
    assert mean_lab(frame, mask) == pytest.approx(rgb_to_lab(np.array([[[200, 40, 40]]], dtype=np.uint8))[0, 0],
                                                  abs=0.01)


PATCHES = np.array([[230, 20, 30], [30, 200, 40], [25, 40, 220], [40, 210, 220],
                    [210, 40, 200], [235, 220, 30], [224, 172, 140], [128, 128, 128]], dtype=np.uint8)


def _patch_image(w: int, h: int) -> np.ndarray:
    img = np.zeros((h, w, 3), dtype=np.uint8)
    pw, ph = w // 4, h // 2
    for i, c in enumerate(PATCHES):
        r, col = divmod(i, 4)
        img[r * ph:(r + 1) * ph, col * pw:(col + 1) * pw] = c
    return img


def _encode_patches(path: Path, w: int, h: int, matrix: str, rng: str) -> None:
    img = _patch_image(w, h)
    tag = {"bt709": "bt709", "bt601": "smpte170m"}[matrix]
    subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-f", "rawvideo",
                    "-pix_fmt", "rgb24", "-s", f"{w}x{h}", "-r", "25", "-i", "-",
                    "-vf", f"scale=out_color_matrix={matrix}:out_range={rng},format=yuv420p",
                    "-colorspace", tag, "-color_primaries", tag, "-color_trc", tag, "-color_range", rng,
                    "-c:v", "libx264", "-preset", "ultrafast", "-crf", "8", str(path)],
                   input=img.tobytes() * 5, check=True)


def _patch_errors(path: Path, w: int, h: int, force: str | None = None) -> np.ndarray:
    frame = next(iter(iter_frames(path, force_matrix=force)))
    pw, ph = w // 4, h // 2
    errs = []
    for i, c in enumerate(PATCHES):
        r, col = divmod(i, 4)
        mask = rect_mask(h, w, col * pw + pw // 4, r * ph + ph // 4, pw // 2, ph // 2)
        src = rgb_to_lab(c[None, None])[0, 0]
        errs.append(float(delta_e2000(mean_lab(frame.rgb, mask), src)))
    return np.array(errs)


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")
@pytest.mark.parametrize(("w", "h", "matrix", "rng", "wrong"), [
    (1280, 720, "bt709", "tv", "bt601"), (640, 360, "bt709", "pc", "bt601"), (640, 480, "bt601", "tv", "bt709")])
def test_tagged_patches_decode_within_1_de2000(tmp_path: Path, w: int, h: int, matrix: str, rng: str,
                                               wrong: str) -> None:
    path = tmp_path / f"patches_{matrix}_{rng}.mp4"
    _encode_patches(path, w, h, matrix, rng)
    frame = next(iter(iter_frames(path)))
    assert frame.tags.matrix == matrix and frame.tags.full_range == (rng == "pc")
    errs = _patch_errors(path, w, h)
    assert errs.max() <= 1.0, errs.round(2)
    # ignoring the tag is visibly worse on saturated patches: the test can tell the difference
    assert _patch_errors(path, w, h, force=wrong).max() > 2.0


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")
def test_read_frame_at_seeks_to_the_same_frame_as_decoding_through(tmp_path: Path) -> None:
    from verifiers.measure.frames import read_frame_at

    path = tmp_path / "clip.mp4"
    subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                    "testsrc2=s=320x180:r=25:d=8", "-c:v", "libx264", "-preset", "ultrafast", "-g", "50",
                    "-bf", "2", str(path)], check=True)
    frames = list(iter_frames(path))
    for t in (0.0, 3.0, 5.52, 7.96):
        want = next(f for f in frames if f.t_s >= t - 1e-6)
        got = read_frame_at(path, t)
        assert got.t_s == pytest.approx(want.t_s)
        assert np.array_equal(got.rgb, want.rgb)
    with pytest.raises(MediaError):
        read_frame_at(path, 9.0)


# -- the Y'CbCr decoder against ffmpeg's own accurate conversion (issue 21) -------------------------

FF = ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y"]
ACCURATE = ["-sws_flags", "accurate_rnd+full_chroma_int+bitexact"]
TAG = {"bt709": "bt709", "bt601": "smpte170m", "bt2020": "bt2020nc"}


def _raw_planes(pixfmt: str, planes: list[np.ndarray]) -> bytes:
    return b"".join(np.ascontiguousarray(p).tobytes() for p in planes)


def _write_lossless(path: Path, pixfmt: str, w: int, h: int, planes: list[np.ndarray], matrix: str | None,
                    rng: str) -> Path:
    """FFV1 (lossless) of exactly these Y'CbCr codes, tagged (or untagged when matrix is None)."""
    tags = ["-colorspace", TAG[matrix]] if matrix else []
    subprocess.run([*FF, "-f", "rawvideo", "-pix_fmt", pixfmt, "-s", f"{w}x{h}", "-r", "12", "-i", "-",
                    "-c:v", "ffv1", *tags, "-color_range", rng, str(path)],
                   input=_raw_planes(pixfmt, planes) * 2, check=True)
    return path


def _ffmpeg_rgb48(path: Path, w: int, h: int) -> np.ndarray:
    """ffmpeg's own R'G'B' of the first frame on the 0…255 scale (rgb48le: code × 256, white 65535)."""
    out = subprocess.run([*FF, "-i", str(path), "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb48le",
                          *ACCURATE, "-"], capture_output=True, check=True).stdout
    return np.minimum(np.frombuffer(out, "<u2").reshape(h, w, 3) / 256.0, 255.0)


def _first_float(path: Path) -> np.ndarray:
    import av

    from verifiers.measure.frames import to_rgb_float

    with av.open(str(path)) as c:
        return to_rgb_float(next(c.decode(video=0)))[0]


def _swscale_rgb24(path: Path) -> np.ndarray:
    """What frames.to_rgb did before issue 21: PyAV/swscale rgb24 (tag-aware, no accurate flags)."""
    import av
    from av.video.reformatter import ColorRange

    with av.open(str(path)) as c:
        f = next(c.decode(video=0))
        sws = {1: "itu709", 5: "itu601", 6: "itu601", 9: "bt2020"}.get(int(f.colorspace or 2), "itu601")
        return f.reformat(format="rgb24", src_colorspace=sws, dst_colorspace=sws, src_color_range=ColorRange.MPEG,
                          dst_color_range=ColorRange.JPEG).to_ndarray().astype(np.float64)


needs_ffmpeg = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")


@needs_ffmpeg
@pytest.mark.parametrize(("pixfmt", "bits", "matrix", "rng"), [
    ("yuv444p", 8, "bt709", "tv"), ("yuv444p", 8, "bt601", "pc"), ("yuv444p10le", 10, "bt709", "tv"),
    ("yuv444p10le", 10, "bt2020", "tv"), ("yuv444p12le", 12, "bt601", "pc")])
def test_every_pixel_matches_ffmpeg_rgb48_on_444(tmp_path: Path, pixfmt: str, bits: int, matrix: str,
                                                 rng: str) -> None:
    """Random codes, no subsampling: matrix, range and bit depth agree with ffmpeg to ≤ 0.5 code everywhere."""
    w, h, sc = 64, 32, 1 << (bits - 8)
    gen = np.random.default_rng(bits)
    dt = "<u2" if bits > 8 else np.uint8
    lo, hi_y, hi_c = (16 * sc, 236 * sc, 241 * sc) if rng == "tv" else (0, 256 * sc, 256 * sc)
    planes = [gen.integers(lo, hi, (h, w)).astype(dt) for hi in (hi_y, hi_c, hi_c)]
    path = _write_lossless(tmp_path / "r.mkv", pixfmt, w, h, planes, matrix, rng)
    diff = np.abs(_first_float(path) - _ffmpeg_rgb48(path, w, h))
    assert diff.max() <= 0.5, diff.max()


def _patch_planes(bits: int, sx: int, sy: int, w: int, h: int, codes: list[tuple[int, int, int]]):
    """Planes of 4 × 2 flat patches of the given (Y', Cb, Cr) codes, chroma at its subsampled size."""
    dt = "<u2" if bits > 8 else np.uint8
    y = np.zeros((h, w), dt)
    cb = np.zeros((h >> sy, w >> sx), dt)
    cr = np.zeros_like(cb)
    pw, ph = w // 4, h // 2
    for i, (cy, ccb, ccr) in enumerate(codes):
        r, c = divmod(i, 4)
        y[r * ph:(r + 1) * ph, c * pw:(c + 1) * pw] = cy
        cb[(r * ph) >> sy:((r + 1) * ph) >> sy, (c * pw) >> sx:((c + 1) * pw) >> sx] = ccb
        cr[(r * ph) >> sy:((r + 1) * ph) >> sy, (c * pw) >> sx:((c + 1) * pw) >> sx] = ccr
    return [y, cb, cr]


def _interiors(img: np.ndarray, w: int, h: int, guard: int = 4) -> np.ndarray:
    pw, ph = w // 4, h // 2
    return np.stack([img[r * ph + guard:(r + 1) * ph - guard, c * pw + guard:(c + 1) * pw - guard]
                     for r in range(2) for c in range(4)])


#: 8-bit codes: grey 128-ish, saturated red/green/blue/cyan/magenta/yellow-ish, a skin tone
CODES8 = [(126, 128, 128), (81, 90, 240), (145, 54, 34), (41, 240, 110), (170, 166, 16), (106, 202, 222),
          (210, 16, 146), (150, 110, 150)]


@needs_ffmpeg
@pytest.mark.parametrize(("pixfmt", "bits", "sx", "sy", "matrix", "rng"), [
    ("yuv420p", 8, 1, 1, "bt709", "tv"), ("yuv420p", 8, 1, 1, "bt601", "tv"), ("yuv422p", 8, 1, 0, "bt709", "pc"),
    ("yuv422p10le", 10, 1, 0, "bt709", "tv"), ("yuv420p10le", 10, 1, 1, "bt2020", "tv")])
def test_subsampled_patches_match_ffmpeg_rgb48_and_swscale_rgb24_did_not(
        tmp_path: Path, pixfmt: str, bits: int, sx: int, sy: int, matrix: str, rng: str) -> None:
    """Flat patches through 4:2:0/4:2:2: away from chroma edges (where siting and kernel differ by
    design) every pixel agrees with ffmpeg's accurate rgb48 to ≤ 0.5 code; the old rgb24 path was
    more than a code off on some patch, so this test can tell the two apart."""
    w, h, sc = 128, 64, 1 << (bits - 8)
    codes = [(y * sc, cb * sc, cr * sc) for y, cb, cr in CODES8]
    path = _write_lossless(tmp_path / "p.mkv", pixfmt, w, h, _patch_planes(bits, sx, sy, w, h, codes), matrix, rng)
    ref = _interiors(_ffmpeg_rgb48(path, w, h), w, h)
    diff = np.abs(_interiors(_first_float(path), w, h) - ref)
    assert diff.max() <= 0.5, diff.max()
    if rng == "tv":
        assert np.abs(_interiors(_swscale_rgb24(path), w, h) - ref).max() > 1.0


@needs_ffmpeg
def test_pixel_exact_10bit_file_decodes_to_the_textbook_values(tmp_path: Path) -> None:
    """A lossless 10-bit 4:2:2 BT.709 file of known codes: R'G'B' by the BT.709 formula, written out
    here (not the decoder's code), to ≤ 0.5 code; grey Y' 502 is 127.5, which swscale read as ≈ 126."""
    w, h = 128, 64
    codes = [(502, 512, 512), (64, 512, 512), (940, 512, 512), (300, 400, 700), (600, 300, 450),
             (400, 800, 500), (700, 520, 540), (250, 600, 300)]
    path = _write_lossless(tmp_path / "exact10.mkv", "yuv422p10le", w, h, _patch_planes(10, 1, 0, w, h, codes),
                           "bt709", "tv")
    kr, kb = 0.2126, 0.0722
    want = []
    for y, cb, cr in codes:
        yn, pb, pr = (y - 64) / 876, (cb - 512) / 896, (cr - 512) / 896
        r, b = yn + 2 * (1 - kr) * pr, yn + 2 * (1 - kb) * pb
        g = (yn - kr * r - kb * b) / (1 - kr - kb)
        want.append(np.clip(np.array([r, g, b]) * 255, 0, 255))
    got = _interiors(_first_float(path), w, h)
    assert np.abs(got - np.array(want)[:, None, None, :]).max() <= 0.5
    assert got[0].mean() == pytest.approx(127.5, abs=0.05)
    assert _interiors(_swscale_rgb24(path), w, h)[0].mean() < 127.0  # the bias the issue measured
    # through the uint8 reader: grey 127.5 rounds to 128 (or 127), never 126
    frame = next(iter(iter_frames(path)))
    assert abs(int(frame.rgb[8, 8, 0]) - 127.5) <= 0.5


@needs_ffmpeg
def test_untagged_prores_below_720_lines_is_bt601(tmp_path: Path) -> None:
    """FFmpeg's rule for untagged Y'CbCr: BT.601 below 720 lines, BT.709 from 720 (documented in frames)."""
    for h, want in ((480, "bt601"), (720, "bt709")):
        path = tmp_path / f"u{h}.mov"
        subprocess.run([*FF, "-f", "lavfi", "-i", f"color=c=0xC04020:s=640x{h}:r=12:d=0.25", "-c:v", "prores_ks",
                        "-profile:v", "2", "-pix_fmt", "yuv422p10le", "-colorspace", "unknown", str(path)], check=True)
        frame = next(iter(iter_frames(path)))
        assert frame.tags.matrix == want and frame.tags.declared_matrix == 2


def test_rgb_to_lab_uint8_lookup_is_bit_identical_to_skimage() -> None:
    """The uint8 fast path (transfer curve looked up from its 256 values) returns exactly what
    skimage's rgb2lab gives, on every code of every channel and on strided views."""
    from skimage.color import rgb2lab

    codes = np.arange(256, dtype=np.uint8)
    grid = np.stack(np.meshgrid(codes, codes, codes[::7], indexing="ij"), -1).reshape(-1, 256, 3)
    rng = np.random.default_rng(3)
    frames = rng.integers(0, 256, (3, 36, 64, 3), dtype=np.uint8)
    for rgb in (grid, frames, frames[:, ::3, ::2]):
        assert np.array_equal(rgb_to_lab(rgb), rgb2lab(rgb.astype(np.float32) / 255.0))
