"""A per-process, content-keyed memo of measurements, bounded in bytes, shared by all families.

Why: a self-test scores the oracle, the do-nothing case, every mutant and every export/baseline case
of one instance; most of them leave most files (the inputs, the GT, often the render itself)
byte-identical, and the scorer decodes, resamples and scans those same bytes again each time. Keys
here are the content itself — a SHA-256 of the file's bytes or of the arrays' dtype, shape and
bytes — plus every parameter of the computation, so a hit is the same computation on the same input
and returns the same value. A key made from a path (or an id) would be unsound: a mutant rewrites a
file at the same path. Values that are arrays are made read-only, so a caller cannot change a value
another caller will get; an LRU drops the oldest entries past MEMO_MAX_BYTES.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from verifiers.measure.membounds import bound_bytes

T = TypeVar("T")
#: memory bound of the memo. A 10 s 48 kHz stereo render in float64 is 7.7 MB; sound T16's window
#: sides (75 varispeed copies of 3 sources, ≈ 5 MB each) are ≈ 400 MB and are read in a cycle, which
#: an LRU smaller than the cycle would miss every time
MEMO_MAX_BYTES = bound_bytes("TALLY_MEMO_MB")   # MiB from the environment (membounds.py)
_ENTRIES: OrderedDict[bytes, tuple[Any, int]] = OrderedDict()
_total_bytes = 0
#: TALLY_NO_MEMO=1 computes everything afresh (to prove the memo changes no number)
_DISABLED = os.environ.get("TALLY_NO_MEMO", "") not in ("", "0")


def _update(h: Any, part: Any) -> None:
    if isinstance(part, np.ndarray):
        a = np.ascontiguousarray(part)
        h.update(f"a{a.dtype.str}{a.shape}".encode())
        h.update(memoryview(a).cast("B") if a.size else b"")
    elif isinstance(part, bytes | bytearray | memoryview):
        h.update(b"b%d:" % len(part))
        h.update(part)
    elif isinstance(part, tuple | list):
        h.update(b"(%d" % len(part))
        for p in part:
            _update(h, p)
        h.update(b")")
    elif isinstance(part, np.generic):  # a numpy scalar keys as the Python number it holds
        _update(h, part.item())
    elif part is None or isinstance(part, bool | int | float | str):
        h.update(f"{type(part).__name__}:{part!r};".encode())
    else:
        raise TypeError(f"memo key part of type {type(part).__name__} has no content key")


def content_key(*parts: Any) -> bytes:
    """SHA-256 over arrays (dtype, shape, bytes), bytes, strings and numbers, in order."""
    h = hashlib.sha256()
    for p in parts:
        _update(h, p)
    return h.digest()


def file_key(path: str | Path) -> bytes:
    """SHA-256 of a file's bytes (a file that cannot be read raises, as the decoder would)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.digest()


def _nbytes(value: Any) -> int:
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, tuple | list):
        return sum(_nbytes(v) for v in value) + 64
    if isinstance(value, dict):
        return sum(_nbytes(v) for v in value.values()) + 64
    return int(getattr(value, "nbytes", 0)) + 64


def _freeze(value: Any) -> None:
    if isinstance(value, np.ndarray):
        value.setflags(write=False)
    elif isinstance(value, tuple | list):
        for v in value:
            _freeze(v)


def memo(name: str, key: tuple, compute: Callable[[], T]) -> T:
    """compute(), or its earlier value for the same `name` and content `key` (see content_key).

    compute must be a pure function of what `key` holds: that is the caller's proof obligation."""
    global _total_bytes
    if _DISABLED:
        return compute()
    k = content_key(name, key)
    hit = _ENTRIES.get(k)
    if hit is not None:
        _ENTRIES.move_to_end(k)
        return hit[0]
    value = compute()
    _freeze(value)
    size = _nbytes(value)
    _ENTRIES[k] = (value, size)
    _total_bytes += size
    while _total_bytes > MEMO_MAX_BYTES and len(_ENTRIES) > 1:
        _, (_, old) = _ENTRIES.popitem(last=False)
        _total_bytes -= old
    return value


def clear() -> None:
    """Forget everything (tests)."""
    global _total_bytes
    _ENTRIES.clear()
    _total_bytes = 0
