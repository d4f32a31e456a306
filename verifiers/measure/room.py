"""Room acoustics from an impulse response: RT60 (T20, T30, EDT) by Schroeder integration, and DRR.

Never fit the full 60 dB: with a −50 dB noise floor a 0.6 s room read 1.98 s that way (notes). The
decay curve is built the ISO 3382 way with Lundeby-style noise handling:

1. the noise floor is the mean power of the last 10 % of the response;
2. a line is fitted to the 10 ms-smoothed envelope between 5 dB below its peak and 10 dB above the
   floor, and its crossing with the floor is the truncation point;
3. the Schroeder backward integral runs from there, plus the energy the fitted line says lies beyond
   it (so the curve's tail is not bent down by truncation nor up by noise).

T20 fits −5…−25 dB, T30 −5…−35 dB, EDT 0…−10 dB of that curve; each is reported as the 60 dB
extrapolation, with the fit's correlation so callers can refuse a poor fit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verifiers.measure.audio_io import check_signal
from verifiers.measure.errors import MediaError


@dataclass(frozen=True)
class DecayFit:
    rt60_s: float
    r: float  # correlation of the linear fit (−1 = perfect decay)
    range_db: tuple[float, float]


@dataclass(frozen=True)
class ReverbTime:
    t20: DecayFit | None
    t30: DecayFit | None
    edt: DecayFit | None
    noise_floor_db: float  # relative to the peak of the smoothed envelope
    truncation_s: float  # where the decay meets the noise floor (from the IR's start)


def _smoothed_db(e: np.ndarray, win: int) -> np.ndarray:
    k = len(e) // win
    blocks = e[: k * win].reshape(k, win).mean(axis=1)
    return 10.0 * np.log10(np.maximum(blocks, 1e-30))


def schroeder_curve_db(ir: np.ndarray, sample_rate_hz: int) -> tuple[np.ndarray, float, float]:
    """(decay curve in dB from the IR's peak onward, noise floor dB, truncation time s from peak)."""
    x = check_signal(ir, "impulse response")
    if x.ndim != 1:
        raise ValueError("impulse response must be mono (1-D)")
    start = int(np.argmax(np.abs(x)))
    e = x[start:] ** 2
    if len(e) < sample_rate_hz * 0.05:
        raise MediaError("impulse response shorter than 50 ms after its peak")
    win = max(1, int(0.01 * sample_rate_hz))
    env_db = _smoothed_db(e, win)
    tail = e[int(len(e) * 0.9):]
    noise = float(tail.mean())
    peak_db = float(env_db.max())
    noise_db = 10.0 * np.log10(max(noise, 1e-30))
    t_blocks = (np.arange(len(env_db)) + 0.5) * win / sample_rate_hz
    # decay region: after the envelope falls 5 dB below its peak, until it is 10 dB above the floor
    below5 = np.nonzero(env_db <= peak_db - 5.0)[0]
    first = int(below5[0]) if len(below5) else 0
    above_floor = np.nonzero(env_db[first:] <= noise_db + 10.0)[0]
    last = first + int(above_floor[0]) if len(above_floor) else len(env_db)
    cut = len(e)
    slope = None
    if last - first >= 3:
        slope, icpt = np.polyfit(t_blocks[first:last], env_db[first:last], 1)
        if slope < 0:
            t_cross = (noise_db - icpt) / slope
            cut = int(np.clip(t_cross * sample_rate_hz, win, len(e)))
    # remove the noise's share of the power before integrating up to the cut
    clean = np.maximum(e[:cut] - noise, 0.0) if cut < len(e) else e[:cut]
    tail_energy = 0.0
    if slope is not None and slope < 0 and cut < len(e):
        # energy of the fitted exponential beyond the cut: P(t_c) · τ, with P in power per sample
        tau_s = -10.0 / (slope * np.log(10.0))
        p_cut = 10.0 ** ((icpt + slope * cut / sample_rate_hz) / 10.0)
        tail_energy = p_cut * tau_s * sample_rate_hz
    edc = np.cumsum(clean[::-1])[::-1] + tail_energy
    edc_db = 10.0 * np.log10(np.maximum(edc, 1e-300) / edc[0])
    return edc_db, noise_db - peak_db, cut / sample_rate_hz


def _fit(edc_db: np.ndarray, sample_rate_hz: int, hi_db: float, lo_db: float) -> DecayFit | None:
    idx = np.nonzero((edc_db <= hi_db) & (edc_db >= lo_db))[0]
    if len(idx) < 10 or edc_db.min() > lo_db:
        return None
    i0, i1 = int(idx[0]), int(idx[-1]) + 1
    t = np.arange(i0, i1) / sample_rate_hz
    y = edc_db[i0:i1]
    step = max(1, len(t) // 4000)
    slope, _ = np.polyfit(t[::step], y[::step], 1)
    r = float(np.corrcoef(t[::step], y[::step])[0, 1])
    if slope >= 0:
        return None
    return DecayFit(rt60_s=float(-60.0 / slope), r=r, range_db=(hi_db, lo_db))


def reverb_time(ir: np.ndarray, sample_rate_hz: int) -> ReverbTime:
    """T20, T30 and EDT of an impulse response (None where the decay range is not available)."""
    edc_db, floor_db, cut_s = schroeder_curve_db(ir, sample_rate_hz)
    return ReverbTime(t20=_fit(edc_db, sample_rate_hz, -5.0, -25.0), t30=_fit(edc_db, sample_rate_hz, -5.0, -35.0),
                      edt=_fit(edc_db, sample_rate_hz, 0.0, -10.0), noise_floor_db=floor_db, truncation_s=cut_s)


def drr_db(ir: np.ndarray, sample_rate_hz: int, *, direct_ms: float = 2.5) -> float:
    """Direct-to-reverberant ratio: energy within ±`direct_ms` of the peak vs everything after it."""
    x = check_signal(ir, "impulse response")
    peak = int(np.argmax(np.abs(x)))
    half = max(1, int(direct_ms * 1e-3 * sample_rate_hz))
    e = x * x
    direct = float(e[max(0, peak - half): peak + half + 1].sum())
    reverb = float(e[peak + half + 1:].sum())
    if reverb <= 0:
        return float("inf")
    return 10.0 * float(np.log10(direct / reverb))
