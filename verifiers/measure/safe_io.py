"""The one safe way a scorer opens what the agent left in the work dir.

Everything under the work dir is hostile until checked: the agent can make `output/list.csv` a
symlink to /etc/passwd (its lines then appear in the report), a FIFO (the scorer hangs), a link to
/dev/zero (read until MemoryError), a 2.6 MB PNG that declares 30000×30000 pixels (5.5 GB decoded),
a 1 MB gzip that inflates to 1 GiB, or JSON nested 100 000 deep (a RecursionError the report used
to call "verifier crashed"). So an agent file is only read when:

- its path is relative, stays inside the work dir, and no component of it is a symlink
  (each component is checked with lstat; the file itself is opened O_NOFOLLOW|O_NONBLOCK, so a
  FIFO never blocks the open), and it is a regular file (`S_ISREG` on the opened descriptor);
- its size is within the cap for its kind (`KIND_CAP_BYTES`);
- decompression stops at `MAX_INFLATE_BYTES`, JSON/XML nesting at `MAX_JSON_DEPTH`/`MAX_XML_DEPTH`;
- an image's width × height, read from its header (PIL, no decode), is at most `MAX_IMAGE_PIXELS`
  before OpenCV decodes it (and OpenCV's own limit, OPENCV_IO_MAX_IMAGE_PIXELS, is set to the
  same number at import: verifiers/__init__.py sets it before anything imports cv2).

A refusal is `UnsafeFile` (a MediaError, so the primitives' callers already turn it into the
agent's failure for agent files), with a one-line reason that names the file by its relative path
and never holds a byte of what a link points to.
"""

from __future__ import annotations

import os
import re
import stat
import zlib
from pathlib import Path
from typing import Any

from verifiers.measure.errors import MediaError

MiB = 1 << 20
GiB = 1 << 30
#: Largest file scored, per catalog artifact kind (what a plausible export could be, with room).
KIND_CAP_BYTES: dict[str, int] = {
    "audio": 8 * GiB, "video": 32 * GiB, "image": 256 * MiB, "text": 16 * MiB, "json": 64 * MiB,
    "csv": 16 * MiB, "project": 512 * MiB, "config": 16 * MiB, "subtitle": 16 * MiB, "edl": 16 * MiB,
    "any": 32 * GiB, "dir": 0,
}
#: 50 Mpx: 8K UHD (33 Mpx) fits; 150 MB as BGR.
MAX_IMAGE_PIXELS = 50_000_000
MAX_INFLATE_BYTES = 256 * MiB
MAX_JSON_DEPTH = 128
MAX_XML_DEPTH = 256
#: Entries looked at under a directory artifact before giving up (a tree bomb is a refusal too).
MAX_DIR_ENTRIES = 100_000
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp", ".gif", ".exr", ".ppm", ".pgm")
_GZIP_MAGIC = b"\x1f\x8b"
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)


def limit_decoders() -> None:
    """OpenCV's and PIL's own pixel limits, the same as ours. OpenCV reads its variable once,
    when cv2 is first imported: this only helps if it runs before that (verifiers/__init__)."""
    os.environ.setdefault("OPENCV_IO_MAX_IMAGE_PIXELS", str(MAX_IMAGE_PIXELS))
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - PIL is a dependency
        return
    Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS


limit_decoders()


class UnsafeFile(MediaError):
    """An agent file the scorer will not read: why, in one line, naming it by its relative path."""


# -- paths -------------------------------------------------------------------------------------


def _rel_parts(rel: str | Path) -> tuple[str, ...]:
    text = os.fspath(rel)
    if "\x00" in text:
        raise UnsafeFile(f"{text!r}: a path with a NUL byte")
    path = Path(text)
    if path.is_absolute() or ".." in path.parts:
        raise UnsafeFile(f"{text}: not a path inside the work dir")
    parts = tuple(p for p in path.parts if p not in ("", "."))
    if not parts:
        raise UnsafeFile(f"{text}: names the work dir itself, not a file in it")
    return parts


def inside(root: Path, rel: str | Path, *, allow_dir: bool = False) -> Path:
    """`root/rel` after checking every component below root with lstat: no symlinks, existing
    directories on the way, and a regular file (or a directory when `allow_dir`) at the end.
    FileNotFoundError when it does not exist; UnsafeFile when it is anything else."""
    base = Path(os.path.realpath(root))
    parts = _rel_parts(rel)
    shown = "/".join(parts)
    here = base
    for i, part in enumerate(parts):
        here = here / part
        st = os.lstat(here)  # FileNotFoundError propagates: missing, not hostile
        last = i == len(parts) - 1
        if stat.S_ISLNK(st.st_mode):
            where = "" if last else f" (its component {'/'.join(parts[:i + 1])})"
            raise UnsafeFile(f"{shown}: a symbolic link{where}; links are not followed")
        if not last and not stat.S_ISDIR(st.st_mode):
            raise UnsafeFile(f"{shown}: {'/'.join(parts[:i + 1])} is not a directory")
        if last and not (stat.S_ISREG(st.st_mode) or (allow_dir and stat.S_ISDIR(st.st_mode))):
            raise UnsafeFile(f"{shown}: {_kind_of(st.st_mode)}, not a regular file")
    return here


def _kind_of(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "a special file"


def open_regular(root: Path, rel: str | Path, kind: str = "any", max_bytes: int | None = None) -> int:
    """A read-only descriptor of the regular file `root/rel` (caller closes), checked as `inside`
    and again on the descriptor (O_NOFOLLOW | O_NONBLOCK: a swapped-in link or FIFO cannot bite)."""
    path = inside(root, rel)
    shown = "/".join(_rel_parts(rel))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == 40:  # ELOOP: became a symlink since the check
            raise UnsafeFile(f"{shown}: a symbolic link; links are not followed") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(f"{shown}: {_kind_of(st.st_mode)}, not a regular file")
        cap = cap_bytes(kind) if max_bytes is None else max_bytes
        if st.st_size > cap:
            raise UnsafeFile(f"{shown}: {st.st_size} bytes, over the {cap} byte limit for a {kind} file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def cap_bytes(kind: str) -> int:
    return KIND_CAP_BYTES.get(kind, KIND_CAP_BYTES["any"])


def read_bytes(root: Path, rel: str | Path, kind: str = "any", max_bytes: int | None = None) -> bytes:
    fd = open_regular(root, rel, kind, max_bytes)
    try:
        cap = cap_bytes(kind) if max_bytes is None else max_bytes
        chunks, total = [], 0
        while True:
            block = os.read(fd, 1 << 20)
            if not block:
                break
            total += len(block)
            if total > cap:  # grew while we read
                raise UnsafeFile(f"{'/'.join(_rel_parts(rel))}: grew past the {cap} byte limit while being read")
            chunks.append(block)
        return b"".join(chunks)
    finally:
        os.close(fd)


# -- decoders with caps ------------------------------------------------------------------------


def is_gzip(data: bytes) -> bool:
    return data[:2] == _GZIP_MAGIC


def gunzip(data: bytes, what: str, max_bytes: int = MAX_INFLATE_BYTES) -> bytes:
    """Inflate a gzip stream, refusing one that would exceed `max_bytes`."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, max_bytes + 1)
    except zlib.error as exc:
        raise UnsafeFile(f"{what}: not a readable gzip stream ({exc})") from None
    if len(out) > max_bytes or inflater.unconsumed_tail:
        raise UnsafeFile(f"{what}: gzip inflates past {max_bytes} bytes (a decompression bomb?)")
    return out


def gzip_inflated_size(fd: int, max_bytes: int = MAX_INFLATE_BYTES) -> int | None:
    """How many bytes the gzip file on `fd` inflates to, counting without keeping them; None when
    past `max_bytes` (stops there). Reads from offset 0 with pread; small memory whatever the ratio."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    total, offset = 0, 0
    while True:
        block = os.pread(fd, 1 << 16, offset)
        if not block:
            return total
        offset += len(block)
        data = block
        while data:
            try:
                out = inflater.decompress(data, 1 << 20)
            except zlib.error:
                return total  # not our business here: the reader says "not gzip"
            total += len(out)
            if total > max_bytes:
                return None
            data = inflater.unconsumed_tail
            if inflater.eof:
                return total


def json_depth(data: bytes) -> int:
    """Deepest [ / { nesting of a JSON text (strings skipped), at C speed (regex + numpy)."""
    import numpy as np

    stripped = np.frombuffer(_JSON_STRING.sub(b"", data), dtype=np.uint8)
    deepest = level = 0
    for pos in range(0, stripped.size, 1 << 22):  # 4 MiB at a time: bounded scratch memory
        arr = stripped[pos:pos + (1 << 22)]
        step = ((arr == 0x5B) | (arr == 0x7B)).astype(np.int32) - ((arr == 0x5D) | (arr == 0x7D))
        run = np.cumsum(step) + level
        deepest = max(deepest, int(run.max(initial=level)))
        level = int(run[-1])
    return deepest


def load_json(data: bytes | str, what: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """json.loads with a depth cap; UnsafeFile (not RecursionError) for a text nested too deep,
    MediaError for one that is not JSON. The message never quotes the content."""
    import json

    raw = data.encode("utf-8") if isinstance(data, str) else data
    depth = json_depth(raw)
    if depth > max_depth:
        raise UnsafeFile(f"{what}: JSON nested {depth} levels deep (limit {max_depth})")
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise MediaError(f"{what}: not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise MediaError(f"{what}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise UnsafeFile(f"{what}: JSON nested too deeply to parse") from None


def xml_depth_ok(data: bytes | str, what: str, max_depth: int = MAX_XML_DEPTH) -> None:
    """Raise UnsafeFile when the XML nests deeper than `max_depth` (expat pull parse, no tree)."""
    import xml.etree.ElementTree as ET

    parser = ET.XMLPullParser(events=("start", "end"))
    depth = 0
    raw = data.encode("utf-8") if isinstance(data, str) else data
    for pos in range(0, len(raw), 1 << 16):
        try:
            parser.feed(raw[pos:pos + (1 << 16)])
            for event, _el in parser.read_events():
                depth += 1 if event == "start" else -1
                if depth > max_depth:
                    raise UnsafeFile(f"{what}: XML nested deeper than {max_depth} levels")
        except ET.ParseError:
            return  # not well-formed: the real parser reports that in its own words


def parse_xml(data: bytes | str, what: str, max_depth: int = MAX_XML_DEPTH):
    """ElementTree root of `data` after the depth check; MediaError for XML that is not well-formed."""
    import xml.etree.ElementTree as ET

    xml_depth_ok(data, what, max_depth)
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise MediaError(f"{what}: not well-formed XML ({exc})") from None


# -- images ------------------------------------------------------------------------------------


def image_size(path: Path, what: str) -> tuple[int, int]:
    """(width, height) from the header only (PIL opens lazily and decodes nothing)."""
    import warnings

    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():  # over our limit is our refusal (check_image), not a warning
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(path) as img:
                return int(img.width), int(img.height)
    except Image.DecompressionBombError as exc:
        raise UnsafeFile(f"{what}: image header declares too many pixels ({exc})") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise MediaError(f"{what}: not a readable image ({type(exc).__name__})") from None


def check_image(path: Path, what: str, max_pixels: int = MAX_IMAGE_PIXELS) -> tuple[int, int]:
    width, height = image_size(path, what)
    if width * height > max_pixels:
        raise UnsafeFile(f"{what}: image of {width}×{height} pixels, over the {max_pixels} pixel limit")
    return width, height


def read_image(root: Path, rel: str | Path, flags: int | None = None, kind: str = "image"):
    """cv2.imread of an agent image after the path, size and header checks; MediaError if OpenCV
    cannot decode it (imread returns None)."""
    import cv2

    what = "/".join(_rel_parts(rel))
    fd = open_regular(root, rel, kind)
    os.close(fd)
    path = inside(root, rel)
    check_image(path, what)
    img = cv2.imread(str(path), cv2.IMREAD_COLOR if flags is None else flags)
    if img is None:
        raise MediaError(f"{what}: OpenCV cannot decode this image")
    return img


# -- the scorer's pre-flight over declared files -------------------------------------------------


def inspect(root: Path, rel: str, kind: str = "any") -> str | None:
    """Why a declared artifact or input must not be read at all, or None (also when absent).

    Run before any scorer code: links, special files, oversize files, decompression bombs, image
    headers beyond the pixel limit, JSON nested beyond the depth limit, and the same for every
    entry of a directory artifact."""
    try:
        path = inside(root, rel, allow_dir=True)
    except FileNotFoundError:
        return None
    except UnsafeFile as exc:
        return str(exc)
    if path.is_dir():
        return _inspect_dir(root, rel)
    return _inspect_file(root, rel, kind)


def _inspect_dir(root: Path, rel: str) -> str | None:
    base = inside(root, rel, allow_dir=True)
    seen = 0
    for dirpath, dirnames, filenames in os.walk(base):
        for name in dirnames + filenames:
            seen += 1
            if seen > MAX_DIR_ENTRIES:
                return f"{rel.rstrip('/')}: more than {MAX_DIR_ENTRIES} entries"
            sub = os.path.relpath(os.path.join(dirpath, name), os.path.realpath(root))
            try:
                inside(root, sub, allow_dir=True)
            except FileNotFoundError:
                continue
            except UnsafeFile as exc:
                return str(exc)
            if name in filenames:
                why = _inspect_file(root, sub, _kind_by_suffix(name))
                if why:
                    return why
    return None


def _kind_by_suffix(name: str) -> str:
    low = name.lower()
    if low.endswith(IMAGE_SUFFIXES):
        return "image"
    if low.endswith(".json"):
        return "json"
    return "any"


def _inspect_file(root: Path, rel: str, kind: str) -> str | None:
    what = rel
    try:
        fd = open_regular(root, rel, kind)
    except UnsafeFile as exc:
        return str(exc)
    except OSError as exc:
        return f"{what}: cannot be opened ({exc.strerror})"
    try:
        head = os.pread(fd, 2, 0)
        if kind not in ("audio", "video", "image") and is_gzip(head):
            if gzip_inflated_size(fd) is None:
                return f"{what}: gzip inflates past {MAX_INFLATE_BYTES} bytes (a decompression bomb?)"
        if kind == "image" or rel.lower().endswith(IMAGE_SUFFIXES):
            try:
                check_image(Path(os.path.realpath(root)) / rel, what)
            except UnsafeFile as exc:
                return str(exc)
            except MediaError:
                pass  # not an image after all: the scorer says so in its own words
        if kind == "json" or rel.lower().endswith(".json"):
            size = os.fstat(fd).st_size
            data = os.pread(fd, size, 0)
            depth = json_depth(data)
            if depth > MAX_JSON_DEPTH:
                return f"{what}: JSON nested {depth} levels deep (limit {MAX_JSON_DEPTH})"
    finally:
        os.close(fd)
    return None
