"""Is this render made from that source? Two phase tests that ignore level, pan and EQ.

Why: a check that judges how an input was treated (the pan of the CAR track, the Doppler of the
engine loop) must first prove the render is that input (issue 21: white noise panned left to right
scored 100 on T02, a swept sawtooth 100 on T10). Gain, pan law, a swell, EQ or a low-pass, dither,
24-bit or float and a few ms of plugin latency leave the *phase* structure of a signal in place; noise,
a synthesiser or another recording do not have it.

- :func:`block_derivation` (a timeline: the render at time t comes from the source near t): each
  short block of the render is whitened (unit magnitude per bin inside `band_hz`: GCC-PHAT style)
  and correlated with the whitened source within `max_lag_s` of its own time. Made from the source
  → peaks 0.45–0.85 (T02: the oracle, its 44.1 kHz, float, dithered and 3 ms-late exports);
  white noise → 0.12–0.17, the chance level of a 0.1 s block over 100–3000 Hz (about 580 degrees of
  freedom). `MIN_BLOCK_PEAK` (0.3) sits between the two.
- :func:`harmonic_phase_match` (a pitched loop heard at another pitch: Doppler): the phases of the
  first harmonics at the block's own f0. A time shift adds k·φ to harmonic k and a smooth filter a
  smooth phase, so the second difference of phase over k, φ(k+1) − 2φ(k) + φ(k−1), is the loop's
  fingerprint at any pitch, delay or level. Score = |mean over k of exp(i·(D_render − D_loop))|:
  ≈ 1 for the loop read at any speed (0.81–1.0 on T10's oracle), ≈ 1/√K for a synthesiser with its
  own phases (0.13–0.19 for a sawtooth at the same pitch, K ≈ 28).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.signal import fftconvolve

from verifiers.measure.audio_io import resample

WORK_HZ = 16_000
BAND_HZ = (100.0, 3000.0)
#: a block "comes from the source" at this peak: legitimate processing measured ≥ 0.45 on 95 % of
#: blocks, white noise ≤ 0.17 (chance for a 0.1 s block; see the module doc)
MIN_BLOCK_PEAK = 0.3
#: harmonic-phase agreement of a block made from the loop: ≥ 0.8 measured, synthesisers ≤ 0.2
MIN_HARMONIC_MATCH = 0.5


@dataclass(frozen=True)
class Derivation:
    """Per judged block: its start (s) and its score against the source (peak or phase agreement)."""

    starts_s: np.ndarray
    scores: np.ndarray
    min_score: float

    @property
    def share(self) -> float:
        """Share of judged blocks that come from the source (0 when nothing was judged)."""
        return float(np.mean(self.scores >= self.min_score)) if len(self.scores) else 0.0

    def evidence(self) -> dict:
        return {"blocks": len(self.scores), "share_matching": round(self.share, 3), "min_block_score": self.min_score,
                "median_block_score": round(float(np.median(self.scores)), 3) if len(self.scores) else None}


def _whiten(x: np.ndarray, band_hz: tuple[float, float]) -> np.ndarray:
    """Phase-only version of `x` inside the band (unit magnitude per bin, zero outside)."""
    spec = np.fft.rfft(x)
    f = np.fft.rfftfreq(len(x), 1 / WORK_HZ)
    mag = np.abs(spec)
    keep = (f >= band_hz[0]) & (f <= band_hz[1]) & (mag > 1e-12 * max(float(mag.max(initial=0.0)), 1e-30))
    out = np.zeros_like(spec)
    out[keep] = spec[keep] / mag[keep]
    return np.fft.irfft(out, len(x))


def _norm(x: np.ndarray) -> float:
    """Euclidean norm without BLAS (np.linalg.norm's threaded dot took 1.5 ms per 0.3 s file on a busy
    2-core machine: most of a varispeed search)."""
    return float(np.sqrt(np.sum(np.square(x))))


def sliding_ncc(block: np.ndarray, ref: np.ndarray) -> tuple[float, int]:
    """(max normalised correlation of `block` against every window of `ref`, that window's start);
    len(ref) ≥ len(block)."""
    num = fftconvolve(ref, block[::-1], mode="valid")
    e = np.concatenate([[0.0], np.cumsum(ref ** 2)])
    win = e[len(block):] - e[:-len(block)]
    den = np.sqrt(np.maximum(win, 1e-30)) * max(_norm(block), 1e-30)
    ncc = num / den
    k = int(np.argmax(ncc))
    return float(ncc[k]), k


def sliding_ncc_peak(block: np.ndarray, ref: np.ndarray) -> float:
    """Max normalised correlation of `block` against every window of `ref` (len(ref) ≥ len(block))."""
    return sliding_ncc(block, ref)[0]


#: varispeed search (a sampler or a DAW's "varispeed"/"pitch with rate"): speeds 1/1.26 … 1.26 (± 4
#: semitones, the range game-audio variations use) on a geometric grid at SEARCH_HZ, then refined at
#: the full rate. A broadband step decorrelates fast with speed (measured on T17's concrete steps:
#: full band NCC 0.55 at 0.5 % off, 4 kHz 0.67, 2 kHz 0.87), so the coarse grid runs at 2 kHz with
#: 0.5 % steps (≤ 0.25 % off: NCC ≥ 0.9 there), then at the full rate 0.1 % and 0.02 % (full band ≥ 0.99)
MAX_SPEED = 1.26
SEARCH_HZ = 2_000
COARSE_STEP = 0.005
FINE_STEP = 0.0002


@dataclass(frozen=True)
class VarispeedMatch:
    """Where a short file is in a longer source, compensating a speed change (pitch and time together)."""

    ncc: float  # full-band peak normalised correlation at the best speed
    speed: float  # the file plays the source this many times as fast (1.0: as it is)
    offset_s: float  # where the file's first sample is in the source

    def source_time_s(self, file_time_s: float) -> float:
        """The source time a moment of the file comes from."""
        return self.offset_s + self.speed * file_time_s


def _stretch(x: np.ndarray, factor: float) -> np.ndarray:
    """x made `factor` times as long (band-limited FFT resampling, zero-padded so nothing wraps)."""
    from scipy.signal import resample as fft_resample

    pad = np.concatenate([x, np.zeros(len(x) // 4 + 16)])
    return fft_resample(pad, max(2, round(len(pad) * factor)))


def varispeed_match(block: np.ndarray, ref: np.ndarray, sr: int, *, max_speed: float = MAX_SPEED,
                    enough_at_unity: float | None = None) -> VarispeedMatch:
    """The best place and speed of `block` (shorter) in `ref`, both at `sr`; speed 1 is tried exactly
    first, and returned without a search when its NCC reaches `enough_at_unity` (the common case: a
    file cut from the source as it is, 0.4 s of search saved per file)."""
    block, ref = np.asarray(block, dtype=float), np.asarray(ref, dtype=float)
    best_ncc, best_k = sliding_ncc(block, ref) if len(block) <= len(ref) else (0.0, 0)
    best = VarispeedMatch(best_ncc, 1.0, best_k / sr)
    if enough_at_unity is not None and best.ncc >= enough_at_unity:
        return best
    b4, r4 = resample(block, sr, SEARCH_HZ), resample(ref, sr, SEARCH_HZ)
    n = int(np.ceil(np.log(max_speed) / np.log1p(COARSE_STEP)))
    speeds = (1 + COARSE_STEP) ** np.arange(-n, n + 1)
    # the source's spectrum once for every speed (the sliding NCC of sliding_ncc, sharing its FFT)
    n_fft = int(2 ** np.ceil(np.log2(len(r4) + len(b4) * max_speed + 8)))
    ref_f = np.fft.rfft(r4, n_fft)
    e = np.concatenate([[0.0], np.cumsum(r4 ** 2)])
    coarse = []
    for speed in speeds:
        y = _stretch(b4, speed)
        m = len(y)
        if m > len(r4):
            continue
        num = np.fft.irfft(ref_f * np.fft.rfft(y[::-1], n_fft), n_fft)[m - 1: len(r4)]
        ncc = num / (np.sqrt(np.maximum(e[m:] - e[:-m], 1e-30)) * max(_norm(y), 1e-30))
        k = int(np.argmax(ncc))
        coarse.append((float(ncc[k]), k, float(speed)))
    if not coarse:
        return best
    _c, k4, speed0 = max(coarse)
    # refine at the full rate near the coarse place (± 20 ms of slack): the coarse pick may be a grid
    # step off at 2 kHz, so ± 0.6 % in 0.1 % steps, then ± 0.1 % in FINE_STEP around the best
    slack = round(0.02 * sr)
    a = max(0, round(k4 / SEARCH_HZ * sr) - slack)
    centre = speed0
    for step, half in ((0.001, 6), (FINE_STEP, 5)):
        for speed in centre * (1 + step) ** np.arange(-half, half + 1):
            y = _stretch(block, speed)
            seg = ref[a: a + len(y) + 2 * slack]
            if len(y) <= len(seg):
                c, k = sliding_ncc(y, seg)
                if c > best.ncc:
                    best = VarispeedMatch(c, float(speed), (a + k) / sr)
        centre = best.speed if best.speed != 1.0 else centre
    return best


def block_derivation(render: np.ndarray, source: np.ndarray, sr: int, *, starts_s: np.ndarray, block_s: float = 0.1,
                     max_lag_s: float = 0.1, band_hz: tuple[float, float] = BAND_HZ) -> Derivation:
    """Peak whitened correlation of each render block (mono, at `sr`) against the source near its time.

    A digitally silent block scores 0 (nothing in it comes from anywhere); blocks running past the
    end of the render are not judged.
    """
    r = resample(np.asarray(render, dtype=float), sr, WORK_HZ)
    src_w = _whiten(resample(np.asarray(source, dtype=float), sr, WORK_HZ), band_hz)
    n_blk, lag = round(block_s * WORK_HZ), round(max_lag_s * WORK_HZ)
    got_t, got = [], []
    for t0 in np.asarray(starts_s, dtype=float):
        a = round(t0 * WORK_HZ)
        if a < 0 or a + n_blk > len(r):
            continue
        blk = r[a: a + n_blk]
        got_t.append(t0)
        if np.max(np.abs(blk)) < 1e-6:
            got.append(0.0)
            continue
        lo, hi = a - lag, a + n_blk + lag
        ref = np.concatenate([np.zeros(max(0, -lo)), src_w[max(lo, 0): min(hi, len(src_w))],
                              np.zeros(max(0, hi - len(src_w)))])
        got.append(sliding_ncc_peak(_whiten(blk, band_hz), ref))
    return Derivation(np.asarray(got_t), np.asarray(got), MIN_BLOCK_PEAK)


def _harmonics(x: np.ndarray, sr: int, f0_hz: float, k_max: int) -> np.ndarray:
    """Complex amplitude of harmonics 1..k_max at the centre of `x` (Hann-windowed DFT at k·f0)."""
    tt = (np.arange(len(x)) - len(x) / 2) / sr
    base = np.exp(-2j * np.pi * f0_hz * tt)  # harmonic k's kernel is base**k: one exp per sample, not k
    xw = x * np.hanning(len(x))
    out = np.empty(k_max, dtype=complex)
    kern = np.ones(len(x), dtype=complex)
    for k in range(k_max):
        kern = kern * base
        out[k] = kern @ xw
    return out


def _phase_curvature(h: np.ndarray) -> np.ndarray:
    p = np.angle(h)
    return p[2:] - 2 * p[1:-1] + p[:-2]


def harmonic_phase_match(render: np.ndarray, sr: int, *, starts_s: np.ndarray, f0_hz: np.ndarray, block_s: float,
                         loop: np.ndarray, loop_f0_hz: float, max_hz: float = BAND_HZ[1]) -> Derivation:
    """Per render block (mono), how well its harmonic phase curvature matches the loop's (see module doc).

    f0_hz: the block's fundamental (nan: not judged). The loop's own harmonics are read over its
    whole length at `loop_f0_hz` (a seamless loop holds whole cycles).
    """
    k_max = max(3, int(max_hz // loop_f0_hz))
    ref = _phase_curvature(_harmonics(np.asarray(loop, dtype=float), sr, loop_f0_hz, k_max))
    n_blk = round(block_s * sr)
    got_t, got = [], []
    for t0, f0 in zip(np.asarray(starts_s, dtype=float), np.asarray(f0_hz, dtype=float), strict=True):
        a = round(t0 * sr)
        if not np.isfinite(f0) or a < 0 or a + n_blk > len(render):
            continue
        d = _phase_curvature(_harmonics(render[a: a + n_blk], sr, float(f0), k_max))
        got_t.append(t0)
        got.append(float(np.abs(np.mean(np.exp(1j * (d - ref))))))
    return Derivation(np.asarray(got_t), np.asarray(got), MIN_HARMONIC_MATCH)
