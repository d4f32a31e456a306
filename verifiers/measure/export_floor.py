"""The export floor: a reference passed through the same kind of export as the agent's render.

Why: a seed threshold such as "untouched regions ΔE2000 ≤ 1" is written against a lossless
comparison, but an honest render leaves the app as 8-bit 4:2:0 H.264 or 10-bit 4:2:2 ProRes, and
that export alone moves untouched pixels by about the threshold. Re-encoding the ungraded source
the way the render was encoded (same codec, pixel format, profile and bitrate, with ffmpeg) and
decoding both with the same reader measures what the export costs on this very shot; a check then
compares the render's change with that floor and keeps the seed's number on top of it (policy
rule 4 in docs/catalog.md).

`render_profile` reads the render's stream; `floor_video` writes the re-encoded reference (cached
per source file and profile, so every check and every self-test case encodes it once).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from verifiers.measure.container import open_container, video_stream
from verifiers.measure.errors import MediaError

#: codecs that store pictures exactly (their floor is the pixel format's subsampling only)
LOSSLESS_CODECS = frozenset({"png", "ffv1", "rawvideo", "qtrle", "utvideo", "huffyuv", "ffvhuff", "r210",
                             "v210", "v410", "apng", "tiff", "exr", "magicyuv", "zlib", "lagarith"})
#: encoders to use for a decoder name; anything else is encoded by ffmpeg's default encoder of it
ENCODER_FOR = {"h264": "libx264", "hevc": "libx265", "prores": "prores_ks", "vp9": "libvpx-vp9",
               "av1": "libaom-av1", "mpeg4": "mpeg4", "mjpeg": "mjpeg", "dnxhd": "dnxhd"}
_PRORES_PROFILE = {"proxy": 0, "lt": 1, "standard": 2, "hq": 3, "4444": 4, "4444 xq": 5, "xq": 5}


@dataclass(frozen=True)
class RenderProfile:
    """What kind of export a video file is: enough to encode another picture the same way."""

    codec: str  # decoder name, e.g. "h264", "prores", "png"
    pix_fmt: str  # e.g. "yuv420p", "yuv422p10le", "rgb24"
    profile: str  # codec profile as PyAV names it ("High", "Standard", "")
    bit_rate: int  # stream bit rate in bit/s (0 when unknown)
    colorspace: int  # AVColorSpace tag (1 = BT.709, 2 = unspecified)
    color_range: int  # AVColorRange tag (1 = tv, 2 = pc, 0 = unspecified)
    height: int  # lines: picks the matrix of an untagged render as the reader does (BT.601 below 720)
    x264_options: str = ""  # the x264 settings string the encoder left in its SEI ("" if not x264)

    @property
    def lossy(self) -> bool:
        return self.codec not in LOSSLESS_CODECS

    @property
    def is_rgb(self) -> bool:
        return self.pix_fmt.startswith(("rgb", "bgr", "gbr", "argb", "abgr", "rgba", "bgra"))

    @property
    def chroma_subsampling(self) -> tuple[int, int]:
        """(horizontal, vertical) chroma subsampling factor: 4:2:0 → (2, 2), 4:2:2 → (2, 1), RGB → (1, 1)."""
        if self.is_rgb or "444" in self.pix_fmt:
            return 1, 1
        if "420" in self.pix_fmt or self.pix_fmt in ("nv12", "nv21", "p010le"):
            return 2, 2
        if "422" in self.pix_fmt or self.pix_fmt in ("yuyv422", "uyvy422"):
            return 2, 1
        if "411" in self.pix_fmt:
            return 4, 1
        return 1, 1

    @property
    def exact(self) -> bool:
        """True when the export stores the decoded pictures' RGB exactly: no floor at all."""
        return not self.lossy and self.is_rgb

    def describe(self) -> str:
        rate = f", {self.bit_rate / 1000:.0f} kbit/s" if self.bit_rate and self.lossy else ""
        return f"{self.codec} {self.pix_fmt}{' ' + self.profile if self.profile else ''}{rate}"


def render_profile(path: str | Path) -> RenderProfile:
    """The export kind of `path`'s first video stream (MediaError when it is not a video)."""
    path = Path(path)
    container = open_container(path)
    try:
        vs = video_stream(container, path)
        cc = vs.codec_context
        rate = int(cc.bit_rate or 0)
        x264 = ""
        if cc.name == "h264":
            for pkt in container.demux(vs):
                m = _X264_SEI.search(bytes(pkt))
                x264 = m.group(1).decode("ascii", "replace") if m else ""
                break
            container.seek(0)
        if not rate and vs.duration and vs.time_base:
            dur_s = float(vs.duration * vs.time_base)
            size = sum(p.size for p in container.demux(vs) if p.size)
            rate = int(8 * size / dur_s) if dur_s > 0 else 0
        return RenderProfile(codec=cc.name, pix_fmt=cc.format.name if cc.format else "", profile=str(cc.profile or ""),
                             bit_rate=rate, colorspace=int(cc.colorspace or 2), color_range=int(cc.color_range or 0),
                             height=int(cc.height or 0), x264_options=x264)
    finally:
        container.close()


#: AVColorSpace → (ffmpeg scale filter matrix, -colorspace tag)
_MATRIX = {1: ("bt709", "bt709"), 5: ("bt601", "bt470bg"), 6: ("bt601", "smpte170m"), 7: ("smpte240m", "smpte240m"),
           9: ("bt2020", "bt2020nc")}


def encode_like(source: Path, profile: RenderProfile, dest: Path) -> Path:
    """Encode `source` (any video ffmpeg reads) the way `profile` describes, with ffmpeg.

    RGB → Y'CbCr uses the matrix the render is tagged with (untagged: BT.601 below 720 lines,
    BT.709 from 720, as verifiers.measure.frames reads it), accurate rounding, the render's range. Lossy codecs get the render's bitrate (one pass);
    ProRes gets its profile; an x264 render's own CRF (or ABR bitrate) is read from the settings
    string x264 writes into the stream, else the render's average bitrate is used.
    """
    if shutil.which("ffmpeg") is None:
        raise MediaError("ffmpeg is not installed: cannot measure the export floor")
    default = _MATRIX[1] if profile.height >= 720 else _MATRIX[6]
    sws_matrix, tag = _MATRIX.get(profile.colorspace, default)
    full = profile.color_range == 2 or profile.pix_fmt.startswith("yuvj")
    rng = "pc" if full else "tv"
    # setparams: ffmpeg 5.1's prores_ks ignores -colorspace and writes what the frames carry
    vf = (f"scale=out_color_matrix={sws_matrix}:out_range={rng}:flags=accurate_rnd+full_chroma_int,"
          f"format={profile.pix_fmt},setparams=colorspace={tag}:range={rng}")
    if profile.is_rgb:
        vf = f"format={profile.pix_fmt}"
    enc = ENCODER_FOR.get(profile.codec, profile.codec)
    args = ["-c:v", enc]
    if profile.codec == "prores":
        args += ["-profile:v", str(_PRORES_PROFILE.get(profile.profile.lower(), 2))]
    elif enc == "libx264" and x264_rate_control(profile.x264_options):
        args += [*x264_rate_control(profile.x264_options), "-preset", "medium"]  # the render's own x264 CRF/ABR
    elif profile.lossy and profile.bit_rate:
        args += ["-b:v", str(profile.bit_rate)]
        if enc == "libx264":
            args += ["-preset", "medium"]
    tags = [] if profile.is_rgb else ["-colorspace", tag, "-color_range", "pc" if full else "tv"]
    cmd = ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-i", str(source), "-an",
           "-vf", vf, *args, *tags, str(dest)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if done.returncode != 0 or not dest.exists():
        raise MediaError(f"export floor: ffmpeg could not encode like {profile.describe()}: "
                         f"{done.stderr.strip().splitlines()[-1:] or '?'}")
    return dest


_X264_SEI = re.compile(rb"x264 - core \d+[^\x00]*? - H\.264/MPEG-4 AVC codec - Copy[^\x00]*? - options: ([^\x00]*)")


def x264_rate_control(options: str) -> list[str]:
    """ffmpeg arguments reproducing an x264 render's rate control from its SEI options, or []."""
    opts = dict(kv.split("=", 1) for kv in options.split() if "=" in kv)
    if opts.get("rc") == "crf" and "crf" in opts:
        return ["-crf", opts["crf"]]
    if opts.get("rc") in ("abr", "cbr") and "bitrate" in opts:
        return ["-b:v", f"{opts['bitrate']}k"]
    return []


_CACHE_DIR = Path(tempfile.gettempdir()) / "tally-export-floor"


def floor_video(source: str | Path, profile: RenderProfile) -> Path:
    """`source` encoded like `profile`, cached on disk by the source's bytes and the profile."""
    source = Path(source)
    st = source.stat()
    key = hashlib.sha1(f"{source.resolve()}|{st.st_size}|{st.st_mtime_ns}|{profile}".encode()).hexdigest()[:20]
    ext = source.suffix if profile.codec != "h264" else ".mp4"
    dest = _CACHE_DIR / f"{key}{ext or '.mov'}"
    if dest.exists() and dest.stat().st_size > 0:
        return dest
    _CACHE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.stem + ".part" + dest.suffix)
    encode_like(source, profile, tmp)
    tmp.replace(dest)
    return dest
