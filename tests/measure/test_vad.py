"""VAD: speech synthesised by ffmpeg's flite filter, placed at known times over silence, music-like
tones and noise, is found within ±0.3 s; music and noise alone are not speech."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.measure.signals import pink_noise
from verifiers.measure.audio_io import load_audio
from verifiers.measure.vad import speech_segments

SR = 16000


def _has_flite() -> bool:
    if shutil.which("ffmpeg") is None:
        return False
    out = subprocess.run(["ffmpeg", "-hide_banner", "-filters"], capture_output=True, text=True).stdout
    return " flite " in out


pytestmark = pytest.mark.skipif(not _has_flite(), reason="ffmpeg without the flite filter")


def _speech(tmp: Path) -> np.ndarray:
    out = tmp / "speech.wav"
    subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                    "flite=text='The quick brown fox jumps over the lazy dog near the river bank':voice=slt",
                    "-ar", str(SR), "-ac", "1", str(out)], check=True)
    x = load_audio(out).mono
    loud = np.nonzero(np.abs(x) > 0.02)[0]
    return x[loud[0]: loud[-1] + 1] / np.max(np.abs(x)) * 0.5  # trim flite's own lead-in and tail


def _music(n: int, rng: np.random.Generator) -> np.ndarray:
    t = np.arange(n) / SR
    x = sum(np.sin(2 * np.pi * f * t) * 0.05 for f in (220.0, 277.2, 329.6, 440.0))
    return x * (0.6 + 0.4 * np.sin(2 * np.pi * 0.5 * t)) + pink_noise(n, rng) * 0.01


@pytest.mark.parametrize("bed", ["silence", "music", "noise"])
def test_speech_found_at_known_times(tmp_path: Path, bed: str) -> None:
    rng = np.random.default_rng(0)
    speech = _speech(tmp_path)
    n = 10 * SR
    x = {"silence": np.zeros(n), "music": _music(n, rng), "noise": pink_noise(n, rng) * 0.02}[bed]
    starts = [1.5, 6.0]
    for s in starts:
        i = int(s * SR)
        x[i:i + len(speech)] += speech
    segs = speech_segments(x, SR)
    assert len(segs) == 2, segs
    for seg, s in zip(segs, starts, strict=True):
        assert abs(seg.start_s - s) <= 0.3
        assert abs(seg.end_s - (s + len(speech) / SR)) <= 0.4


def test_music_and_noise_alone_are_not_speech() -> None:
    rng = np.random.default_rng(1)
    assert speech_segments(_music(8 * SR, rng), SR) == []
    assert speech_segments(pink_noise(8 * SR, rng) * 0.05, SR) == []
