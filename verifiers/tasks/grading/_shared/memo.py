"""A per-process memo of what is computed from read-only GT stacks, bounded in bytes.

Why: one self-test scores the oracle, the do-nothing case, every mutant and every export/baseline
case against the same GT source and the same export floors (shot.py decodes each once per process
and marks the stack read-only). Statistics of those stacks alone — the source's linear-light Y, its
high-passed structure, the export floor's ΔE2000 over a mask — are the same in every scoring; they
are computed once. Keys are the arrays themselves (held, so their ids cannot be reused; read-only,
so their contents cannot change) plus the bytes of any other input (a mask); an LRU drops the oldest
entries past MEMO_MAX_BYTES.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from verifiers.measure.membounds import bound_bytes

T = TypeVar("T")
#: memory bound of the memo: values and the arrays they are keyed on (a 2 s 256x144 shot's Lab is 10 MB)
MEMO_MAX_BYTES = bound_bytes("TALLY_GRADING_MEMO_MB")   # MiB from the environment (membounds.py)
_ENTRIES: OrderedDict[tuple, tuple[tuple[np.ndarray, ...], Any, int]] = OrderedDict()
_total_bytes = 0


def memo(name: str, arrays: tuple[np.ndarray, ...], extra: tuple[np.ndarray, ...], compute: Callable[[], T]) -> T:
    """compute(), or its earlier value for the same read-only `arrays` and equal `extra` arrays.
    Writable `arrays` (a render) are never memoised."""
    global _total_bytes
    if not all(isinstance(a, np.ndarray) and not a.flags.writeable for a in arrays):
        return compute()
    h = hashlib.sha1()
    for e in extra:
        e = np.ascontiguousarray(e)
        h.update(f"{e.dtype}{e.shape}".encode())
        h.update(e.tobytes())
    key = (name, tuple(id(a) for a in arrays), h.digest())
    hit = _ENTRIES.get(key)
    if hit is not None and all(x is y for x, y in zip(hit[0], arrays, strict=True)):
        _ENTRIES.move_to_end(key)
        return hit[1]
    value = compute()
    if isinstance(value, np.ndarray):
        value.setflags(write=False)
    size = int(getattr(value, "nbytes", 0)) + sum(a.nbytes for a in arrays)
    if hit is not None:
        _total_bytes -= hit[2]
    _ENTRIES[key] = (arrays, value, size)
    _total_bytes += size
    while _total_bytes > MEMO_MAX_BYTES and len(_ENTRIES) > 1:
        _, (_, _, old) = _ENTRIES.popitem(last=False)
        _total_bytes -= old
    return value
