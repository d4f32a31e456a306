"""True peak (BS.1770 Annex 2): the peak of the signal oversampled to ≥ 192 kHz.

**Interpolator.** A Nyquist (M-th band) windowed sinc: the oversampled value at input time
j + p/factor is Σ_d g_p[d]·x[j + d] over `_TAPS_PER_PHASE` samples (d = 1 − T/2 … T/2), with
g_p[d] = sinc(p/factor − d)·kaiser(β = 6). Phase 0 is the identity (sinc at integers), so the
samples themselves are exact and only factor − 1 phases are computed. 24 taps per phase keep sines
from 0 to 20 kHz at 48 kHz within ±0.012 dB of their continuous peak (the 0.98-cutoff 24-tap design
this replaced: −0.11 dB at 20 kHz; a 16-tap Nyquist filter: −0.06/+0.09 dB).

**Speed.** Positions go in rows of `_ROW`; a row's oversampled values are one product of its
(_ROW + T − 1) input samples with a fixed Toeplitz matrix, so whole batches of rows are one BLAS
sgemm. That is done in float32 and only the rows that can hold the maximum are recomputed in
float64, so the answer is the float64 one: |y₃₂ − y₆₄| ≤ (T + 4)·2⁻²⁴·‖g‖₁·max|x| (conversion
and summation error, any summation order), and every row whose float32 peak is within twice that
of the float32 maximum is redone exactly.

**Skip that cannot change the answer.** An interpolated value is at most ‖g‖₁·max|x| over its
span (Hölder). A row whose bound is not above a value already known to be reached (the sample
peak, or a computed row's float32 peak minus the error bound) is not computed. The loudest rows
by bound are computed first, so on programme material most rows are skipped. The whole-signal
function and the incremental :class:`TruePeakMeter` (the live probe) share this scan.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.special import i0

_TAPS_PER_PHASE = 24  # T: input samples feeding one interpolated value
_KAISER_BETA = 6.0
_HALF = _TAPS_PER_PHASE // 2  # value at j + p/f reads x[j − _HALF + 1 … j + _HALF]
_ROW = 32  # positions per matrix row (≥ T − 1, so a row's span is it and the next row)
_WIDTH = _ROW + _TAPS_PER_PHASE - 1  # input samples feeding one row
_CHUNK_ROWS = 2048  # rows per sgemm call: ~0.5 MB of input, ~0.8 MB of output at 4×
_WARMUP_ROWS = 64  # loudest-bound rows computed first, to raise the skip threshold early
_F32_EPS = 2.0 ** -24


def oversampling_factor(sample_rate_hz: int) -> int:
    """4× below 96 kHz, 2× below 192 kHz, none above (BS.1770: reach at least 192 kHz)."""
    if sample_rate_hz < 96000:
        return 4
    if sample_rate_hz < 192000:
        return 2
    return 1


@dataclass(frozen=True)
class _Kernel:
    """One oversampling factor's interpolator, as phase taps and as row matrices."""

    factor: int
    taps: np.ndarray  # (T, factor − 1): taps[i, p − 1] multiplies x[j + i − _HALF + 1]
    rows64: np.ndarray  # (_WIDTH, _ROW·(factor − 1)): column i·(factor − 1) + p − 1 is j = i, phase p
    rows32: np.ndarray
    l1: float  # worst phase's ‖g‖₁: the Hölder bound's factor
    err32: float  # |float32 − float64| per unit of max|x| (see module docstring)


@lru_cache(maxsize=4)
def _kernel(factor: int) -> _Kernel:
    d = np.arange(1 - _HALF, _HALF + 1)
    taps = np.zeros((_TAPS_PER_PHASE, max(factor - 1, 0)))
    for p in range(1, factor):
        t = p / factor - d
        window = i0(_KAISER_BETA * np.sqrt(np.clip(1.0 - (t / _HALF) ** 2, 0.0, None))) / i0(_KAISER_BETA)
        taps[:, p - 1] = np.sinc(t) * window
    phases = factor - 1
    rows = np.zeros((_WIDTH, _ROW * phases))
    for i in range(_ROW):
        rows[i:i + _TAPS_PER_PHASE, i * phases:(i + 1) * phases] = taps
    l1 = float(np.abs(taps).sum(axis=0).max()) if phases else 1.0
    return _Kernel(factor, taps, rows, rows.astype(np.float32), l1,
                   (_TAPS_PER_PHASE + 4) * _F32_EPS * l1)


def prototype_filter(factor: int) -> np.ndarray:
    """The interpolator as one upsampling FIR h (for checks): `upfirdn(h, x, up=factor)[i]` is the
    value at input time (i − factor·_HALF + 1)/factor, phase 0 being the samples themselves."""
    k = _kernel(factor)
    h = np.zeros(factor * _TAPS_PER_PHASE - 1)
    centre = factor * _HALF - 1  # h[centre + factor·t] is the tap for time offset t
    h[centre] = 1.0
    d = np.arange(1 - _HALF, _HALF + 1)
    for p in range(1, factor):
        idx = centre + p - factor * d  # g_p[d] = h(p/factor − d)
        ok = (idx >= 0) & (idx < len(h))
        h[idx[ok]] = k.taps[ok, p - 1]
    return h


def _to_dbtp(peak: float) -> float:
    return 20.0 * math.log10(peak) if peak > 0 else -math.inf


def _row_peaks(a: np.ndarray, matrix: np.ndarray, rows: np.ndarray, last: int, valid_last: int,
               phases: int) -> np.ndarray:
    """max |oversampled| of each row of `a` (its rows' spans); row number `last` counts only its
    first `valid_last` positions (the rest lie past the scanned range)."""
    y = a @ matrix
    np.abs(y, out=y)
    peaks = y.max(axis=1)
    if valid_last < _ROW:
        hit = np.flatnonzero(rows == last)
        if len(hit):
            peaks[hit] = y[hit, :valid_last * phases].max(axis=1)
    return peaks


def _gather64(sig: np.ndarray, starts: np.ndarray, width: int = _WIDTH) -> np.ndarray:
    """(len(starts), width) float64 spans sig[s : s + width], zeros outside sig."""
    idx = starts[:, None] + np.arange(width)
    if len(starts) and starts.min() >= 0 and starts.max() + width <= len(sig):
        return sig[idx]
    inside = (idx >= 0) & (idx < len(sig))
    return np.where(inside, sig[np.clip(idx, 0, len(sig) - 1)], 0.0)


def padded_f32(x: np.ndarray) -> np.ndarray:
    """(channels, L) float32 copy of x (frames, channels) laid out for :func:`whole_signal_peaks`:
    the signal at [SIGNAL_AT, SIGNAL_AT + frames), zeros around, L a multiple of _ROW. Callers reuse
    `out[:, SIGNAL_AT:SIGNAL_AT + frames]` as their own float32 copy (the loudness meter filters
    it), so a signal is converted once. Converted in cache-sized pieces (a whole-array strided
    cast is ~2× slower)."""
    n = x.shape[0]
    out = np.empty((x.shape[1], (-(-(n + SIGNAL_AT) // _ROW) + 1) * _ROW), dtype=np.float32)
    out[:, :SIGNAL_AT] = 0.0
    out[:, SIGNAL_AT + n:] = 0.0
    step = 1 << 14
    for i in range(0, n, step):
        piece = x[i:i + step].astype(np.float32)
        out[:, SIGNAL_AT + i:SIGNAL_AT + i + len(piece)] = piece.T
    return out


SIGNAL_AT = _HALF - 1  # where padded_f32 puts the first sample


def block_peaks(ext: np.ndarray) -> np.ndarray:
    """max |ext| of each _ROW-sample block (the last one may be short), as float64.

    By halving, in cache-sized pieces: numpy's max over a short axis is slow, and whole-signal
    temporaries cost page faults."""
    nb = len(ext) // _ROW
    out = np.empty(-(-len(ext) // _ROW), dtype=np.float32)
    if len(out) > nb:
        out[nb] = np.abs(ext[nb * _ROW:]).max()
    step = 2048
    for b0 in range(0, nb, step):
        b1 = min(nb, b0 + step)
        a = np.abs(ext[b0 * _ROW:b1 * _ROW]).reshape(b1 - b0, _ROW)
        while a.shape[1] > 1:
            half = a.shape[1] // 2
            a = np.maximum(a[:, :half], a[:, half:])
        out[b0:b1] = a[:, 0]
    return out.astype(np.float64)


def exact_peak(peaks32: np.ndarray, sig: np.ndarray, base: int) -> float:
    """max |sig| exactly (float64), from the float32 block peaks of its copy ext (ext[0] = sig[base]):
    only the blocks whose float32 peak is within rounding of the largest are read in float64."""
    if len(peaks32) == 0:
        return 0.0
    top = float(peaks32.max())
    if top == 0.0:
        return 0.0
    blocks = np.flatnonzero(peaks32 >= top * (1.0 - 4 * _F32_EPS))
    if len(blocks) > len(peaks32) // 16:  # a steady tone peaks in every block: one plain pass
        return max(float(sig.max()), -float(sig.min()))
    return float(np.abs(_gather64(sig, base + blocks * _ROW, _ROW)).max())


def _scan_ext(ext: np.ndarray, sig: np.ndarray, lo: int, hi: int, best: float, factor: int,
              peaks32: np.ndarray | None = None) -> float:
    """max(best, max |interpolated| at input times j + p/factor, j in [lo, hi), p ≥ 1), exact in
    float64; samples outside `sig` are zero. `ext` is sig in float32 from index lo − _HALF + 1 on
    (zeros outside sig), at least (rows + 1)·_ROW long. `best` must be a value the signal reaches
    (e.g. its sample peak): rows that cannot beat it are skipped. `peaks32`: block_peaks(ext) if
    already known."""
    if hi <= lo or factor == 1:
        return best
    k = _kernel(factor)
    phases = factor - 1
    nr = -(-(hi - lo) // _ROW)
    valid_last = (hi - lo) - (nr - 1) * _ROW
    base = lo - _HALF + 1  # ext[0] is sig[base]; row r spans ext[r·_ROW : r·_ROW + _WIDTH]
    block_peak = block_peaks(ext[:(nr + 1) * _ROW]) if peaks32 is None else peaks32[:nr + 1]
    span_peak = np.maximum(block_peak[:-1], block_peak[1:])
    x_max = float(block_peak.max()) * (1.0 + 4 * _F32_EPS)
    bound = span_peak * (k.l1 * (1.0 + 1e-9)) * (1.0 + 4 * _F32_EPS)
    err = k.err32 * x_max
    view = np.lib.stride_tricks.as_strided(ext, shape=(nr, _WIDTH), strides=(_ROW * ext.itemsize, ext.itemsize),
                                           writeable=False)

    cand = np.flatnonzero(bound > best)
    if len(cand) == 0:
        return best
    done_rows: list[np.ndarray] = []
    done_peaks: list[np.ndarray] = []
    floor = best  # a value the float64 signal is known to reach
    if len(cand) > 4 * _WARMUP_ROWS:  # loudest bounds first: raises `floor` so the rest can skip
        top = cand[np.argpartition(bound[cand], -_WARMUP_ROWS)[-_WARMUP_ROWS:]]
        top.sort()
        pk = _row_peaks(view[top], k.rows32, top, nr - 1, valid_last, phases)
        done_rows.append(top)
        done_peaks.append(pk)
        floor = max(floor, float(pk.max()) - err)
        keep = bound[cand] > floor
        keep[np.searchsorted(cand, top)] = False
        cand = cand[keep]
    for c0 in range(0, len(cand), _CHUNK_ROWS):
        rows = cand[c0:c0 + _CHUNK_ROWS]
        rows = rows[bound[rows] > floor]
        if len(rows) == 0:
            continue
        pk = _row_peaks(view[rows], k.rows32, rows, nr - 1, valid_last, phases)
        done_rows.append(rows)
        done_peaks.append(pk)
        floor = max(floor, float(pk.max()) - err)
    if not done_rows:
        return best
    rows = np.concatenate(done_rows)
    peaks = np.concatenate(done_peaks)
    top32 = float(peaks.max())
    if top32 + err <= best:
        return best
    # exact: every row whose float64 peak could be the maximum (or beat `best`), in float64
    redo = np.sort(rows[peaks >= max(best - err, top32 - 2 * err)])
    view64 = None
    if len(redo) > nr // 16:  # steady material (DC, square waves): many near-equal rows
        ext64 = np.zeros(len(ext))
        s0, s1 = max(0, base), min(len(sig), base + len(ext))
        ext64[s0 - base:s1 - base] = sig[s0:s1]
        view64 = np.lib.stride_tricks.as_strided(ext64, shape=(nr, _WIDTH), strides=(_ROW * 8, 8), writeable=False)
    exact = best
    for c0 in range(0, len(redo), _CHUNK_ROWS):
        part = redo[c0:c0 + _CHUNK_ROWS]
        a64 = view64[part] if view64 is not None else _gather64(sig, base + part * _ROW)
        exact = max(exact, float(_row_peaks(a64, k.rows64, part, nr - 1, valid_last, phases).max()))
    return exact


def _scan(sig: np.ndarray, lo: int, hi: int, best: float, factor: int) -> float:
    """:func:`_scan_ext` on a float64 signal (converts the needed part)."""
    if hi <= lo or factor == 1:
        return best
    base = lo - _HALF + 1
    ext = np.zeros((-(-(hi - lo) // _ROW) + 1) * _ROW, dtype=np.float32)
    s0, s1 = max(0, base), min(len(sig), base + len(ext))
    if s1 > s0:
        ext[s0 - base:s1 - base] = sig[s0:s1]
    return _scan_ext(ext, sig, lo, hi, best, factor)


def whole_signal_peaks(x: np.ndarray, padded: np.ndarray, sample_rate_hz: int) -> tuple[np.ndarray, np.ndarray]:
    """(sample peak, true peak) per channel, linear and exact, of a whole signal x (frames,
    channels), given its :func:`padded_f32` copy."""
    factor = oversampling_factor(sample_rate_hz)
    n = x.shape[0]
    sample, true = np.zeros(x.shape[1]), np.zeros(x.shape[1])
    for ch in range(x.shape[1]):
        peaks32 = block_peaks(padded[ch])
        sample[ch] = exact_peak(peaks32, x[:, ch], -SIGNAL_AT)
        true[ch] = _scan_ext(padded[ch], x[:, ch], 0, n, float(sample[ch]), factor, peaks32)
    return sample, true


def true_peak_dbtp(samples: np.ndarray, sample_rate_hz: int) -> list[float]:
    """True peak per channel (dBTP) of a whole signal (frames, channels) or (frames,)."""
    x = np.asarray(samples)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)  # ints: |−32768| must not wrap
    if x.ndim == 1:
        x = x[:, None]
    if x.shape[0] == 0:
        return [-math.inf] * x.shape[1]
    _, true = whole_signal_peaks(x, padded_f32(x), sample_rate_hz)
    return [_to_dbtp(float(p)) for p in true]


class TruePeakMeter:
    """Incremental true peak per channel: push (frames, channels) blocks in order.

    A value at j + p/factor needs x up to j + _HALF, so each push settles the positions whose span
    has arrived and keeps the span of the first unsettled one (`_HALF − 1` samples before it).
    Before the first sample the signal is zero, as in :func:`true_peak_dbtp`; the two agree exactly.
    """

    def __init__(self, sample_rate_hz: int, channels: int) -> None:
        self.factor = oversampling_factor(sample_rate_hz)
        # starts at the first unsettled position − _HALF + 1; float32 so float32 pushes stay float32
        # (no block-sized float64 copy; float64 pushes promote it and stay exact)
        self._buf = np.zeros((_HALF - 1, channels), dtype=np.float32)
        self._peak = np.zeros(channels)

    def push(self, x: np.ndarray) -> np.ndarray:
        """Add samples; returns their exact per-channel |x| maximum (the loudness meter's sample
        peak comes from here, so a block is not scanned twice)."""
        joined = np.concatenate([self._buf, x], axis=0)
        m = joined.shape[0]
        lo, hi = _HALF - 1, m - _HALF  # settled now: positions [lo, hi) of `joined`
        ext = np.zeros((joined.shape[1], -(-max(m, (-(-(hi - lo) // _ROW) + 1) * _ROW) // _ROW) * _ROW),
                       dtype=np.float32)
        ext[:, :m] = joined.T
        sample = np.zeros(joined.shape[1])
        for ch in range(joined.shape[1]):
            peaks32 = block_peaks(ext[ch])
            # the kept history was pushed before: its samples may count again
            sample[ch] = exact_peak(peaks32, joined[:, ch], 0)
            best = max(float(self._peak[ch]), sample[ch])
            self._peak[ch] = _scan_ext(ext[ch], joined[:, ch], lo, hi, best, self.factor, peaks32)
        self._buf = joined[max(lo, hi) - _HALF + 1:].copy()
        return sample

    def per_channel_dbtp(self) -> list[float]:
        """Peaks so far, including the not yet settled tail as if the signal ended here."""
        buf = self._buf
        return [_to_dbtp(_scan(np.ascontiguousarray(buf[:, ch]), _HALF - 1, buf.shape[0], float(self._peak[ch]),
                               self.factor)) for ch in range(buf.shape[1])]
