"""One BLAS thread per process, unless the user's environment says otherwise.

Why: scorers multiply small matrices (pixels × 3 colour matrices, frames × frames identity
correlations). OpenBLAS splits each over every core and its idle threads spin-wait: measured on
this 2-core machine under load, 5 products of (48 × 36864) · (36864 × 48) cost 1.0 CPU-s threaded
and 0.025 CPU-s on one thread; under pytest -n 2 or the daemon's parallel scoring, threads only
fight each other. One thread computes every product in the same order (OpenBLAS partitions the
output, not the summed dimension), so results do not change.

OPENBLAS_NUM_THREADS is read when a library loads; for copies already loaded (numpy imported
before verifiers) the library's own setter is called.
"""

from __future__ import annotations

import ctypes
import os
import sys

_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads64_",
            "openblas_set_num_threads")


def _loaded_openblas() -> list[str]:
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if line.strip()}
        return sorted(p for p in paths if "openblas" in p.rsplit("/", 1)[-1] and ".so" in p)
    except OSError:
        return []


def single_blas_thread() -> None:
    """Ask OpenBLAS for one thread (env for libraries not loaded yet, setter for loaded ones)."""
    if "OPENBLAS_NUM_THREADS" in os.environ:
        return  # the user's choice
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    if "numpy" not in sys.modules and "scipy" not in sys.modules:
        return
    for path in _loaded_openblas():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _SETTERS:
            fn = getattr(lib, name, None)
            if fn is not None:
                fn(ctypes.c_int(1))
                break
