"""Identification: the right library sample wins at the right offset, even after an MP3 round trip
through ffmpeg and a 44.1 → 48 kHz resample (issue 12: offset within 1 ms, every time)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests.measure.signals import effect
from verifiers.measure.audio_io import load_audio, resample
from verifiers.measure.errors import MediaError
from verifiers.measure.identify import identify, match_at


def _library(sr: int, seed: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    lib = {}
    for i, kind in enumerate(("burst", "tone", "kick", "chirp", "burst", "tone")):
        lib[f"{kind}{i}"] = 0.2 * effect(kind, sr, rng, length_s=rng.uniform(0.4, 0.9))
    return lib


def test_exact_copy_has_ncc_one_and_known_gain() -> None:
    sr = 48000
    lib = _library(sr)
    mix = np.zeros(3 * sr)
    at = 51234
    mix[at:at + len(lib["kick2"])] += 0.5 * lib["kick2"]
    best, *rest = match_at(mix, sr, lib, at_s=at / sr + 0.02)
    assert best.name == "kick2"
    assert best.ncc == pytest.approx(1.0, abs=1e-9)
    assert best.gain == pytest.approx(0.5, abs=1e-9)
    assert round(best.offset_s * sr) == at
    assert len(rest) == len(lib) - 1 and all(m.ncc < best.ncc for m in rest)


def test_search_window_is_respected() -> None:
    sr = 48000
    lib = _library(sr)
    mix = np.zeros(3 * sr)
    mix[sr:sr + len(lib["tone1"])] += lib["tone1"]
    near = match_at(mix, sr, lib, at_s=1.0, search_s=0.01)
    far = match_at(mix, sr, lib, at_s=2.5, search_s=0.01)  # after the sample ended
    assert near[0].name == "tone1" and near[0].ncc > 0.99
    assert max(m.ncc for m in far if m.name == "tone1") < 0.9


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")
def test_identify_after_mp3_round_trip_and_resample(tmp_path: Path) -> None:
    src_sr, sr = 44100, 48000
    lib44 = _library(src_sr)
    rng = np.random.default_rng(11)
    mix = rng.standard_normal(14 * src_sr) * 0.002  # quiet room-tone bed
    truth: list[tuple[str, float]] = []
    t = 0.6
    names = list(lib44) * 2
    rng.shuffle(names)
    for name in names:
        i = int(t * src_sr)
        mix[i:i + len(lib44[name])] += rng.uniform(0.4, 1.0) * lib44[name]
        truth.append((name, i / src_sr))
        t += rng.uniform(0.7, 1.1)
        if t > 13:
            break
    wav = tmp_path / "mix.wav"
    mp3 = tmp_path / "mix.mp3"
    sf.write(wav, mix, src_sr, subtype="PCM_16")
    subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-i", str(wav),
                    "-c:a", "libmp3lame", "-b:a", "128k", str(mp3)], check=True)
    decoded = load_audio(mp3, sample_rate_hz=sr)
    assert decoded.sample_rate_hz == sr
    lib48 = {k: resample(v, src_sr, sr) for k, v in lib44.items()}
    found = identify(decoded.mono, sr, lib48, threshold_db=12.0)
    assert len(found) == len(truth)
    for (name, at_s), (_, match) in zip(truth, sorted(found, key=lambda f: f[1].offset_s), strict=True):
        assert match.name == name
        assert abs(match.offset_s - at_s) <= 0.001, (name, match.offset_s, at_s)
        assert match.ncc >= 0.6  # mixes overlap the previous effect's tail
        first, second = match_at(decoded.mono, sr, lib48, match.offset_s)[:2]
        assert first.name == name and second.ncc < first.ncc - 0.2, (first, second)


def test_bad_mix_raises_media_error() -> None:
    with pytest.raises(MediaError):
        match_at(np.array([0.0, np.nan]), 48000, {"a": np.ones(10)}, 0.0)
