"""The live meter on EBU Tech 3341/3342 signals equals the file-based measurement
(verifiers.measure.loudness.loudness_of_file) and the documents' expected values."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from probes.audio_probe import AudioProbe
from probes.sources.audio import FileAudioSource
from probes.types import AudioBlock
from verifiers.measure.loudness import loudness_of_file

SR = 48000


def sines(*segments: tuple[float, float], f_hz: float = 1000.0) -> np.ndarray:
    """Sine segments (peak dBFS, seconds), continuous phase, as in the Tech 3341 tables."""
    n = [round(sec * SR) for _, sec in segments]
    amp = np.concatenate([np.full(k, 10 ** (lvl / 20)) for (lvl, _), k in zip(segments, n, strict=True)])
    return amp * np.sin(2 * np.pi * f_hz * np.arange(len(amp)) / SR)


def tp_signal(fraction: float, phase_deg: float, level_db: float) -> np.ndarray:
    t = np.arange(SR)
    x = 10 ** (level_db / 20) * np.sin(2 * np.pi * t / fraction + np.deg2rad(phase_deg))
    ramp = np.linspace(0, 1, round(0.02 * SR))
    x[: len(ramp)] *= ramp
    x[-len(ramp):] *= ramp[::-1]
    return x


CASES = {  # name: (signal, expected integrated LUFS or None, expected true peak dBTP or None)
    "3341-1": (lambda: sines((-23, 20)), -23.0, None),
    "3341-3": (lambda: sines((-36, 10), (-23, 60), (-36, 10)), -23.0, None),
    "3341-5": (lambda: sines((-26, 20), (-20, 20.1), (-26, 20)), -23.0, None),
    "3341-9": (lambda: sines(*[(-20, 1.34), (-30, 1.66)] * 5), None, None),
    "3341-16": (lambda: tp_signal(4, 45, -6.0), None, -6.0),
    "3341-19": (lambda: tp_signal(4, 45, 3.0), None, 3.0),
    "3342-1": (lambda: sines((-20, 20), (-30, 20)), None, None),
}


def run_probe(path: Path, block_s: float) -> tuple[list[dict], AudioProbe]:
    frames: list[dict] = []
    src = FileAudioSource(path, block_s=block_s)
    probe = AudioProbe(lambda s, k, p: frames.append(p) if k == "meter" else None, src.sample_rate_hz, src.channels,
                       channel_names=src.channel_names)
    for block in src:
        probe.push(block)
    probe.flush()
    return frames, probe


@pytest.mark.parametrize("case", list(CASES))
def test_meter_equals_file_measurement(case: str, tmp_path: Path) -> None:
    make, want_i, want_tp = CASES[case]
    x = make()
    stereo = x[:, None] if case in ("3341-16", "3341-19") else np.stack([x, x], axis=1)  # TP cases are mono
    path = tmp_path / f"{case}.wav"
    sf.write(path, stereo, SR, subtype="FLOAT")
    ref = loudness_of_file(path)
    frames, probe = run_probe(path, block_s=0.0173)  # odd block size: frames must not depend on it

    assert len(frames) == math.floor(len(x) / (0.1 * SR))
    # momentary / short-term: the meter frame at t equals the file series' value for the window ending at t
    m_by_t = {round(t, 3): v for t, v in zip(ref.momentary_t_s, ref.momentary_lufs, strict=True)}
    s_by_t = {round(t, 3): v for t, v in zip(ref.short_term_t_s, ref.short_term_lufs, strict=True)}
    compared_m = compared_s = 0
    for f in frames:
        t = round(f["t_s"], 3)
        if t in m_by_t and math.isfinite(m_by_t[t]):
            assert f["momentary_lufs"] == pytest.approx(m_by_t[t], abs=0.011), t
            compared_m += 1
        if t in s_by_t and math.isfinite(s_by_t[t]):
            assert f["short_term_lufs"] == pytest.approx(s_by_t[t], abs=0.011), t
            compared_s += 1
    assert compared_m >= len(ref.momentary_lufs) - 1
    assert compared_s >= len(ref.short_term_lufs) - 1
    last = frames[-1]
    summary = probe.summary()
    if math.isfinite(ref.integrated_lufs):
        assert summary["integrated_lufs"] == pytest.approx(ref.integrated_lufs, abs=0.006)
    if want_i is not None:
        assert last["integrated_lufs"] == pytest.approx(want_i, abs=0.1)
    assert summary["lra_lu"] == pytest.approx(ref.lra_lu, abs=0.006)
    for got, ref_tp in zip(summary["true_peak_dbtp"], ref.true_peak_per_channel_dbtp, strict=True):
        assert got == pytest.approx(ref_tp, abs=0.006)
    if want_tp is not None:
        assert want_tp - 0.4 <= summary["true_peak_dbtp"][0] <= want_tp + 0.2
    for got, ref_sp in zip(last["max_sample_peak_dbfs"], ref.sample_peak_per_channel_dbfs, strict=True):
        assert got == pytest.approx(ref_sp, abs=0.006)
    if case == "3341-9":  # Tech 3341 case 9: short-term constant at −23 LUFS ±0.1
        st = [f["short_term_lufs"] for f in frames if f["short_term_lufs"] is not None and f["t_s"] >= 3.0]
        assert st and max(abs(v + 23.0) for v in st) <= 0.1
    if case == "3342-1":
        assert summary["lra_lu"] == pytest.approx(10.0, abs=1.0)


def test_block_size_does_not_change_meter_frames(tmp_path: Path) -> None:
    x = sines((-26, 2.0), (-20, 2.0), (-36, 1.0))
    path = tmp_path / "steps.wav"
    sf.write(path, np.stack([x, 0.5 * x], axis=1), SR, subtype="FLOAT")
    a, _ = run_probe(path, block_s=0.005)
    b, _ = run_probe(path, block_s=0.25)
    assert a == b


def test_wrong_block_shape_is_refused() -> None:
    probe = AudioProbe(lambda *a: None, SR, 2)
    with pytest.raises(ValueError, match="3 channels, probe was made for 2"):
        probe.push(AudioBlock(np.zeros((100, 3), np.float32), SR, 0.0))
    with pytest.raises(ValueError, match="44100 Hz"):
        probe.push(AudioBlock(np.zeros((100, 2), np.float32), 44100, 0.0))
