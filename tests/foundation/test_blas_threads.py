"""verifiers/_blas.py: importing verifiers leaves OpenBLAS on one thread (spinning BLAS threads cost
tens of times the CPU of the small products scorers make), whether numpy was imported before or
after, and a user's OPENBLAS_NUM_THREADS is left alone."""

from __future__ import annotations

import os
import subprocess
import sys

_PROBE = """
import ctypes, sys
{first}
import numpy
from verifiers._blas import _loaded_openblas
libs = [ctypes.CDLL(p) for p in _loaded_openblas()]
counts = [lib.scipy_openblas_get_num_threads64_() for lib in libs if hasattr(lib, "scipy_openblas_get_num_threads64_")]
print(counts[0] if counts else "no OpenBLAS get_num_threads symbol")
"""


def _threads(first: str, env_threads: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if env_threads is not None:
        env["OPENBLAS_NUM_THREADS"] = env_threads
    out = subprocess.run([sys.executable, "-c", _PROBE.format(first=first)], env=env, capture_output=True,
                         text=True, timeout=120, check=True)
    return out.stdout.strip()


def test_one_blas_thread_whatever_the_import_order() -> None:
    assert _threads("import numpy\nimport verifiers", None) == "1"  # setter on the loaded library
    assert _threads("import verifiers", None) == "1"  # env read when numpy loads it


def test_the_users_setting_wins() -> None:
    got = _threads("import verifiers", "2")
    assert got == "2"
