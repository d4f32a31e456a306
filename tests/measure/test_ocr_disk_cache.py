"""verifiers.measure.ocr's folder of readings (TALLY_OCR_CACHE_DIR): a frame read by one process is
not read again by another; a stored reading equals a fresh one exactly; nothing is written without
the variable. The engine is replaced by a counting fake except in the exact round-trip test."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import SESSION_FOLDERS
from verifiers.measure import ocr
from verifiers.synth import INSTANCE_CACHE_ENV


@pytest.fixture
def engine_calls(monkeypatch):
    calls: list[tuple] = []

    def fake(rgb, min_confidence, det_max_short_px):
        calls.append((rgb.tobytes(), min_confidence, det_max_short_px))
        return [ocr.TextBox(f"v{int(rgb[0, 0, 0])}é", 0.1, 2 / 3, 1e-7, 5.0, 0.91234567891)]

    monkeypatch.setattr(ocr, "_read_text", fake)
    return calls


def _frame(v: int) -> np.ndarray:
    return np.full((4, 6, 3), v, np.uint8)


def test_a_stored_reading_is_taken_and_equal(engine_calls, tmp_path, monkeypatch):
    monkeypatch.setenv(ocr.OCR_CACHE_DIR_ENV, str(tmp_path))
    first = ocr.read_text(_frame(7))
    assert len(engine_calls) == 1 and len(list(tmp_path.glob("*.json"))) == 1
    again = ocr.read_text(_frame(7).copy())  # another array, same content: what another process meets
    assert len(engine_calls) == 1
    assert again == first  # floats round-trip exactly, text as it was
    assert not list(tmp_path.glob(".*.tmp"))


def test_other_content_or_options_are_read_again(engine_calls, tmp_path, monkeypatch):
    monkeypatch.setenv(ocr.OCR_CACHE_DIR_ENV, str(tmp_path))
    ocr.read_text(_frame(1))
    ocr.read_text(_frame(2))
    ocr.read_text(_frame(1), min_confidence=0.6)
    ocr.read_text(_frame(1), det_max_short_px=None)
    ocr.read_text(np.full((6, 4, 3), 1, np.uint8))  # same bytes, other shape
    assert len(engine_calls) == 5 and len(list(tmp_path.glob("*.json"))) == 5


def test_an_unreadable_file_is_a_miss_and_is_replaced(engine_calls, tmp_path, monkeypatch):
    monkeypatch.setenv(ocr.OCR_CACHE_DIR_ENV, str(tmp_path))
    ocr.read_text(_frame(3))
    (path,) = tmp_path.glob("*.json")
    path.write_text("[[", encoding="utf-8")
    assert ocr.read_text(_frame(3))[0].text == "v3é"
    assert len(engine_calls) == 2
    assert ocr.read_text(_frame(3))[0].text == "v3é" and len(engine_calls) == 2


def test_a_folder_that_cannot_be_used_only_costs_the_reading(engine_calls, tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    monkeypatch.setenv(ocr.OCR_CACHE_DIR_ENV, str(blocker / "ocr"))  # under a file: no folder, no write
    assert ocr.read_text(_frame(5))[0].text == "v5é"
    assert ocr.read_text(_frame(5))[0].text == "v5é"
    assert len(engine_calls) == 2


def test_nothing_is_written_without_the_variable(engine_calls, tmp_path, monkeypatch):
    monkeypatch.delenv(ocr.OCR_CACHE_DIR_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    ocr.read_text(_frame(4))
    ocr.read_text(_frame(4))
    assert len(engine_calls) == 2 and not list(tmp_path.rglob("*"))


def test_the_real_engine_reading_round_trips_exactly(tmp_path, monkeypatch):
    from verifiers.synthkit.captions import LATIN_FONT, draw_caption

    frame = draw_caption(np.full((180, 320, 3), 90, np.uint8), ["Stir it gently"], font=LATIN_FONT, font_px=24,
                         baseline_y_px=150)
    monkeypatch.delenv(ocr.OCR_CACHE_DIR_ENV, raising=False)
    fresh = ocr.read_text(frame)
    assert fresh, "the engine read nothing: the round trip below would prove little"
    monkeypatch.setenv(ocr.OCR_CACHE_DIR_ENV, str(tmp_path))
    ocr.read_text(frame)  # computed and stored
    monkeypatch.setattr(ocr, "_read_text", lambda *a: pytest.fail("read again instead of taken from disk"))
    assert ocr.read_text(frame) == fresh


def test_the_session_sets_both_folders():
    assert set(SESSION_FOLDERS) == {INSTANCE_CACHE_ENV, ocr.OCR_CACHE_DIR_ENV}
