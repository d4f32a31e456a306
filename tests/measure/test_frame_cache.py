"""verifiers.measure.frames.iter_frames remembers finished decodes by file CONTENT, bounded.

A content-keyed memo is sound where a path-keyed one is not: the same bytes under another path
reuse the decode, other bytes under the same path are decoded again. Callers own their arrays.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from verifiers.measure import frames
from verifiers.synthkit.shortform_video import write_video


@pytest.fixture
def decodes(monkeypatch):
    calls: list[str] = []
    real = frames._decode_frames

    def counting(path, **kw):
        calls.append(Path(path).name)
        return real(path, **kw)

    monkeypatch.setattr(frames, "_decode_frames", counting)
    frames.clear_frame_cache()
    yield calls
    frames.clear_frame_cache()


def _clip(path: Path, level: int) -> Path:
    write_video(path, [np.full((64, 96, 3), level + 4 * i, np.uint8) for i in range(6)], fps=12)
    return path


def test_same_bytes_under_another_path_decode_once(decodes, tmp_path):
    a = _clip(tmp_path / "a.mp4", 60)
    b = tmp_path / "copy" / "b.mp4"
    b.parent.mkdir()
    shutil.copy(a, b)
    first = [f.rgb for f in frames.iter_frames(a)]
    again = [f.rgb for f in frames.iter_frames(b)]
    assert decodes == ["a.mp4"]
    assert len(first) == len(again) == 6
    assert all(np.array_equal(x, y) for x, y in zip(first, again, strict=True))


def test_other_bytes_or_options_decode_again(decodes, tmp_path):
    a = _clip(tmp_path / "a.mp4", 60)
    list(frames.iter_frames(a))
    list(frames.iter_frames(a, width=48))  # another size: another decode
    _clip(a, 120)  # new content, same path
    got = [f.rgb for f in frames.iter_frames(a)]
    assert decodes == ["a.mp4"] * 3
    assert abs(float(got[0].mean()) - 120) < 8  # the new clip's first frame (x264 round trip: a few codes)


def test_writing_into_a_returned_frame_changes_nothing_remembered(decodes, tmp_path):
    a = _clip(tmp_path / "a.mp4", 60)
    first = next(iter(list(frames.iter_frames(a))))
    keep = first.rgb.copy()
    first.rgb[:] = 0
    hit = next(iter(frames.iter_frames(a)))
    hit.rgb[:] = 255
    assert np.array_equal(next(iter(frames.iter_frames(a))).rgb, keep)
    assert decodes == ["a.mp4"]


def test_abandoned_decode_is_not_remembered_and_cache_is_bounded(decodes, tmp_path, monkeypatch):
    a = _clip(tmp_path / "a.mp4", 60)
    next(iter(frames.iter_frames(a)))  # stopped after one frame: not a full decode
    list(frames.iter_frames(a))
    assert decodes == ["a.mp4"] * 2
    one_decode_bytes = frames._frame_cache_bytes
    monkeypatch.setattr(frames, "FRAME_CACHE_MAX_BYTES", one_decode_bytes)
    list(frames.iter_frames(a, width=48))  # evicts the full-size decode
    assert frames._frame_cache_bytes <= one_decode_bytes
    list(frames.iter_frames(a))
    assert decodes == ["a.mp4"] * 4


def test_frames_at_are_the_frames_iter_frames_yields(tmp_path):
    """iter_frames_at converts only the wanted frames: the same frames (time, pixels, index) as a
    full decode picks, first at or after each time; past the end is a MediaError."""
    from verifiers.measure.errors import MediaError

    a = _clip(tmp_path / "a.mp4", 60)
    every = list(frames._decode_frames(a, stream=0, every_s=None, max_frames=None, width=None, height=None,
                                       force_matrix=None))
    want = [0.0, 0.01, 1 / 12, 0.2, 0.2, 5 / 12]
    got = list(frames.iter_frames_at(a, want))
    assert [t for t, _ in got] == sorted(set(want))
    for t, fr in got:
        ref = next(f for f in every if f.t_s >= t - 1e-6)
        assert (fr.t_s, fr.index) == (ref.t_s, ref.index) and np.array_equal(fr.rgb, ref.rgb)
    with pytest.raises(MediaError, match="no frame at or after"):
        list(frames.iter_frames_at(a, [0.1, 9.0]))
    assert list(frames.iter_frames_at(tmp_path / "missing.mp4", [])) == []
