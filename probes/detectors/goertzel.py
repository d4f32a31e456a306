"""Tone presence at given frequencies: Goertzel bins on a sliding Hann window, and a tracker.

The Goertzel algorithm evaluates one DFT bin at an arbitrary frequency. Its recurrence is a
scalar loop; in numpy the same bin value is one dot product of each window with a precomputed
complex exponential, so many windows × channels × frequencies become a single matrix product
(`bin_amplitudes`). The result equals Goertzel's |y[N]| for the same window.

Timing: with a Hann window the windowed amplitude of a tone switched on at t0 reaches half its
steady value when the window is centred on t0 (the window is symmetric, half its weight lies
after its centre). So `ToneTracker` reports on/off at the time the amplitude series crosses half of
the steady level — this is exact for rectangular gating, and independent of the window length,
which only sets the frequency resolution: with the default 25 ms window two tones 200 Hz apart
read within 0.05 dB of their levels; at 100 Hz apart they leak into each other by ~0.3 dB.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def goertzel_basis(freqs_hz: list[float], sample_rate_hz: int, window_len: int) -> np.ndarray:
    """(window_len, 2·n_freqs) real: Hann × cos ωn then Hann × sin ωn, scaled so a sine of peak A
    reads A. Real (not complex) so the product with real windows needs no complex copy."""
    n = np.arange(window_len)
    w = np.hanning(window_len + 2)[1:-1]  # no zero end points: every sample counts
    omega = 2.0 * np.pi * np.asarray(freqs_hz, dtype=float)[None, :] / sample_rate_hz
    scale = 2.0 / w.sum()
    return np.concatenate([w[:, None] * np.cos(omega * n[:, None]), w[:, None] * np.sin(omega * n[:, None])],
                          axis=1) * scale


def bin_amplitudes(windows: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """Peak-amplitude estimate per window and frequency: (..., window_len) @ basis → (..., n_freqs)."""
    y = windows @ basis
    nf = basis.shape[1] // 2
    return np.hypot(y[..., :nf], y[..., nf:])


def tone_amplitude(x: np.ndarray, freq_hz: float, sample_rate_hz: int) -> float:
    """Amplitude (peak, ±1 scale) of a sine at `freq_hz` in one mono window, Goertzel on Hann."""
    basis = goertzel_basis([freq_hz], sample_rate_hz, len(x))
    return float(bin_amplitudes(np.asarray(x, dtype=float)[None, :], basis)[0, 0])


@dataclass(frozen=True)
class ToneChange:
    channel: int
    freq_hz: float
    on: bool
    t_s: float
    level_dbfs: float  # steady peak level of the tone (dBFS, sine peak = full scale at 0 dBFS)


class ToneTracker:
    """Tracks tones at `freqs_hz` on every channel of a block stream; reports changes.

    A tone is *on* when its bin amplitude is at least `min_level_dbfs` and carries at least
    `min_share` of the window's power (a sine of amplitude A has power A²/2), so broadband noise
    of the same level does not count as a tone. It goes *off* when the amplitude falls below half
    the steady level it had (−6 dB) or below the level floor.
    """

    def __init__(self, sample_rate_hz: int, channels: int, freqs_hz: list[float], *, window_s: float = 0.025,
                 hop_s: float = 0.005, min_level_dbfs: float = -60.0, min_share: float = 0.2) -> None:
        if not freqs_hz:
            raise ValueError("ToneTracker needs at least one frequency")
        nyquist = sample_rate_hz / 2
        bad = [f for f in freqs_hz if not 0 < f < nyquist]
        if bad:
            raise ValueError(f"tone frequencies {bad} outside (0, {nyquist:g}) Hz")
        self.sr = sample_rate_hz
        self.channels = channels
        self.freqs_hz = [float(f) for f in freqs_hz]
        self.win = max(16, round(window_s * sample_rate_hz))
        self.hop = max(1, round(hop_s * sample_rate_hz))
        self.basis = goertzel_basis(self.freqs_hz, sample_rate_hz, self.win)
        self.min_amp = 10 ** (min_level_dbfs / 20)
        self.min_share = min_share
        self._hist = np.zeros((0, channels), dtype=np.float64)
        self._hist_t0 = 0.0  # stream time of _hist[0]
        self._started = False
        nf = len(self.freqs_hz)
        self.on = np.zeros((channels, nf), dtype=bool)
        self.level = np.zeros((channels, nf))  # latest steady amplitude (linear)
        self._settle = math.ceil(self.win / self.hop)  # hops until a window lies wholly in the tone
        self._recent: deque[tuple[float, np.ndarray]] = deque(maxlen=self._settle + 2)
        self._pending: dict[tuple[int, int], int] = {}  # (ch, f) → hops since the on-detection

    def push(self, samples: np.ndarray, t_s: float) -> list[ToneChange]:
        """Feed (frames, channels) samples starting at stream time t_s; returns changes in order."""
        x = np.asarray(samples, dtype=np.float64)
        if not self._started:
            self._hist_t0 = t_s
            self._started = True
        joined = np.concatenate([self._hist, x], axis=0)
        n = joined.shape[0]
        if n < self.win:
            self._hist = joined
            return []
        starts = np.arange(0, n - self.win + 1, self.hop)
        # windows: (n_win, channels, win), a strided view (hop) of the joined signal
        view = sliding_window_view(joined, self.win, axis=0)[:: self.hop]
        amp = bin_amplitudes(view, self.basis)  # (n_win, ch, nf)
        csum = np.concatenate([np.zeros((1, joined.shape[1])), np.cumsum(joined * joined, axis=0)])
        power = (csum[starts + self.win] - csum[starts]) / self.win
        centres = self._hist_t0 + (starts + self.win / 2) / self.sr
        changes: list[ToneChange] = []
        if not self._quiet_block(amp, power, centres):
            for i in range(len(starts)):
                changes.extend(self._step(float(centres[i]), amp[i], power[i]))
        keep_from = starts[-1] + self.hop
        self._hist = joined[keep_from:]
        self._hist_t0 += keep_from / self.sr
        return changes

    def _quiet_block(self, amp: np.ndarray, power: np.ndarray, centres: np.ndarray) -> bool:
        """Fast path: no state can change in this block (no new tone, no tone falling off, nothing
        pending), so only the slow level follow and the recent history are updated, without the
        per-window loop. This is the common case and keeps the tracker cheap."""
        if self._pending:
            return False
        present = (amp >= self.min_amp) & (amp * amp >= (2.0 * self.min_share) * power[:, :, None])
        on = self.on
        if np.any(present & ~on):
            return False
        if on.any():
            a_on = amp[:, on]  # (n_win, tones on)
            level = self.level[on]
            if np.any(a_on < np.maximum(level / 2, self.min_amp)):
                return False
            follow = present[:, on] & (a_on >= 0.7 * level)
            k = follow.sum(axis=0)
            mean_amp = np.where(k > 0, (a_on * follow).sum(axis=0) / np.maximum(k, 1), level)
            decay = 0.9 ** k
            self.level[on] = decay * level + (1 - decay) * mean_amp
        for i in range(max(0, len(centres) - (self._recent.maxlen or 1)), len(centres)):
            self._recent.append((float(centres[i]), amp[i]))
        return True

    def _step(self, t: float, amp: np.ndarray, power: np.ndarray) -> list[ToneChange]:
        out: list[ToneChange] = []
        share = (amp * amp / 2.0) / np.maximum(power[:, None], 1e-20)
        present = (amp >= self.min_amp) & (share >= self.min_share)
        prev = self._recent[-1] if self._recent else None
        self._recent.append((t, amp))
        for (c, f), hops in list(self._pending.items()):
            if hops + 1 >= self._settle:  # the window now lies inside the tone: steady level known
                del self._pending[(c, f)]
                steady = float(amp[c, f])
                self.level[c, f] = steady
                out.append(ToneChange(c, self.freqs_hz[f], True, self._crossing(c, f, steady / 2, rising=True),
                                      _db(steady)))
            else:
                self._pending[(c, f)] = hops + 1
        for c, f in zip(*np.nonzero(present & ~self.on), strict=True):
            self.on[c, f] = True
            self._pending[(int(c), int(f))] = 0
        for c, f in zip(*np.nonzero(self.on), strict=True):
            c, f = int(c), int(f)
            if (c, f) in self._pending:
                continue
            half = self.level[c, f] / 2
            if amp[c, f] < half or amp[c, f] < self.min_amp:
                self.on[c, f] = False
                t_off = t
                if prev is not None and prev[1][c, f] > amp[c, f]:
                    a0, a1 = float(prev[1][c, f]), float(amp[c, f])
                    frac = (a0 - half) / (a0 - a1) if a0 != a1 else 1.0
                    t_off = prev[0] + min(max(frac, 0.0), 1.0) * (t - prev[0])
                out.append(ToneChange(c, self.freqs_hz[f], False, float(t_off), _db(float(self.level[c, f]))))
            elif present[c, f] and amp[c, f] >= 0.7 * self.level[c, f]:
                # slow follow of level changes, not of the fade a switch-off makes in the window
                self.level[c, f] = 0.9 * self.level[c, f] + 0.1 * float(amp[c, f])
        return out

    def _crossing(self, c: int, f: int, level: float, rising: bool) -> float:
        """Time the amplitude series last crossed `level` (linear interpolation between hops)."""
        pts = list(self._recent)
        for i in range(len(pts) - 1, 0, -1):
            (t0, a0), (t1, a1) = pts[i - 1], pts[i]
            v0, v1 = float(a0[c, f]), float(a1[c, f])
            if v0 < level <= v1 if rising else v0 > level >= v1:
                return float(t0 + (level - v0) / (v1 - v0) * (t1 - t0))
        return float(pts[0][0])

    def current(self) -> list[dict[str, object]]:
        """Tones on now, JSON-ready."""
        return [{"channel": int(c), "freq_hz": self.freqs_hz[f], "level_dbfs": round(_db(self.level[c, f]), 2)}
                for c, f in zip(*np.nonzero(self.on), strict=True)]


def _db(amp: float) -> float:
    return 20.0 * math.log10(amp) if amp > 0 else -math.inf
