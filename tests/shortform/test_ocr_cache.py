"""verifiers.measure.ocr.read_text_cached: one process-wide OCR cache, keyed by frame content, bounded.

The engine is replaced by a counting fake, so these tests say what the cache does, not what OCR reads.
"""

from __future__ import annotations

import numpy as np
import pytest

from verifiers.measure import ocr


@pytest.fixture
def fake_reader(monkeypatch):
    calls: list[bytes] = []

    def read_text(rgb, *, min_confidence=0.5, det_max_short_px=None):
        calls.append(rgb.tobytes())
        return [ocr.TextBox(f"v{int(rgb[0, 0, 0])}", 0, 0, 1, 1, 0.9)]

    monkeypatch.setattr(ocr, "read_text", read_text)
    ocr.clear_text_cache()
    yield calls
    ocr.clear_text_cache()


def _frame(v: int) -> np.ndarray:
    return np.full((4, 6, 3), v, np.uint8)


def test_same_content_is_read_once_even_from_another_array(fake_reader):
    a, b = _frame(7), _frame(7).copy()
    assert ocr.read_text_cached(a)[0].text == "v7"
    assert ocr.read_text_cached(b)[0].text == "v7"
    assert len(fake_reader) == 1


def test_different_content_or_options_are_read_again(fake_reader):
    ocr.read_text_cached(_frame(1))
    ocr.read_text_cached(_frame(2))
    ocr.read_text_cached(_frame(1), min_confidence=0.8)
    ocr.read_text_cached(np.full((6, 4, 3), 1, np.uint8))  # same bytes, other shape
    assert len(fake_reader) == 4


def test_bounded_least_recently_used_dropped(fake_reader, monkeypatch):
    monkeypatch.setattr(ocr, "CACHE_MAX_FRAMES", 2)
    ocr.read_text_cached(_frame(1))
    ocr.read_text_cached(_frame(2))
    ocr.read_text_cached(_frame(1))  # 1 is now the most recent
    ocr.read_text_cached(_frame(3))  # drops 2
    assert len(ocr._cache) == 2
    ocr.read_text_cached(_frame(1))
    assert len(fake_reader) == 3
    ocr.read_text_cached(_frame(2))
    assert len(fake_reader) == 4


def test_callers_get_their_own_list(fake_reader):
    got = ocr.read_text_cached(_frame(5))
    got.clear()
    assert ocr.read_text_cached(_frame(5))[0].text == "v5"
