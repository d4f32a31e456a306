"""Decoded video frames as sRGB arrays, converted with the matrix and range the stream declares.

swscale (and so PyAV's `to_ndarray("rgb24")` by default) converts YUV with BT.601 whatever the
stream says; on a BT.709 file that costs 2–5 ΔE2000 on saturated colours, more than most colour
thresholds, and even with the right matrix it reads coloured pixels 1–3 codes dark (10-bit: every
pixel). Here the stream's tags choose the matrix (BT.709, BT.601, SMPTE 240M, BT.2020) and the
range (limited "tv" or full "pc"), and :mod:`verifiers.measure.ycbcr` converts the decoded planes
in numpy. Untagged streams follow FFmpeg's rule: BT.709 at ≥ 720 lines, BT.601 below (so an
untagged 576-line ProRes is read as BT.601, as FFmpeg does), limited range unless the pixel format
is a full-range (yuvj*) one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from verifiers.measure.container import open_container, video_stream
from verifiers.measure.errors import MediaError, describe
from verifiers.measure.membounds import bound_bytes

# AVColorSpace → swscale colourspace name
_MATRIX = {1: "itu709", 4: "fcc", 5: "itu601", 6: "itu601", 7: "smpte240m", 9: "bt2020", 10: "bt2020"}
_MATRIX_NAME = {"itu709": "bt709", "fcc": "fcc", "itu601": "bt601", "smpte240m": "smpte240m",
                "bt2020": "bt2020"}


@dataclass(frozen=True)
class ColourTags:
    matrix: str  # what was used: "bt709", "bt601", ...
    full_range: bool
    declared_matrix: int  # AVColorSpace as tagged (2 = unspecified)
    declared_range: int  # AVColorRange as tagged (0 = unspecified, 1 = tv, 2 = pc)


@dataclass
class Frame:
    index: int  # decode order among the frames yielded from this stream
    t_s: float  # presentation time on the container clock
    rgb: np.ndarray  # (H, W, 3) uint8 sRGB
    keyframe: bool
    tags: ColourTags


def colour_tags(frame, height: int) -> ColourTags:
    """Which matrix/range to use for this frame, from its tags (FFmpeg defaults when untagged)."""
    cs = int(frame.colorspace or 2)
    rng = int(frame.color_range or 0)
    sws = _MATRIX.get(cs) or ("itu709" if height >= 720 else "itu601")
    fmt = frame.format.name if frame.format is not None else ""
    full = rng == 2 or (rng == 0 and fmt.startswith("yuvj"))
    return ColourTags(matrix=_MATRIX_NAME[sws], full_range=full, declared_matrix=cs, declared_range=rng)


def to_rgb(frame, *, width: int | None = None, height: int | None = None,
           force_matrix: str | None = None) -> tuple[np.ndarray, ColourTags]:
    """One decoded PyAV frame → (H, W, 3) uint8 sRGB, honouring its tags (or `force_matrix`).

    Y'CbCr frames are converted in numpy from their own planes (:mod:`verifiers.measure.ycbcr`:
    matrix, range, bit depth and chroma siting, exact to ≤ 0.02 code on 4:4:4); swscale only
    scales (in Y'CbCr, when `width`/`height` ask for a thumbnail) and repacks RGB layouts.
    """
    rgb, tags = to_rgb_float(frame, width=width, height=height, force_matrix=force_matrix)
    if rgb.dtype == np.uint8:
        return rgb, tags
    import cv2

    return cv2.convertScaleAbs(rgb), tags  # round to nearest; values are already clipped to 0…255


def to_rgb_float(frame, *, width: int | None = None, height: int | None = None,
                 force_matrix: str | None = None) -> tuple[np.ndarray, ColourTags]:
    """As :func:`to_rgb`, but float32 R'G'B' on 0…255 before rounding (uint8 for RGB sources)."""
    from verifiers.measure.ycbcr import frame_to_rgb_float

    tags = colour_tags(frame, frame.height)
    if width and not height:
        height = max(2, round(frame.height * width / frame.width))
    elif height and not width:
        width = max(2, round(frame.width * height / frame.height))
    if frame.format.name in ("rgb24", "bgr24", "rgba", "bgra", "gbrp") or frame.format.is_rgb:
        return frame.reformat(width=width, height=height, format="rgb24").to_ndarray(), tags
    if (width and width != frame.width) or (height and height != frame.height):
        frame = frame.reformat(width=width, height=height)  # scale in Y'CbCr, same layout
    return frame_to_rgb_float(frame, matrix=force_matrix or tags.matrix, full_range=tags.full_range), tags


FRAME_CACHE_MAX_BYTES = bound_bytes("TALLY_FRAME_CACHE_MB")   # MiB from the environment (membounds.py)
"""Decoded frames the process remembers (least recently used dropped first). A scorer decodes the
same unchanged input clip once per solution it scores (a self-test: oracle, do-nothing, every mutant
and export) and often once per check; colour conversion is most of a decode's CPU."""

FRAME_CACHE_ENTRY_MAX_BYTES = FRAME_CACHE_MAX_BYTES // 2
"""One decode's frames larger than this are not remembered (they would push out everything else)."""

FRAME_CACHE_FILE_MAX_BYTES = 64 * 2**20
"""Files larger than this are neither hashed nor remembered (long recordings: hashing costs, and
their frames would not fit anyway)."""

_frame_cache: OrderedDict[tuple, tuple[Frame, ...]] = OrderedDict()
_frame_cache_bytes = 0
_frame_cache_lock = threading.Lock()


def _file_state(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


def _content_digest(path: Path) -> str | None:
    """sha256 of the file's bytes; None when it is too large to remember or unreadable."""
    try:
        if path.stat().st_size > FRAME_CACHE_FILE_MAX_BYTES:
            return None
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


def _cache_get(key: tuple) -> tuple[Frame, ...] | None:
    with _frame_cache_lock:
        hit = _frame_cache.get(key)
        if hit is not None:
            _frame_cache.move_to_end(key)
        return hit


def _cache_put(key: tuple, frames: tuple[Frame, ...], nbytes: int) -> None:
    global _frame_cache_bytes
    with _frame_cache_lock:
        if key in _frame_cache:
            return
        _frame_cache[key] = frames
        _frame_cache_bytes += nbytes
        while _frame_cache_bytes > FRAME_CACHE_MAX_BYTES and _frame_cache:
            _, old = _frame_cache.popitem(last=False)
            _frame_cache_bytes -= sum(f.rgb.nbytes for f in old)


def clear_frame_cache() -> None:
    """Forget every remembered decode (tests)."""
    global _frame_cache_bytes
    with _frame_cache_lock:
        _frame_cache.clear()
        _frame_cache_bytes = 0


def iter_frames(path: str | Path, *, stream: int = 0, every_s: float | None = None,
                max_frames: int | None = None, width: int | None = None, height: int | None = None,
                force_matrix: str | None = None) -> Iterator[Frame]:
    """Decode frames of the `stream`-th video stream as sRGB, optionally one per `every_s` seconds.

    `width`/`height` scale during conversion (cheap thumbnails for matching); give one to keep the
    aspect ratio. `force_matrix` ("bt601",
    "bt709") overrides the tags: only for showing what ignoring them costs.

    A decode that runs to its end is remembered by the file's CONTENT (sha256 of its bytes) and these
    options, bounded (FRAME_CACHE_*): decoding is a pure function of them, so the same bytes under
    another path (an input copied into each solution's work dir, an output a mutant left unchanged)
    are decoded once. Callers get their own copies of the arrays, so writing into one changes nothing
    remembered. Failed, abandoned or oversized decodes, and files that change while decoded, are not
    remembered.
    """
    path = Path(path)
    state = _file_state(path)
    digest = _content_digest(path) if state is not None else None
    key = None if digest is None else (digest, stream, every_s, max_frames, width, height, force_matrix)
    if key is not None:
        hit = _cache_get(key)
        if hit is not None:
            for fr in hit:
                yield dataclasses.replace(fr, rgb=fr.rgb.copy())
            return
    kept: list[Frame] | None = [] if key is not None else None
    nbytes = 0
    decode = _decode_frames(path, stream=stream, every_s=every_s, max_frames=max_frames, width=width,
                            height=height, force_matrix=force_matrix)
    with contextlib.closing(decode):  # an abandoned iteration closes the container at once, as before
        for fr in decode:
            if kept is not None:
                nbytes += fr.rgb.nbytes
                if nbytes > FRAME_CACHE_ENTRY_MAX_BYTES:
                    kept = None
                else:
                    kept.append(dataclasses.replace(fr, rgb=fr.rgb.copy()))
            yield fr
    if kept is not None and key is not None and _file_state(path) == state:
        _cache_put(key, tuple(kept), nbytes)


@contextlib.contextmanager
def _decoded(path: Path, stream: int, counted: Callable[[], int]) -> Iterator[Iterator[tuple[float, Any]]]:
    """One decoding pass: (presentation time, PyAV frame) of the `stream`-th video stream in decode
    order, the container closed however the caller's loop ends.

    The error tail every full decode shares: an FFmpeg error while decoding, or while the caller
    converts a frame inside the `with`, becomes a MediaError naming `counted()` (what the caller
    counts: frames yielded or decoded); a stream that runs to its end without one counted frame is
    'no decodable video frames'. A frame without a timestamp is dated `counted()` / average rate."""
    import av

    container = open_container(path)
    try:
        vs = video_stream(container, path, stream)
        vs.thread_type = "AUTO"
        ended = False

        def timed() -> Iterator[tuple[float, Any]]:
            nonlocal ended
            for frame in container.decode(vs):
                yield (float(frame.pts * frame.time_base) if frame.pts is not None
                       else counted() / float(vs.average_rate or 1)), frame
            ended = True

        try:
            yield timed()
        except av.error.FFmpegError as exc:
            raise MediaError(f"{path.name}: video cannot be decoded after {counted()} frames ({describe(exc)})") from None
        if ended and counted() == 0:
            raise MediaError(f"{path.name}: no decodable video frames")
    finally:
        container.close()


def _decode_frames(path: Path, *, stream: int, every_s: float | None, max_frames: int | None,
                   width: int | None, height: int | None, force_matrix: str | None) -> Iterator[Frame]:
    """iter_frames without the cache."""
    n = 0  # frames yielded
    next_t = None
    with _decoded(path, stream, lambda: n) as decoded:
        for t, frame in decoded:
            if every_s is not None:
                if next_t is not None and t < next_t - 1e-6:
                    continue
                next_t = t + every_s
            rgb, tags = to_rgb(frame, width=width, height=height, force_matrix=force_matrix)
            yield Frame(index=n, t_s=t, rgb=rgb, keyframe=bool(frame.key_frame), tags=tags)
            n += 1
            if max_frames is not None and n >= max_frames:
                return


def iter_frames_at(path: str | Path, times_s: Iterable[float], *, stream: int = 0, width: int | None = None,
                   height: int | None = None) -> Iterator[tuple[float, Frame]]:
    """(t, the first frame presented at or after t) for each wanted time, ascending, in ONE decoding
    pass from the start; only those frames are converted to RGB (conversion is most of a decode's
    CPU, and a check that reads a few frames of a clip paid it for every frame). The frames are the
    ones `iter_frames` yields (same times, same conversion; `Frame.index` counts decoded frames).
    Stops decoding after the last wanted frame; MediaError when the file ends first or cannot be
    decoded (the same messages as iter_frames)."""
    want = sorted(set(times_s))
    if not want:
        return
    n = 0  # frames decoded
    i = 0
    with _decoded(Path(path), stream, lambda: n) as decoded:
        for t, frame in decoded:
            if t >= want[i] - 1e-6:
                rgb, tags = to_rgb(frame, width=width, height=height)
                fr = Frame(index=n, t_s=t, rgb=rgb, keyframe=bool(frame.key_frame), tags=tags)
                while i < len(want) and t >= want[i] - 1e-6:
                    yield want[i], fr
                    i += 1
                if i == len(want):
                    return
            n += 1
    raise MediaError(f"{Path(path).name}: no frame at or after {want[i]:.3f} s")


def read_frame_at(path: str | Path, t_s: float, *, stream: int = 0, width: int | None = None,
                  height: int | None = None) -> Frame:
    """The first frame presented at or after `t_s`: seeks to the keyframe before it, then decodes
    forward (so long recordings do not decode from the start). `Frame.index` counts from that seek."""
    import av

    path = Path(path)
    container = open_container(path)
    try:
        vs = video_stream(container, path, stream)
        try:
            if vs.time_base and t_s > 0:
                container.seek(int(t_s / float(vs.time_base)), stream=vs, backward=True, any_frame=False)
            for n, frame in enumerate(container.decode(vs)):
                if frame.pts is None:
                    continue
                t = float(frame.pts * frame.time_base)
                if t >= t_s - 1e-6:
                    rgb, tags = to_rgb(frame, width=width, height=height)
                    return Frame(index=n, t_s=t, rgb=rgb, keyframe=bool(frame.key_frame), tags=tags)
        except av.error.FFmpegError as exc:
            raise MediaError(f"{path.name}: video cannot be decoded near {t_s:.3f} s ({describe(exc)})") from None
    finally:
        container.close()
    raise MediaError(f"{path.name}: no frame at or after {t_s:.3f} s")
