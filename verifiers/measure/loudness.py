"""EBU R 128 / ITU-R BS.1770 loudness: integrated, momentary and short-term series, LRA, peaks.

One engine, :class:`LoudnessMeter`, fed block by block (`push`), so the same code scores a file and
runs live in the audio probe. It wraps libebur128 (pyebur128), which passed every synthetic EBU
Tech 3341/3342 case here; pyloudnorm has no true peak and no M/S series and reads ≈0.04 dB low
(see ../shared/notes/measurement.md).

Series: every `hop_s` (100 ms, as Tech 3341 asks of a meter) the momentary (400 ms) and short-term
(3 s) loudness are read; values are recorded only once their window lies wholly inside the signal,
so the first momentary value is at 0.4 s and the first short-term one at 3.0 s.

Channel weighting follows BS.1770 from channel names: FL/FR/FC weight 1, surrounds (BL/BR/SL/SR)
1.41 (+1.5 dB), LFE excluded. Pass names in sample order (AudioInfo.channel_names); without names
the WAVE/FFmpeg default layout for the channel count is assumed (6 channels = FL FR FC LFE BL BR).

Silence reads −inf (LUFS, dBFS): "no signal", not a number to average.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyebur128 as r128

from verifiers.measure.audio_io import check_signal, load_audio
from verifiers.measure.errors import MediaError

_MODE = (r128.MeasurementMode.MODE_I | r128.MeasurementMode.MODE_LRA | r128.MeasurementMode.MODE_S
         | r128.MeasurementMode.MODE_M | r128.MeasurementMode.MODE_TRUE_PEAK
         | r128.MeasurementMode.MODE_SAMPLE_PEAK)
_CT = r128.ChannelType
_CHANNEL_TYPE = {"FL": _CT.LEFT, "FR": _CT.RIGHT, "FC": _CT.CENTER, "LFE": _CT.UNUSED,
                 "BL": _CT.LEFT_SURROUND, "BR": _CT.RIGHT_SURROUND, "SL": _CT.LEFT_SURROUND,
                 "SR": _CT.RIGHT_SURROUND, "BC": _CT.M_PLUS_180, "FLC": _CT.M_PLUS_030,
                 "FRC": _CT.M_MINUS_030, "TC": _CT.UNUSED}
_DEFAULT_NAMES = {1: ("FC",), 2: ("FL", "FR"), 3: ("FL", "FR", "FC"), 4: ("FL", "FR", "BL", "BR"),
                  5: ("FL", "FR", "FC", "BL", "BR"), 6: ("FL", "FR", "FC", "LFE", "BL", "BR"),
                  8: ("FL", "FR", "FC", "LFE", "BL", "BR", "SL", "SR")}


def _to_db(value: float) -> float:
    """libebur128 reports silence as -HUGE_VAL or 0 linear: map both to -inf."""
    if value is None or not math.isfinite(value):
        return -math.inf
    return float(value)


def _lin_to_db(value: float) -> float:
    return 20.0 * math.log10(value) if value > 0 else -math.inf


@dataclass
class LoudnessResult:
    """Everything one pass over a signal tells about its loudness."""

    integrated_lufs: float
    lra_lu: float
    sample_peak_dbfs: float
    true_peak_dbtp: float
    max_momentary_lufs: float
    max_short_term_lufs: float
    momentary_lufs: np.ndarray  # series, one value per hop, full windows only
    momentary_t_s: np.ndarray  # end time of each momentary window
    short_term_lufs: np.ndarray
    short_term_t_s: np.ndarray
    true_peak_per_channel_dbtp: list[float] = field(default_factory=list)
    sample_peak_per_channel_dbfs: list[float] = field(default_factory=list)
    duration_s: float = 0.0

    def summary(self) -> dict[str, float | None]:
        """The scalar readings, JSON-ready (−inf becomes None)."""
        def num(v: float) -> float | None:
            return round(v, 2) if math.isfinite(v) else None
        return {"integrated_lufs": num(self.integrated_lufs), "lra_lu": num(self.lra_lu),
                "true_peak_dbtp": num(self.true_peak_dbtp), "sample_peak_dbfs": num(self.sample_peak_dbfs),
                "max_momentary_lufs": num(self.max_momentary_lufs),
                "max_short_term_lufs": num(self.max_short_term_lufs)}


class LoudnessMeter:
    """Incremental BS.1770 meter: `push` blocks of (frames, channels) float samples, read any time."""

    def __init__(self, sample_rate_hz: int, channels: int, *, channel_names: Sequence[str] | None = None,
                 hop_s: float = 0.1) -> None:
        if channels < 1 or sample_rate_hz < 8000:
            raise ValueError(f"need ≥1 channel and ≥8 kHz, got {channels} ch at {sample_rate_hz} Hz")
        self.sample_rate_hz = int(sample_rate_hz)
        self.channels = int(channels)
        names = tuple(channel_names) if channel_names else _DEFAULT_NAMES.get(channels)
        if names is None or len(names) != channels:
            raise ValueError(f"{channels} channels need channel_names (no default layout for that count)")
        self.channel_names = names
        self._state = r128.R128State(self.channels, self.sample_rate_hz, _MODE)
        for i, name in enumerate(names):
            # mono is one front channel (weight 1); unknown names are left out rather than guessed
            self._state.set_channel(i, _CT.CENTER if channels == 1 else _CHANNEL_TYPE.get(name, _CT.UNUSED))
        self._hop = max(1, round(hop_s * self.sample_rate_hz))
        self._since_hop = 0
        self.frames = 0
        self._m: list[float] = []
        self._m_t: list[float] = []
        self._s: list[float] = []
        self._s_t: list[float] = []

    # -- feeding -----------------------------------------------------------------------------
    def push(self, block: np.ndarray) -> None:
        """Feed samples (frames, channels) or (frames,) for mono; any float/int dtype in ±1 scale."""
        x = check_signal(block, "loudness block")
        if x.ndim == 1:
            x = x[:, None]
        if x.shape[1] != self.channels:
            raise ValueError(f"block has {x.shape[1]} channels, meter was made for {self.channels}")
        pos = 0
        n = x.shape[0]
        while pos < n:
            take = min(n - pos, self._hop - self._since_hop)
            chunk = np.ascontiguousarray(x[pos:pos + take], dtype=np.float64)
            self._state.add_frames(chunk.ravel(), take)
            pos += take
            self._since_hop += take
            self.frames += take
            if self._since_hop == self._hop:
                self._since_hop = 0
                self._record()

    def _record(self) -> None:
        t = self.frames / self.sample_rate_hz
        if t >= 0.4 - 1e-9:
            self._m.append(_to_db(r128.get_loudness_momentary(self._state)))
            self._m_t.append(t)
        if t >= 3.0 - 1e-9:
            self._s.append(_to_db(r128.get_loudness_shortterm(self._state)))
            self._s_t.append(t)

    # -- readouts ----------------------------------------------------------------------------
    @property
    def momentary_lufs(self) -> float:
        return _to_db(r128.get_loudness_momentary(self._state))

    @property
    def short_term_lufs(self) -> float:
        return _to_db(r128.get_loudness_shortterm(self._state))

    @property
    def integrated_lufs(self) -> float:
        return _to_db(r128.get_loudness_global(self._state))

    @property
    def lra_lu(self) -> float:
        value = _to_db(r128.get_loudness_range(self._state))
        return value if math.isfinite(value) else 0.0

    def sample_peak_per_channel_dbfs(self) -> list[float]:
        return [_lin_to_db(r128.get_sample_peak(self._state, i)) for i in range(self.channels)]

    def true_peak_per_channel_dbtp(self) -> list[float]:
        return [_lin_to_db(r128.get_true_peak(self._state, i)) for i in range(self.channels)]

    @property
    def sample_peak_dbfs(self) -> float:
        return max(self.sample_peak_per_channel_dbfs())

    @property
    def true_peak_dbtp(self) -> float:
        return max(self.true_peak_per_channel_dbtp())

    def result(self) -> LoudnessResult:
        m = np.array(self._m)
        s = np.array(self._s)
        return LoudnessResult(
            integrated_lufs=self.integrated_lufs, lra_lu=self.lra_lu,
            sample_peak_dbfs=self.sample_peak_dbfs, true_peak_dbtp=self.true_peak_dbtp,
            max_momentary_lufs=float(m.max()) if len(m) else -math.inf,
            max_short_term_lufs=float(s.max()) if len(s) else -math.inf,
            momentary_lufs=m, momentary_t_s=np.array(self._m_t), short_term_lufs=s,
            short_term_t_s=np.array(self._s_t),
            true_peak_per_channel_dbtp=self.true_peak_per_channel_dbtp(),
            sample_peak_per_channel_dbfs=self.sample_peak_per_channel_dbfs(),
            duration_s=self.frames / self.sample_rate_hz)


def measure_loudness(samples: np.ndarray, sample_rate_hz: int, *,
                     channel_names: Sequence[str] | None = None, block_s: float = 1.0) -> LoudnessResult:
    """Loudness of an in-memory signal (frames, channels) or (frames,)."""
    x = check_signal(samples, "loudness input")
    if x.ndim == 1:
        x = x[:, None]
    meter = LoudnessMeter(sample_rate_hz, x.shape[1], channel_names=channel_names)
    step = max(1, int(block_s * sample_rate_hz))
    for i in range(0, x.shape[0], step):
        meter.push(x[i:i + step])
    return meter.result()


def loudness_of_file(path: str | Path) -> LoudnessResult:
    """Loudness of a file's first audio stream, channels weighted by the file's own layout."""
    audio = load_audio(path)
    if not audio.info.channel_names and audio.channels not in _DEFAULT_NAMES:
        raise MediaError(f"{Path(path).name}: {audio.channels} channels with no layout: cannot weight them")
    return measure_loudness(audio.samples, audio.sample_rate_hz, channel_names=audio.info.channel_names or None)
