"""Audio I/O: formats, bit depth, 5.1 order, resampling, and every kind of bad input → MediaError."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from verifiers.measure.audio_io import audio_info, load_audio, resample
from verifiers.measure.errors import MediaError

SR = 48000
needs_ffmpeg = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")


def _ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", *args], check=True)


def _tone(f_hz: float, n: int, sr: int = SR, amp: float = 0.5) -> np.ndarray:
    return amp * np.sin(2 * np.pi * f_hz * np.arange(n) / sr)


def _peak_hz(x: np.ndarray, sr: int) -> float:
    spec = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    return float(np.argmax(spec) * sr / len(x))


@pytest.mark.parametrize(("subtype", "bits", "is_float"), [("PCM_16", 16, False), ("PCM_24", 24, False),
                                                           ("FLOAT", 32, True)])
def test_wav_round_trip_keeps_samples_and_depth(tmp_path: Path, subtype: str, bits: int, is_float: bool) -> None:
    x = np.stack([_tone(440, SR), _tone(1000, SR, amp=0.25)], axis=1)
    path = tmp_path / "a.wav"
    sf.write(path, x, SR, subtype=subtype)
    audio = load_audio(path)
    assert audio.samples.dtype == np.float64 and audio.samples.shape == (SR, 2)
    tol = 1e-7 if is_float else 2.0 ** -(bits - 2)
    assert np.max(np.abs(audio.samples - x)) < tol
    assert audio.info.bit_depth == bits and audio.info.float_samples is is_float
    assert audio.info.channel_layout == "stereo" and audio.info.channel_names == ("FL", "FR")
    assert audio.duration_s == pytest.approx(1.0)
    assert np.allclose(audio.mono, x.mean(axis=1), atol=tol)


def test_flac_reads_exactly(tmp_path: Path) -> None:
    x = np.round(_tone(300, 22050, 44100) * 32767) / 32768
    path = tmp_path / "a.flac"
    sf.write(path, x, 44100, subtype="PCM_16")
    audio = load_audio(path)
    info = audio_info(path)
    assert info.format == "FLAC" and info.sample_rate_hz == 44100 and info.frames == 22050
    assert np.array_equal(audio.samples[:, 0], x)


@needs_ffmpeg
def test_surround_aac_channel_order_is_explicit(tmp_path: Path) -> None:
    """Each 5.1 channel gets its own tone; after AAC (internal order differs) names still match."""
    freqs = {"FL": 300.0, "FR": 500.0, "FC": 700.0, "LFE": 90.0, "BL": 1100.0, "BR": 1300.0}
    srcs = [f"sine=f={f}:d=1:r=48000" for f in freqs.values()]
    inputs = [a for s in srcs for a in ("-f", "lavfi", "-i", s)]
    out = tmp_path / "s51.m4a"
    _ffmpeg(*inputs, "-filter_complex",
            "[0:a][1:a][2:a][3:a][4:a][5:a]join=inputs=6:channel_layout=5.1:"
            "map=0.0-FL|1.0-FR|2.0-FC|3.0-LFE|4.0-BL|5.0-BR[a]", "-map", "[a]",
            "-c:a", "aac", "-b:a", "384k", str(out))
    audio = load_audio(out)
    assert audio.info.channels == 6 and audio.info.channel_layout == "5.1"
    assert audio.info.subtype == "aac" and audio.info.bit_depth is None
    mid = audio.samples[4800:4800 + 16384]
    for name, f in freqs.items():
        assert abs(_peak_hz(mid[:, audio.info.channel_index(name)], 48000) - f) < 10, name
    with pytest.raises(MediaError):
        audio.info.channel_index("TFL")


@needs_ffmpeg
def test_mp3_via_pyav_with_resample(tmp_path: Path) -> None:
    wav, mp3 = tmp_path / "a.wav", tmp_path / "a.mp3"
    sf.write(wav, _tone(1000, 2 * 44100, 44100), 44100)
    _ffmpeg("-i", str(wav), "-b:a", "192k", str(mp3))
    audio = load_audio(mp3, sample_rate_hz=SR)
    assert audio.sample_rate_hz == SR and audio.info.sample_rate_hz == 44100
    assert audio.info.format == "mp3" and audio.info.bit_depth is None
    assert audio.duration_s == pytest.approx(2.0, abs=0.03)
    assert _peak_hz(audio.mono[SR // 2: SR // 2 + 16384], SR) == pytest.approx(1000, abs=4)


def test_resample_keeps_frequency_and_length() -> None:
    y = resample(_tone(1000, 44100, 44100), 44100, SR)
    assert len(y) == SR
    assert _peak_hz(y[1000:17384], SR) == pytest.approx(1000, abs=3)


def test_wav_header_claiming_more_data_is_truncated(tmp_path: Path) -> None:
    full = tmp_path / "full.wav"
    sf.write(full, _tone(440, SR), SR, subtype="PCM_16")
    cut = tmp_path / "cut.wav"
    cut.write_bytes(full.read_bytes()[:30000])
    with pytest.raises(MediaError, match="truncated"):
        load_audio(cut)
    with pytest.raises(MediaError, match="truncated"):
        audio_info(cut)


def test_streamed_wav_with_unknown_size_is_accepted(tmp_path: Path) -> None:
    """ffmpeg writing to a pipe leaves 0xFFFFFFFF sizes: unknown length, not truncation."""
    full = tmp_path / "full.wav"
    sf.write(full, _tone(440, SR // 10), SR, subtype="PCM_16")
    data = bytearray(full.read_bytes())
    pos = data.index(b"data")
    data[pos + 4:pos + 8] = b"\xff\xff\xff\xff"
    data[4:8] = b"\xff\xff\xff\xff"
    streamed = tmp_path / "streamed.wav"
    streamed.write_bytes(bytes(data))
    assert load_audio(streamed).samples.shape[0] == SR // 10


@pytest.mark.parametrize("content", [b"", b"hello, not audio at all\n" * 10, b"RIFF\x00\x00"])
def test_garbage_is_media_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.wav"
    path.write_bytes(content)
    with pytest.raises(MediaError) as exc:
        load_audio(path)
    assert "\n" not in str(exc.value) and "bad.wav" in str(exc.value)


def test_nan_samples_and_missing_file(tmp_path: Path) -> None:
    x = _tone(440, SR).astype(np.float32)
    x[1234] = np.nan
    path = tmp_path / "nan.wav"
    sf.write(path, x, SR, subtype="FLOAT")
    with pytest.raises(MediaError, match="non-finite"):
        load_audio(path)
    with pytest.raises(MediaError, match="no such file"):
        load_audio(tmp_path / "absent.wav")


@needs_ffmpeg
def test_video_without_audio_is_media_error(tmp_path: Path) -> None:
    out = tmp_path / "v.mp4"
    _ffmpeg("-f", "lavfi", "-i", "testsrc=d=0.2:s=64x64", "-c:v", "libx264", str(out))
    with pytest.raises(MediaError, match="no audio stream"):
        load_audio(out)


@needs_ffmpeg
def test_truncated_mp3_is_reported_by_both_readers(tmp_path: Path) -> None:
    from verifiers.measure.audio_io import AudioBlocks

    wav, mp3 = tmp_path / "a.wav", tmp_path / "a.mp3"
    sf.write(wav, _tone(440, 4 * SR), SR)
    _ffmpeg("-i", str(wav), "-b:a", "128k", str(mp3))
    cut = tmp_path / "cut.mp3"
    cut.write_bytes(mp3.read_bytes()[: mp3.stat().st_size * 2 // 5])
    with pytest.raises(MediaError, match="truncated"):
        load_audio(cut)
    with pytest.raises(MediaError, match="truncated"):
        for _ in AudioBlocks(cut, block_s=1.0):
            pass
    blocks = AudioBlocks(mp3, block_s=1.0)
    total = sum(b.shape[0] for b in blocks)
    assert total == pytest.approx(4 * SR, abs=0.03 * SR) and blocks.info.sample_rate_hz == SR
