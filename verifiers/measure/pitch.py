"""Fundamental-frequency tracking with YIN (de Cheveigné & Kawahara 2002), in numpy.

For Doppler passes and slide-whistle glissandi: one clear periodic source at a time. librosa.yin
measured 0.7 cent median error on a Doppler sweep here; this is the same algorithm without the
dependency: difference function via FFT cross-correlation, cumulative-mean normalisation, absolute
threshold, then parabolic interpolation of the chosen dip for sub-sample lag. Frames whose best dip
stays above `voicing_threshold` are unvoiced (NaN), not a guess.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from verifiers.measure.audio_io import check_signal


@dataclass(frozen=True)
class PitchTrack:
    times_s: np.ndarray  # frame centres
    f0_hz: np.ndarray  # NaN where unvoiced
    aperiodicity: np.ndarray  # the normalised dip at the chosen lag (0 = perfectly periodic)

    def cents_relative_to(self, reference_hz: np.ndarray | float) -> np.ndarray:
        return 1200.0 * np.log2(self.f0_hz / np.asarray(reference_hz))


def yin(mono: np.ndarray, sample_rate_hz: int, *, fmin_hz: float = 60.0, fmax_hz: float = 2000.0,
        hop_s: float = 0.01, threshold: float = 0.1, voicing_threshold: float = 0.3) -> PitchTrack:
    """YIN f0 track. The analysis window is one period of `fmin_hz`, so lower fmin = coarser time."""
    x = check_signal(mono, "pitch input")
    if x.ndim != 1:
        raise ValueError("yin wants a mono 1-D signal")
    sr = int(sample_rate_hz)
    tau_max = int(np.ceil(sr / fmin_hz))
    tau_min = max(2, int(np.floor(sr / fmax_hz)))
    w = tau_max  # integration window
    n = w + tau_max + 1  # samples a frame needs
    hop = max(1, round(hop_s * sr))
    if len(x) < n:
        raise ValueError(f"signal too short for fmin {fmin_hz} Hz: need {n} samples, have {len(x)}")
    frames = sliding_window_view(x, n)[::hop]
    nf = frames.shape[0]
    nfft = 1 << int(np.ceil(np.log2(n + w)))
    a = np.fft.rfft(frames[:, :w], nfft)
    b = np.fft.rfft(frames, nfft)
    cross = np.fft.irfft(np.conj(a) * b, nfft)[:, : tau_max + 1]  # r_t(τ) = Σ x_j x_{j+τ}
    sq = frames * frames
    csum = np.concatenate([np.zeros((nf, 1)), np.cumsum(sq, axis=1)], axis=1)
    taus = np.arange(tau_max + 1)
    e_tau = csum[:, taus + w] - csum[:, taus]  # Σ x_{j+τ}² over the window
    d = e_tau[:, :1] + e_tau - 2.0 * cross
    d = np.maximum(d, 0.0)
    d[:, 0] = 0.0
    cum = np.cumsum(d[:, 1:], axis=1)
    cmnd = np.ones_like(d)
    with np.errstate(divide="ignore", invalid="ignore"):
        cmnd[:, 1:] = d[:, 1:] * taus[1:] / cum
    cmnd[~np.isfinite(cmnd)] = 1.0

    f0 = np.full(nf, np.nan)
    ap = np.ones(nf)
    seg = cmnd[:, tau_min: tau_max]
    below = seg < threshold
    has = below.any(axis=1)
    first = np.where(has, np.argmax(below, axis=1), np.argmin(seg, axis=1)) + tau_min
    for i in range(nf):
        t = int(first[i])
        if has[i]:
            while t + 1 < tau_max and cmnd[i, t + 1] < cmnd[i, t]:
                t += 1
        ap[i] = cmnd[i, t]
        if ap[i] > voicing_threshold or t <= tau_min or t >= tau_max - 1:
            continue
        y0, y1, y2 = cmnd[i, t - 1], cmnd[i, t], cmnd[i, t + 1]
        den = y0 - 2.0 * y1 + y2
        shift = 0.5 * (y0 - y2) / den if den > 0 else 0.0
        f0[i] = sr / (t + float(np.clip(shift, -1.0, 1.0)))
    times = (np.arange(nf) * hop + n / 2.0) / sr
    return PitchTrack(times_s=times, f0_hz=f0, aperiodicity=ap)
