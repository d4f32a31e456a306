"""Fundamental frequency per frame by YIN (de Cheveigné & Kawahara 2002), vectorised with numpy.

The measurement notes recommend librosa.yin (0.7 cent median error on a Doppler sweep); librosa is
not a dependency here, so this is the same algorithm: difference function from FFT
autocorrelation and windowed energies, cumulative-mean normalisation, the first dip under
`threshold` (else the global minimum), parabolic interpolation of the period. Frames whose best
normalised difference stays above `max_aperiodicity` are unvoiced (f0 = nan).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verifiers.measure.audio_io import check_signal


@dataclass
class PitchTrack:
    times_s: np.ndarray  # centre of the samples each frame's estimate compares
    f0_hz: np.ndarray  # nan where unvoiced
    aperiodicity: np.ndarray  # normalised difference at the chosen period (0 = perfectly periodic)

    def voiced(self) -> np.ndarray:
        return np.isfinite(self.f0_hz)


def yin(mono: np.ndarray, sample_rate_hz: int, *, fmin_hz: float = 50.0, fmax_hz: float = 2000.0,
        frame_length: int | None = None, hop_length: int | None = None, threshold: float = 0.1,
        max_aperiodicity: float = 0.35) -> PitchTrack:
    """f0 of every frame of a mono signal; frame_length must cover two periods of `fmin_hz`."""
    x = check_signal(mono, "pitch input")
    if x.ndim != 1:
        raise ValueError(f"yin wants a mono 1-D signal, got shape {x.shape}")
    sr = int(sample_rate_hz)
    max_period = int(np.ceil(sr / fmin_hz))
    min_period = max(2, int(np.floor(sr / fmax_hz)))
    if frame_length is None:
        frame_length = int(2 ** np.ceil(np.log2(2 * max_period + 2)))
    win = frame_length // 2
    if max_period >= win:
        raise ValueError(f"frame_length {frame_length} too short for fmin {fmin_hz} Hz at {sr} Hz")
    hop = hop_length or max(1, sr // 200)
    pad = np.concatenate([np.zeros(frame_length // 2), x, np.zeros(frame_length // 2)])
    n_frames = 1 + (len(pad) - frame_length) // hop
    if n_frames <= 0:
        return PitchTrack(np.array([]), np.array([]), np.array([]))
    idx = np.arange(frame_length)[None, :] + hop * np.arange(n_frames)[:, None]
    frames = pad[idx]
    # r_t(tau) = sum_{j<win} x[j] x[j+tau]: correlate the first `win` samples against the frame
    nfft = int(2 ** np.ceil(np.log2(2 * frame_length)))
    a = np.fft.rfft(frames, nfft, axis=1)
    b = np.fft.rfft(frames[:, :win], nfft, axis=1)
    acf = np.fft.irfft(a * np.conj(b), nfft, axis=1)[:, : max_period + 1]
    c = np.concatenate([np.zeros((n_frames, 1)), np.cumsum(frames * frames, axis=1)], axis=1)
    taus = np.arange(max_period + 1)
    energy = c[:, taus + win] - c[:, taus]  # sum of x[j+tau]^2 over j < win
    diff = energy[:, :1] + energy - 2 * acf
    diff = np.maximum(diff, 0.0)
    cum = np.cumsum(diff[:, 1:], axis=1) / np.arange(1, max_period + 1)
    cmndf = np.ones_like(diff)
    cmndf[:, 1:] = diff[:, 1:] / np.maximum(cum, 1e-20)
    f0 = np.full(n_frames, np.nan)
    aper = np.ones(n_frames)
    taus_used = np.zeros(n_frames)
    rng = cmndf[:, min_period: max_period + 1]
    for i in range(n_frames):
        row = rng[i]
        below = np.nonzero(row < threshold)[0]
        if len(below):
            k = int(below[0])
            while k + 1 < len(row) and row[k + 1] < row[k]:
                k += 1
        else:
            k = int(np.argmin(row))
        aper[i] = float(row[k])
        if aper[i] > max_aperiodicity or c[i, -1] <= 1e-12:
            continue
        tau = k + min_period
        if 1 <= k < len(row) - 1:
            y0, y1, y2 = row[k - 1], row[k], row[k + 1]
            den = y0 - 2 * y1 + y2
            shift = 0.5 * (y0 - y2) / den if abs(den) > 1e-12 else 0.0
            tau = tau + float(np.clip(shift, -1, 1))
        f0[i] = sr / tau
        taus_used[i] = tau
    # The difference function compares x[j] with x[j+tau] for j < win: its centre of mass is
    # (win + tau) / 2 into the frame, not the frame centre; stamp it there (on a glide a frame-centre
    # stamp reads several cents off).
    times = (np.arange(n_frames) * hop - frame_length // 2 + (win + taus_used) / 2) / sr
    return PitchTrack(times, f0, aper)
