"""The grading memo (verifiers/tasks/grading/_shared/memo.py) and the uint8 linear-Y lookup:
same values as computing afresh, writable renders never memoised, bounded in bytes."""

from __future__ import annotations

import numpy as np

from verifiers.tasks.grading._shared import memo as m
from verifiers.tasks.grading._shared.gain import linear_y


def test_linear_y_lookup_equals_the_formula() -> None:
    rgb = np.random.default_rng(1).integers(0, 256, (2, 20, 30, 3), dtype=np.uint8)
    c = rgb.astype(np.float64) / 255.0
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    assert np.array_equal(linear_y(rgb), lin @ np.array([0.2126, 0.7152, 0.0722]))


def test_memo_reuses_only_for_the_same_read_only_array_and_equal_extra() -> None:
    calls = []
    a = np.zeros((2, 4, 4), dtype=np.uint8)
    mask = np.ones((2, 4, 4), dtype=bool)

    def f() -> np.ndarray:
        calls.append(1)
        return np.ones(3)

    m.memo("t", (a,), (mask,), f)
    m.memo("t", (a,), (mask,), f)
    assert len(calls) == 2  # writable: never memoised
    a.setflags(write=False)
    m.memo("t", (a,), (mask,), f)
    m.memo("t", (a,), (mask.copy(),), f)
    assert len(calls) == 3  # equal mask bytes: reused
    m.memo("t", (a,), (~mask,), f)
    m.memo("t", (a.copy(),), (mask,), f)
    assert len(calls) == 5  # another mask, another (writable copy of the) array


def test_memo_is_bounded_in_bytes(monkeypatch) -> None:
    monkeypatch.setattr(m, "MEMO_MAX_BYTES", 10_000)
    for i in range(20):
        a = np.full(1000, i, dtype=np.uint8)
        a.setflags(write=False)
        m.memo("bound", (a,), (), lambda: np.zeros(500))
    assert m._total_bytes <= 10_000 + 5_000
