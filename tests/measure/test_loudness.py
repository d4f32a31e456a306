"""EBU Tech 3341 (cases 1–6, 9, 15–19) and Tech 3342 (cases 1–4), generated from the documents'
tables (stereo 1 kHz sines; levels are per-channel peak dBFS), within the issue's tolerances:
±0.1 LU, LRA ±1 LU, true peak +0.2/−0.4 dB. Plus: incremental == one-shot, and 5.1 weighting."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from verifiers.measure.errors import MediaError
from verifiers.measure.loudness import LoudnessMeter, loudness_of_file, measure_loudness

SR = 48000


def tones(*segments: tuple[float, float], sr: int = SR, f_hz: float = 1000.0) -> np.ndarray:
    """Concatenated sine segments (peak dBFS, seconds) with continuous phase."""
    n = [round(sec * sr) for _, sec in segments]
    amp = np.concatenate([np.full(k, 10 ** (lvl / 20)) for (lvl, _), k in zip(segments, n, strict=True)])
    return amp * np.sin(2 * np.pi * f_hz * np.arange(len(amp)) / sr)


def stereo(*segments: tuple[float, float]) -> np.ndarray:
    x = tones(*segments)
    return np.stack([x, x], axis=1)


INTEGRATED = [  # Tech 3341 Table 1: case, segments, expected integrated LUFS
    (1, [(-23, 20)], -23.0),
    (2, [(-33, 20)], -33.0),
    (3, [(-36, 10), (-23, 60), (-36, 10)], -23.0),
    (4, [(-72, 10), (-36, 10), (-23, 60), (-36, 10), (-72, 10)], -23.0),
    (5, [(-26, 20), (-20, 20.1), (-26, 20)], -23.0),
]


@pytest.mark.parametrize(("case", "segments", "want"), INTEGRATED, ids=[f"3341-{c[0]}" for c in INTEGRATED])
def test_tech3341_integrated(case: int, segments: list, want: float) -> None:
    res = measure_loudness(stereo(*segments), SR)
    assert res.integrated_lufs == pytest.approx(want, abs=0.1)
    if case in (1, 2):  # M and S must be constant at the level over every full window
        assert np.all(np.abs(res.momentary_lufs - want) <= 0.1)
        assert np.all(np.abs(res.short_term_lufs - want) <= 0.1)
        assert len(res.momentary_lufs) == 197 and len(res.short_term_lufs) == 171


def test_tech3341_case6_surround_weighting() -> None:
    """5.0 (here as 5.1 with a silent LFE, FFmpeg order): L,R −28, C −24, Ls,Rs −30 dBFS → −23 LUFS."""
    side, centre, back = tones((-28, 20)), tones((-24, 20)), tones((-30, 20))
    x = np.stack([side, side, centre, np.zeros_like(side), back, back], axis=1)
    res = measure_loudness(x, SR, channel_names=("FL", "FR", "FC", "LFE", "BL", "BR"))
    assert res.integrated_lufs == pytest.approx(-23.0, abs=0.1)
    # the LFE is excluded: a loud LFE must not change the reading
    x[:, 3] = tones((-6, 20))
    assert measure_loudness(x, SR).integrated_lufs == pytest.approx(-23.0, abs=0.1)
    # weighting by name, not position: 5.1(side) order reads the same
    res_side = measure_loudness(x, SR, channel_names=("FL", "FR", "FC", "LFE", "SL", "SR"))
    assert res_side.integrated_lufs == pytest.approx(-23.0, abs=0.1)


def test_tech3341_case9_short_term_constant() -> None:
    x = stereo(*[(-20, 1.34), (-30, 1.66)] * 5)
    res = measure_loudness(x, SR)
    assert len(res.short_term_lufs) >= 100
    assert np.max(np.abs(res.short_term_lufs - -23.0)) <= 0.1


def _tp_signal(fraction: float, phase_deg: float, level_db: float) -> np.ndarray:
    """Mono sine at fs/fraction with a start phase; 20 ms fades (a hard start rings in any
    interpolator, which a signal described by its steady state does not have)."""
    n = SR
    t = np.arange(n)
    x = 10 ** (level_db / 20) * np.sin(2 * np.pi * t / fraction + np.deg2rad(phase_deg))
    fade = round(0.02 * SR)
    ramp = np.linspace(0, 1, fade)
    x[:fade] *= ramp
    x[-fade:] *= ramp[::-1]
    return x


TRUE_PEAK = [(15, 4, 0, -6.0), (16, 4, 45, -6.0), (17, 6, 60, -6.0), (18, 8, 67.5, -6.0), (19, 4, 45, 3.0)]


@pytest.mark.parametrize(("case", "fraction", "phase", "want"), TRUE_PEAK, ids=[f"3341-{c[0]}" for c in TRUE_PEAK])
def test_tech3341_true_peak(case: int, fraction: float, phase: float, want: float) -> None:
    x = _tp_signal(fraction, phase, want)
    res = measure_loudness(x, SR)
    assert want - 0.4 <= res.true_peak_dbtp <= want + 0.2
    assert res.sample_peak_dbfs == pytest.approx(20 * np.log10(np.max(np.abs(x))), abs=1e-6)
    if case in (16, 19):  # samples fall 3 dB below the waveform's peak: sample peak must not be TP
        assert res.sample_peak_dbfs < want - 2.9


LRA = [(1, [(-20, 20), (-30, 20)], 10.0), (2, [(-20, 20), (-15, 20)], 5.0),
       (3, [(-40, 20), (-20, 20)], 20.0), (4, [(-50, 20), (-35, 20), (-20, 20), (-35, 20), (-50, 20)], 15.0)]


@pytest.mark.parametrize(("case", "segments", "want"), LRA, ids=[f"3342-{c[0]}" for c in LRA])
def test_tech3342_lra(case: int, segments: list, want: float) -> None:
    assert measure_loudness(stereo(*segments), SR).lra_lu == pytest.approx(want, abs=1.0)


def test_incremental_equals_one_shot_with_odd_blocks() -> None:
    rng = np.random.default_rng(0)
    x = stereo((-30, 3), (-18, 4), (-40, 3)) + rng.standard_normal((10 * SR, 2)) * 0.001
    whole = measure_loudness(x, SR)
    meter = LoudnessMeter(SR, 2)
    pos = 0
    while pos < len(x):
        k = int(rng.integers(1, 7000))
        meter.push(x[pos:pos + k])
        pos += k
    inc = meter.result()
    assert inc.integrated_lufs == pytest.approx(whole.integrated_lufs, abs=1e-9)
    assert inc.true_peak_dbtp == pytest.approx(whole.true_peak_dbtp, abs=1e-9)
    assert np.allclose(inc.short_term_lufs, whole.short_term_lufs)
    assert inc.max_momentary_lufs == pytest.approx(-18.0, abs=0.1)
    assert np.array_equal(inc.momentary_lufs, whole.momentary_lufs)
    assert meter.momentary_lufs == inc.momentary_lufs[-1] and meter.short_term_lufs == inc.short_term_lufs[-1]


def programme(names: tuple[str, ...], seconds: int, seed: int) -> np.ndarray:
    """Programme-like material: noise bursts whose level jumps every 0.5 s over 35 dB."""
    rng = np.random.default_rng(seed)
    level = np.repeat(10 ** (rng.uniform(-45, -10, seconds * 2) / 20), SR // 2)
    return rng.standard_normal((seconds * SR, len(names))) * level[:, None]


@pytest.mark.parametrize("names", [("FL", "FR"), ("FL", "FR", "FC", "LFE", "BL", "BR")], ids=["stereo", "5.1"])
def test_short_term_series_is_libebur128s_own(names: tuple[str, ...]) -> None:
    """The meter's short-term series is summed from libebur128's 100 ms windows (its own 3 s query
    is too slow at 10 Hz): every value must equal libebur128's get_loudness_shortterm asked at the
    same hop boundary of a separately fed state; momentary, integrated and LRA are libebur128's."""
    import pyebur128 as r128

    x = programme(names, 25, len(names))
    ours = measure_loudness(x, SR, channel_names=names)
    modes = r128.MeasurementMode
    state = r128.R128State(len(names), SR, modes.MODE_I | modes.MODE_LRA | modes.MODE_M | modes.MODE_S)
    types = {"FL": r128.ChannelType.LEFT, "FR": r128.ChannelType.RIGHT, "FC": r128.ChannelType.CENTER,
             "LFE": r128.ChannelType.UNUSED, "BL": r128.ChannelType.LEFT_SURROUND,
             "BR": r128.ChannelType.RIGHT_SURROUND}
    for i, name in enumerate(names):
        state.set_channel(i, types[name])
    flat = np.ascontiguousarray(x).ravel()
    hop = SR // 10
    short, momentary = [], []
    for k in range(len(x) // hop):
        state.add_frames(flat[k * hop * len(names):(k + 1) * hop * len(names)], hop)
        if k >= 29:
            short.append(r128.get_loudness_shortterm(state))
        if k >= 3:
            momentary.append(r128.get_loudness_momentary(state))
    assert len(ours.short_term_lufs) == len(short) == 250 - 29
    assert np.max(np.abs(ours.short_term_lufs - np.array(short))) < 1e-9
    assert np.array_equal(ours.momentary_lufs, np.array(momentary))
    assert ours.integrated_lufs == r128.get_loudness_global(state)
    assert ours.lra_lu == r128.get_loudness_range(state)
    assert ours.lra_lu > 5 and np.ptp(ours.short_term_lufs) > 5  # the levels really vary


def _ffmpeg_frames(path: Path) -> dict[float, tuple[float, float]]:
    """ffmpeg ebur128's per-100-ms log: end time (s, rounded to the hop) → (M, S) in LUFS."""
    out = subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-nostats", "-i", str(path), "-af", "ebur128",
                          "-f", "null", "-"], capture_output=True, text=True, check=True)
    frames = {}
    for m in re.finditer(r"t:\s*([\d.]+)\s+TARGET:\S+ LUFS\s+M:\s*(-?[\d.]+)\s+S:\s*(-?[\d.]+)", out.stderr):
        frames[round(float(m[1]), 1)] = (float(m[2]), float(m[3]))
    return frames


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")
@pytest.mark.parametrize("names", [("FL", "FR"), ("FL", "FR", "FC", "LFE", "BL", "BR")], ids=["stereo", "5.1"])
def test_series_agree_with_ffmpeg_on_programme(names: tuple[str, ...], tmp_path: Path) -> None:
    """An independent implementation (FFmpeg's ebur128 filter) on programme-like noise: every
    momentary and short-term value, hop by hop, within its 0.1 LU print resolution; channel
    weighting from the file's layout (5.1: LFE out, surrounds +1.5 dB) must match too."""
    x = programme(names, 12, 7 + len(names))
    path = tmp_path / "prog.wav"
    sf.write(path, x, SR, subtype="PCM_24")
    ours = loudness_of_file(path)
    ff = _ffmpeg_frames(path)
    m_pairs = [(ff[round(t, 1)][0], v) for t, v in zip(ours.momentary_t_s, ours.momentary_lufs, strict=True)
               if round(t, 1) in ff]
    s_pairs = [(ff[round(t, 1)][1], v) for t, v in zip(ours.short_term_t_s, ours.short_term_lufs, strict=True)
               if round(t, 1) in ff]
    assert len(m_pairs) >= 110 and len(s_pairs) >= 85
    m_err = max(abs(a - b) for a, b in m_pairs)
    s_err = max(abs(a - b) for a, b in s_pairs)
    assert m_err <= 0.06 and s_err <= 0.06, (m_err, s_err)
    assert np.ptp(ours.momentary_lufs) > 10  # a real programme, not a constant


@pytest.mark.parametrize("sr", [44100, 96000])
def test_other_sample_rates(sr: int) -> None:
    x = tones((-23, 5), sr=sr)
    res = measure_loudness(np.stack([x, x], axis=1), sr)
    assert res.integrated_lufs == pytest.approx(-23.0, abs=0.1)
    assert np.all(np.abs(res.momentary_lufs - -23.0) <= 0.1)


def test_silence_reads_minus_infinity_and_bad_blocks_raise() -> None:
    res = measure_loudness(np.zeros((SR * 2, 2)), SR)
    assert res.integrated_lufs == -math.inf and res.sample_peak_dbfs == -math.inf
    assert res.summary()["integrated_lufs"] is None
    meter = LoudnessMeter(SR, 2)
    with pytest.raises(ValueError):
        meter.push(np.zeros((10, 3)))
    with pytest.raises(MediaError):
        meter.push(np.full((10, 2), np.nan))


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")
def test_file_agrees_with_ffmpeg_ebur128(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    x = stereo((-25, 4), (-15, 3), (-35, 5)) * (1 + 0.2 * rng.standard_normal((12 * SR, 1)))
    path = tmp_path / "prog.wav"
    sf.write(path, x, SR, subtype="FLOAT")
    ours = loudness_of_file(path)
    out = subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-nostats", "-i", str(path), "-af",
                          "ebur128=peak=true", "-f", "null", "-"], capture_output=True, text=True, check=True)
    summary = out.stderr[out.stderr.rindex("Summary:"):]
    ff_i = float(summary.split("I:")[1].split()[0])
    ff_lra = float(summary.split("LRA:")[1].split()[0])
    ff_tp = float(summary.split("Peak:")[1].split()[0])
    assert ours.integrated_lufs == pytest.approx(ff_i, abs=0.1)
    assert ours.lra_lu == pytest.approx(ff_lra, abs=0.5)  # both within Tech 3342 ±1; ffmpeg bins LRA at 0.1
    assert ours.true_peak_dbtp == pytest.approx(ff_tp, abs=0.2)


@pytest.mark.parametrize("subtype", ["FLOAT", "PCM_16", "PCM_24", "PCM_32"])
def test_streamed_file_equals_in_memory(subtype: str, tmp_path: Path) -> None:
    """loudness_of_file streams in blocks (decoded straight to float32 where that is exact: PCM ≤ 24
    bit, float; float64 for PCM_32); the answer must equal the whole-signal float64 one."""
    rng = np.random.default_rng(9)
    x = stereo((-30, 4), (-16, 3), (-26, 5)) * (1 + 0.3 * rng.standard_normal((12 * SR, 1)))
    path = tmp_path / "prog.wav"
    sf.write(path, np.clip(x, -1, 1), SR, subtype=subtype)
    whole = measure_loudness(sf.read(path, dtype="float64")[0], SR)
    streamed = loudness_of_file(path, block_s=0.7)
    assert streamed.integrated_lufs == pytest.approx(whole.integrated_lufs, abs=1e-9)
    assert streamed.lra_lu == pytest.approx(whole.lra_lu, abs=1e-9)
    assert streamed.true_peak_dbtp == pytest.approx(whole.true_peak_dbtp, abs=1e-9)
    assert np.allclose(streamed.short_term_lufs, whole.short_term_lufs)
    assert streamed.sample_peak_dbfs == whole.sample_peak_dbfs
