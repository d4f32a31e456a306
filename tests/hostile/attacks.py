"""Builders of the hostile files of issue 20 (small on disk, huge or endless when read)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path


def gzip_bomb(path: Path, inflated_bytes: int = 1 << 30) -> int:
    """A gzip file of zeros inflating to `inflated_bytes` (1 GiB → about 1 MB on disk)."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(16 << 20)
    with open(path, "wb") as fh:
        for _ in range(inflated_bytes // len(block)):
            fh.write(comp.compress(block))
        fh.write(comp.flush())
    return path.stat().st_size


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def huge_png(path: Path, width_px: int = 30000, height_px: int = 30000) -> int:
    """A valid 1-bit greyscale PNG of width×height pixels, all black: ~110 KB on disk per 900 Mpx."""
    row = b"\x00" + bytes((width_px + 7) // 8)
    comp = zlib.compressobj(9)
    parts = []
    rows_per_block = max(1, (8 << 20) // len(row))
    block = row * rows_per_block
    done = 0
    while done < height_px:
        n = min(rows_per_block, height_px - done)
        parts.append(comp.compress(block if n == rows_per_block else row * n))
        done += n
    parts.append(comp.flush())
    ihdr = struct.pack(">IIBBBBB", width_px, height_px, 1, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", b"".join(parts))
                     + _chunk(b"IEND", b""))
    return path.stat().st_size


def deep_json(path: Path, depth: int = 100_000) -> None:
    path.write_text("[" * depth + "]" * depth, encoding="utf-8")
