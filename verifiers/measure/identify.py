"""Which library sample occurs where in a mix: normalised cross-correlation (NCC).

NCC of a sample's first `length_s` against the mix is robust to gain, resampling and lossy round
trips (true samples score 0.86–0.99 after MP3 + resample, the best wrong one ≈ 0.4; see
../shared/notes/measurement.md). Chromaprint-style fingerprints cannot do this on short effects.

The NCC here is not mean-removed (audio is zero-mean over a few ms), so it is the cosine between the
template and the mix window: 1.0 for an exact, scaled copy. `gain` is the least-squares scale of the
template in the mix (mix ≈ gain · sample), so 0.5 means the sample sits 6 dB down.

Everything is at one sample rate: resample library samples to the mix's rate first
(:func:`verifiers.measure.audio_io.resample`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import fft as sp_fft
from scipy.signal import fftconvolve

from verifiers.measure.audio_io import check_signal
from verifiers.measure.memo import content_key, memo
from verifiers.measure.onsets import detect_onsets


@dataclass(frozen=True)
class Match:
    name: str
    ncc: float  # cosine similarity in [-1, 1]; ≥ 0.6 is a confident match on real material
    offset_s: float  # where the sample's first sample sits in the mix
    gain: float  # least-squares scale: mix ≈ gain · sample around offset_s


def _ncc_scan(segment: np.ndarray, template: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """NCC and dot product of `template` against every full-overlap position in `segment`."""
    return _Scanner(segment).scan(0, len(segment), "template", template)


class _Scanner:
    """NCC scans of many templates over windows of one mix, sharing the FFT work.

    A scan correlates a template with a window of the mix; identification makes thousands (every
    library sample at every onset). Done one by one, each costs three FFTs and a cumulative energy
    sum. Here the template's spectrum is computed once per FFT size and the window's spectrum and
    energy sums once per window, so a scan costs one inverse FFT. The arithmetic is the one
    scipy.signal.fftconvolve does (same transform sizes and order), so the results are the same.

    Window-side work (spectrum, energy sums, power envelope) is also kept in the content-keyed memo
    (verifiers.measure.memo), keyed on the window's samples, and so is each match (a few numbers),
    keyed on the window's and the template's samples: a self-test scores the same sources and often
    the same files many times (every mutant, every baseline), and equal samples give the same match.
    Per-template arrays are not memoised: thousands of them would push the window sides out.
    """

    def __init__(self, mix: np.ndarray) -> None:
        self.mix = mix
        self._templates: dict[tuple[str, int, int], tuple[np.ndarray, float]] = {}
        self._template_digests: dict[tuple[str, int], bytes] = {}
        self._window_digests: dict[tuple[int, int], bytes] = {}
        self._window_key: tuple[int, int, int] | None = None
        self._window: tuple[np.ndarray, np.ndarray] | None = None

    def window_digest(self, lo: int, end: int) -> bytes:
        if (lo, end) not in self._window_digests:
            self._window_digests[(lo, end)] = content_key(self.mix[lo:end])
        return self._window_digests[(lo, end)]

    def template_digest(self, name: str, template: np.ndarray) -> bytes:
        key = (name, len(template))
        if key not in self._template_digests:
            self._template_digests[key] = content_key(template)
        return self._template_digests[key]

    def _template(self, name: str, template: np.ndarray, size: int) -> tuple[np.ndarray, float]:
        key = (name, len(template), size)
        if key not in self._templates:
            self._templates[key] = (sp_fft.rfft(template[::-1], size), float(np.sqrt(np.dot(template, template))))
        return self._templates[key]

    def _window_spectrum(self, lo: int, end: int, size: int) -> tuple[np.ndarray, np.ndarray]:
        if self._window_key != (lo, end, size):
            seg = self.mix[lo:end]
            self._window = memo("ncc_window", (self.window_digest(lo, end), size),
                                lambda: (sp_fft.rfft(seg, size), np.concatenate([[0.0], np.cumsum(seg * seg)])))
            self._window_key = (lo, end, size)
        assert self._window is not None
        return self._window

    def scan(self, lo: int, end: int, name: str, template: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """NCC and dot product of `template` at every full-overlap position in mix[lo:end]."""
        n, seg_len = len(template), end - lo
        size = sp_fft.next_fast_len(seg_len + n - 1, True)
        spec, c = self._window_spectrum(lo, end, size)
        t_spec, t_norm = self._template(name, template, size)
        dots = sp_fft.irfft(spec * t_spec, size)[n - 1: seg_len].copy()
        win_energy = np.maximum(c[n:] - c[:-n], 0.0)
        denom = np.sqrt(win_energy) * t_norm
        ncc = np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 1e-12 * max(t_norm, 1e-300))
        return ncc, dots

    def envelope_pearson(self, lo: int, end: int, template: np.ndarray, win: int) -> np.ndarray:
        """_pearson_scan of the power envelopes of mix[lo:end] and `template` (the tie-break), the
        window's envelope and its spectrum and sums memoised on the window's content."""
        seg = self.mix[lo:end]
        w_digest = self.window_digest(lo, end)
        env_seg = memo("ncc_envelope", (w_digest, win), lambda: _envelope(seg, win))

        def parts(sz: int | None) -> _SegmentParts:
            return memo("ncc_envelope_parts", (w_digest, win, sz), lambda: _segment_parts(env_seg, sz))

        return _pearson_scan(env_seg, _envelope(template, win), parts)


#: NCC peaks this close to the best are ties: periodic material (a decaying tone) scores almost the
#: same (to 1e-4) one period early or late, and a lossy codec decides which wins. Ties go to the
#: position where the power envelopes of template and mix line up best.
TIE_NCC = 0.02
_ENV_WIN_S = 0.0005


def _envelope(x: np.ndarray, win: int) -> np.ndarray:
    """Centred moving-average power: same filter on template and mix, so alignment is unbiased."""
    return np.convolve(x * x, np.ones(win) / win, mode="same")


_SegmentParts = tuple[np.ndarray | None, np.ndarray, np.ndarray]


def _segment_parts(segment: np.ndarray, size: int | None) -> _SegmentParts:
    """What a Pearson scan needs of the segment alone: its spectrum at `size` (None: let
    fftconvolve do it) and its running sums of x and x²."""
    return (None if size is None else sp_fft.rfft(segment, size),
            np.concatenate([[0.0], np.cumsum(segment)]), np.concatenate([[0.0], np.cumsum(segment * segment)]))


def _pearson_scan(segment: np.ndarray, template: np.ndarray,
                  parts: Callable[[int | None], _SegmentParts] | None = None) -> np.ndarray:
    """Mean-removed NCC (Pearson r) of template against every full-overlap position.

    `parts(size)` may supply the segment's spectrum and sums (memoised by the caller); the product
    and inverse transform are then fftconvolve's own (same size, same order, same 'valid' crop)."""
    n = len(template)
    t = template - template.mean()
    size = sp_fft.next_fast_len(len(segment) + n - 1, True) if 1 < n <= len(segment) else None
    spec, c1, c2 = (parts or (lambda sz: _segment_parts(segment, sz)))(size)
    if spec is None:
        dots = fftconvolve(segment, t[::-1], mode="valid")  # Σ seg·(t - t̄) = Σ (seg - s̄)(t - t̄)
    else:
        # np.multiply, not `spec * rfft(...)`: numpy would multiply into the temporary with the
        # operands swapped, and a fused multiply-add then rounds the other product (last-bit changes)
        dots = sp_fft.irfft(np.multiply(spec, sp_fft.rfft(t[::-1], size)), size)[n - 1: len(segment)].copy()
    s1 = c1[n:] - c1[:-n]
    var = np.maximum(c2[n:] - c2[:-n] - s1 * s1 / n, 0.0)
    denom = np.sqrt(var) * float(np.sqrt(np.dot(t, t)))
    return np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 0)


def _match_one(x: np.ndarray, sr: int, name: str, sample: np.ndarray, expect_s: float, search_s: float,
               length_s: float, scanner: _Scanner | None = None) -> Match:
    scanner = scanner if scanner is not None else _Scanner(x)
    s = check_signal(sample, f"library sample {name!r}")
    if s.ndim != 1:
        raise ValueError(f"library sample {name!r} must be mono, got shape {s.shape}")
    lo = max(0, round((expect_s - search_s) * sr))
    hi_start = max(lo, round((expect_s + search_s) * sr))
    n = min(len(s), max(1, round(length_s * sr)), len(x) - lo)
    if n <= 0:
        return Match(name, 0.0, expect_s, 0.0)
    template = s[:n]
    end = min(len(x), hi_start + n)
    # the match is a function of the window's and template's samples, lo, sr and name alone
    key = (scanner.window_digest(lo, end), scanner.template_digest(name, template), lo, sr, name)
    return memo("ncc_match", key, lambda: _match_window(scanner, sr, name, template, lo, end))


def _match_window(scanner: _Scanner, sr: int, name: str, template: np.ndarray, lo: int, end: int) -> Match:
    ncc, dots = scanner.scan(lo, end, name, template)
    best = float(ncc.max())
    ties = np.nonzero(ncc >= best - TIE_NCC)[0]
    k = int(np.argmax(ncc))
    if len(ties) > 1 and ties[-1] - ties[0] > 1:
        win = max(3, round(_ENV_WIN_S * sr))
        env_r = scanner.envelope_pearson(lo, end, template, win)
        want = int(np.argmax(env_r))
        k = int(ties[np.argmin(np.abs(ties - want))])
        # climb to the local NCC maximum from there
        while k + 1 < len(ncc) and ncc[k + 1] > ncc[k]:
            k += 1
        while k > 0 and ncc[k - 1] > ncc[k]:
            k -= 1
    t_energy = float(np.dot(template, template))
    gain = float(dots[k] / t_energy) if t_energy > 0 else 0.0
    return Match(name=name, ncc=float(ncc[k]), offset_s=(lo + k) / sr, gain=gain)


def match_at(mix: np.ndarray, sample_rate_hz: int, library: dict[str, np.ndarray], at_s: float, *,
             search_s: float = 0.05, length_s: float = 0.5) -> list[Match]:
    """Best NCC of every library sample whose start is within `at_s ± search_s`, best first.

    The template is each sample's first `length_s` (all of it when shorter); the mix is searched
    from `at_s - search_s` to `at_s + search_s` for the template's start. Near-ties (within
    :data:`TIE_NCC`, e.g. a tone one period off) go to where the power envelopes align. Returns one Match per library entry (silent
    templates get ncc 0).
    """
    x = check_signal(mix, "mix")
    if x.ndim != 1:
        raise ValueError(f"match_at wants a mono mix, got shape {x.shape}")
    sr = int(sample_rate_hz)
    scanner = _Scanner(x)
    out = [_match_one(x, sr, name, s, at_s, search_s, length_s, scanner) for name, s in library.items()]
    out.sort(key=lambda m: m.ncc, reverse=True)
    return out


def lead_in_s(sample: np.ndarray, sr: int, threshold_db: float = 12.0) -> float:
    """Time from a sample's first sample to its own first onset (0 for samples that start hard)."""
    s = check_signal(sample, "library sample")
    onsets = detect_onsets(s, sr, threshold_db=threshold_db) if len(s) else []
    return onsets[0].time_s if onsets else 0.0


def identify(mix: np.ndarray, sample_rate_hz: int, library: dict[str, np.ndarray], *,
             min_ncc: float = 0.6, threshold_db: float = 12.0, search_s: float = 0.05,
             length_s: float = 0.5) -> list[tuple[float, Match]]:
    """Where library samples occur anywhere in the mix: (onset time, best match) per placement.

    Onsets (:func:`detect_onsets`) propose positions; each sample is matched around the onset minus
    its own lead-in (time to its first onset, for samples that start softly). An
    onset whose best NCC is below `min_ncc` is not reported (something not in the library). An
    onset inside a sample already found (its own second attack) repeats that placement and is
    dropped, so each placement appears once.
    """
    x = check_signal(mix, "mix")
    sr = int(sample_rate_hz)
    lead = {name: lead_in_s(s, sr, threshold_db) for name, s in library.items()}
    found: list[tuple[float, Match]] = []
    scanner = _Scanner(x)
    for onset in detect_onsets(x, sr, threshold_db=threshold_db):
        matches = sorted((_match_one(x, sr, name, s, onset.time_s - lead[name], search_s, length_s, scanner)
                          for name, s in library.items()), key=lambda m: m.ncc, reverse=True)
        if not matches or matches[0].ncc < min_ncc:
            continue
        best = matches[0]
        if any(m.name == best.name and abs(m.offset_s - best.offset_s) < 0.01 for _, m in found):
            continue
        found.append((onset.time_s, best))
    return found
