"""Memory bounds of the per-process caches, settable from the environment.

Why: each scoring process keeps a content-keyed memo (1 GiB), grading's stack memo (512 MiB) and a
decoded-frame cache (384 MiB); with two pytest workers or a sweep of many workers that is several
GB. The defaults suit one machine with 24 GB; a sweep with many workers lowers them here. A value
that is not a whole number of MiB stops the import with a message naming the variable, rather than
silently falling back to a default the operator meant to change.
"""

from __future__ import annotations

import os

MIB = 2**20

#: variable → (default MiB, what it bounds); the README's "Environment variables" lists the same
BOUNDS: dict[str, tuple[int, str]] = {
    "TALLY_MEMO_MB": (1024, "content-keyed measurement memo (verifiers/measure/memo.py)"),
    "TALLY_GRADING_MEMO_MB": (512, "grading's memo of GT-stack statistics (verifiers/tasks/grading/_shared/memo.py)"),
    "TALLY_FRAME_CACHE_MB": (384, "decoded-frame cache (verifiers/measure/frames.py)"),
}


class BadBound(ValueError):
    """An environment variable holding a cache bound is not a whole number of MiB ≥ 0."""


def bound_bytes(var: str, environ: os._Environ[str] | dict[str, str] | None = None) -> int:
    """The bound in bytes: $var in MiB (a whole number ≥ 0; 0 keeps only the newest entry), else
    its default from BOUNDS."""
    default_mib, what = BOUNDS[var]
    raw = (os.environ if environ is None else environ).get(var, "").strip()
    if not raw:
        return default_mib * MIB
    if not raw.isdigit():
        raise BadBound(f"{var}={raw!r}: expected a whole number of MiB >= 0 for the {what} "
                       f"(default {default_mib})")
    return int(raw) * MIB
