"""The caches' memory bounds come from the environment, with documented defaults and clear errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from verifiers.measure.membounds import BOUNDS, MIB, BadBound, bound_bytes

ROOT = Path(__file__).resolve().parents[2]


def test_defaults_when_unset_or_empty() -> None:
    assert bound_bytes("TALLY_MEMO_MB", {}) == 1024 * MIB
    assert bound_bytes("TALLY_GRADING_MEMO_MB", {"TALLY_GRADING_MEMO_MB": ""}) == 512 * MIB
    assert bound_bytes("TALLY_FRAME_CACHE_MB", {}) == 384 * MIB


def test_a_value_in_mib() -> None:
    assert bound_bytes("TALLY_MEMO_MB", {"TALLY_MEMO_MB": "256"}) == 256 * MIB
    assert bound_bytes("TALLY_FRAME_CACHE_MB", {"TALLY_FRAME_CACHE_MB": " 0 "}) == 0


@pytest.mark.parametrize("bad", ["1G", "-5", "12.5", "lots", "0x10"])
def test_a_bad_value_names_the_variable(bad: str) -> None:
    with pytest.raises(BadBound, match=r"TALLY_MEMO_MB=.*whole number of MiB"):
        bound_bytes("TALLY_MEMO_MB", {"TALLY_MEMO_MB": bad})


def test_the_caches_read_their_variables_at_import() -> None:
    """A fresh interpreter with each variable set sees it in the cache module's bound; a bad one
    stops the import with the variable's name (not a silent default)."""
    code = ("from verifiers.measure import memo, frames\n"
            "from verifiers.tasks.grading._shared import memo as g\n"
            "print(memo.MEMO_MAX_BYTES, g.MEMO_MAX_BYTES, frames.FRAME_CACHE_MAX_BYTES)")
    env = {**os.environ, "TALLY_MEMO_MB": "3", "TALLY_GRADING_MEMO_MB": "2", "TALLY_FRAME_CACHE_MB": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(3 * MIB), str(2 * MIB), str(1 * MIB)]
    bad = subprocess.run([sys.executable, "-c", code], env={**env, "TALLY_FRAME_CACHE_MB": "384MB"}, cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "TALLY_FRAME_CACHE_MB='384MB'" in bad.stderr


def test_readme_documents_every_bound() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for var, (default_mib, _what) in BOUNDS.items():
        assert f"`{var}`" in readme and str(default_mib) in readme, var
