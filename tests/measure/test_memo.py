"""The content-keyed measurement memo (verifiers/measure/memo.py): a hit needs equal content and
equal parameters, values cannot be changed by a caller, the store is bounded in bytes, and memoised
decodes/scans equal fresh ones."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from verifiers.measure import memo as m
from verifiers.measure.audio_io import load_audio, resample
from verifiers.measure.identify import match_at


def test_hit_only_for_equal_content_and_parameters() -> None:
    calls: list[int] = []

    def f() -> np.ndarray:
        calls.append(1)
        return np.arange(4.0)

    a = np.linspace(0, 1, 100)
    m.memo("t-hit", (a, 3), f)
    m.memo("t-hit", (a.copy(), 3), f)  # another array, same content: a hit
    assert len(calls) == 1
    m.memo("t-hit", (a, 4), f)  # another parameter
    b = a.copy()
    b[50] += 1e-12  # one sample differs in its last bits
    m.memo("t-hit", (b, 3), f)
    m.memo("t-hit", (a.astype(np.float32), 3), f)  # same values, another dtype
    m.memo("t-hit", (a.reshape(10, 10), 3), f)  # same bytes, another shape
    m.memo("other", (a, 3), f)  # another computation
    assert len(calls) == 6
    m.memo("t-hit", (a, np.int64(3)), f)  # a numpy integer keys as the number it holds
    assert len(calls) == 6


def test_values_are_read_only_and_bounded(monkeypatch) -> None:
    v = m.memo("t-ro", (np.zeros(3),), lambda: (np.ones(3), 2.0))
    with pytest.raises(ValueError):
        v[0][0] = 5.0
    monkeypatch.setattr(m, "MEMO_MAX_BYTES", 10_000)
    for i in range(50):
        m.memo("t-bound", (i,), lambda: np.zeros(500))
    assert m._total_bytes <= 10_000 + 4_000 + 64


def test_file_decode_is_keyed_on_bytes_not_path(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    x = rng.uniform(-0.5, 0.5, (4800, 2))
    p = tmp_path / "a" / "x.wav"
    p.parent.mkdir()
    sf.write(p, x, 48000, subtype="FLOAT")
    first = load_audio(p, sample_rate_hz=44100)
    q = tmp_path / "b" / "x.wav"
    q.parent.mkdir()
    q.write_bytes(p.read_bytes())
    second = load_audio(q, sample_rate_hz=44100)
    assert second.info.path == str(q) and first.info.path == str(p)
    assert np.array_equal(first.samples, second.samples)
    sf.write(p, x * 0.5, 48000, subtype="FLOAT")  # same path, new bytes: decoded afresh
    third = load_audio(p, sample_rate_hz=44100)
    assert np.allclose(third.samples, first.samples * 0.5, atol=1e-9)  # resampling is linear
    assert np.array_equal(first.samples, resample(x.astype(np.float32).astype(np.float64), 48000, 44100))  # FLOAT WAV


def test_memoised_scans_equal_fresh_ones(monkeypatch) -> None:
    rng = np.random.default_rng(5)
    mix = rng.normal(0, 0.1, 48000)
    lib = {"a": mix[12000:20000] * 0.5, "b": rng.normal(0, 0.1, 8000)}
    first = match_at(mix, 48000, lib, 0.25, search_s=0.05, length_s=0.1)
    again = match_at(mix.copy(), 48000, {k: v.copy() for k, v in lib.items()}, 0.25, search_s=0.05, length_s=0.1)
    monkeypatch.setattr(m, "_DISABLED", True)
    fresh = match_at(mix, 48000, lib, 0.25, search_s=0.05, length_s=0.1)
    assert first == again == fresh
    assert first[0].name == "a" and abs(first[0].offset_s - 0.25) < 1e-9
