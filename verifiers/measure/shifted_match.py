"""Is a source in this sound, pitch-shifted with its timing kept? A log-frequency spectrogram test.

Why: T16's creature vocals are made "with pitch/formant shifting and layering" of given animal
recordings. A varispeed (tape, sampler) is found by waveform NCC after resampling the source, but a
time-preserving shifter (phase vocoder, Rubber Band with or without formant preservation, WSOLA after a
rate change) rewrites the waveform: NCC falls to chance and correct work lost every share (issue 21,
rule 2: identity must survive the processing the task asks for).

What survives such a shifter is the source's spectro-temporal pattern moved up or down in log
frequency at the source's own tempo. So: log-magnitude spectrograms on a half-semitone grid (100 Hz -
8 kHz, 85 ms window, 10 ms hop, an 80 dB floor under the peak), each band's own mean over the probe
removed (the static spectral envelope a formant shift or EQ changes), a probe of the sound correlated
with every time and every shift of ±13 semitones of the source; a second probe, a third of the sound
later, must match at the same shift and the same time later in the source (±1 hop): a time-preserving
process keeps both, chance does not.

Measured on the T16 instance (seed 7), each vocal two layered sources shifted by ffmpeg's rubberband
(formant shifted or preserved) or asetrate + atempo, -9..+7 semitones, the weaker layer at 0.6-0.7:
the true sources score 0.158-0.48 (min of the two probes); the other sources in the same vocals, three
foreign voices of the same synthesiser and white noise 0.066 at most. `MIN_SHIFTED_MATCH` (0.12) sits
between the two.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.signal import fftconvolve, stft

NFFT = 4096
HOP = 480  # samples: 10 ms at 48 kHz
BINS_PER_SEMITONE = 2
F_LO_HZ, F_HI_HZ = 100.0, 8000.0
FLOOR_DB = 80.0
PROBE_HOPS = 30  # 0.3 s at 48 kHz
MAX_SHIFT_SEMITONES = 13
#: a source is in the sound at this score (min of the two probes): legitimate shifts measured ≥ 0.158,
#: other sources, foreign voices and white noise ≤ 0.066 (see the module doc)
MIN_SHIFTED_MATCH = 0.12


def log_spectrogram(x: np.ndarray, sr: int) -> np.ndarray:
    """(bands, hops) dB on the half-semitone grid, floored FLOOR_DB under its peak."""
    f, _t, z = stft(x, sr, window="hann", nperseg=NFFT, noverlap=NFFT - HOP, boundary=None, padded=False)
    db = 10 * np.log10(np.abs(z) ** 2 + 1e-20)
    nb = int(np.floor(12 * BINS_PER_SEMITONE * np.log2(F_HI_HZ / F_LO_HZ)))
    fc = F_LO_HZ * 2 ** (np.arange(nb) / (12 * BINS_PER_SEMITONE))
    j = np.clip(np.searchsorted(f, fc) - 1, 0, len(f) - 2)
    w = (fc - f[j]) / (f[j + 1] - f[j])  # linear interpolation between FFT bins, all hops at once
    out = (1 - w)[:, None] * db[j] + w[:, None] * db[j + 1]
    return np.maximum(out, out.max() - FLOOR_DB) if out.size else out


def _ncc_over_time(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """NCC of probe `a` (bands, T; band means removed) with every T-hop window of `b` (band means of
    each window removed)."""
    t = a.shape[1]
    num = fftconvolve(b, a[:, ::-1], mode="valid", axes=1).sum(axis=0)
    c1 = np.cumsum(np.pad(b, ((0, 0), (1, 0))), axis=1)
    c2 = np.cumsum(np.pad(b ** 2, ((0, 0), (1, 0))), axis=1)
    s1, s2 = c1[:, t:] - c1[:, :-t], c2[:, t:] - c2[:, :-t]
    den = np.sqrt(np.maximum(np.sum(s2 - s1 ** 2 / t, axis=0), 1e-12)) * max(float(np.sqrt(np.sum(a ** 2))), 1e-12)
    return num / den


def _overlap(probe: np.ndarray, src: np.ndarray, shift: int) -> tuple[np.ndarray, np.ndarray]:
    """Probe band f against source band f - shift (the probe is the source moved up by `shift`)."""
    n = probe.shape[0]
    a, b = (probe[shift:], src[: n - shift]) if shift >= 0 else (probe[: n + shift], src[-shift:])
    return a - a.mean(axis=1, keepdims=True), b


@dataclass(frozen=True)
class ShiftedMatch:
    score: float  # min NCC of the two probes
    semitones: float  # the source moved up by this much
    first: float
    second: float


def shifted_match(sound: np.ndarray, source_spec: np.ndarray, sr: int, span_s: tuple[float, float]) -> ShiftedMatch:
    """Best shift and place of a probe a third into `span_s` of `sound` in the source's spectrogram
    (`log_spectrogram`), confirmed by a second probe two thirds in at the same shift and time lag."""
    spec = log_spectrogram(sound, sr)
    a_s, b_s = span_s
    c1, c2 = (round((a_s + (b_s - a_s) * q) * sr / HOP) - PROBE_HOPS // 2 for q in (1 / 3, 2 / 3))
    if c1 < 0 or c2 + PROBE_HOPS > spec.shape[1] or source_spec.shape[1] < PROBE_HOPS + 2:
        return ShiftedMatch(0.0, 0.0, 0.0, 0.0)
    p1, p2 = spec[:, c1: c1 + PROBE_HOPS], spec[:, c2: c2 + PROBE_HOPS]
    best = (-1.0, 0, 0)
    for sh in range(-MAX_SHIFT_SEMITONES * BINS_PER_SEMITONE, MAX_SHIFT_SEMITONES * BINS_PER_SEMITONE + 1):
        ncc = _ncc_over_time(*_overlap(p1, source_spec, sh))
        k = int(np.argmax(ncc))
        if ncc[k] > best[0]:
            best = (float(ncc[k]), sh, k)
    first, sh, at = best
    want = at + (c2 - c1)  # the same time later in the source: the shifter kept the timing
    lo, hi = max(0, want - 1), min(source_spec.shape[1], want + PROBE_HOPS + 1)
    second = -1.0
    if hi - lo >= PROBE_HOPS:
        a2, b2 = _overlap(p2, source_spec[:, lo:hi], sh)
        second = float(np.max(_ncc_over_time(a2, b2)))
    return ShiftedMatch(min(first, second), sh / BINS_PER_SEMITONE, first, second)
