"""Onsets of sound effects: where something starts, to about a millisecond on sharp attacks.

Two passes, because one envelope cannot be both robust and precise:

1. **Detect** on a coarse energy envelope (10 ms windows, 2.5 ms hop). The reference is the
   20th-percentile level of the preceding ~100 ms (the "local floor"); an onset fires when the level
   rises `threshold_db` above it. Hysteresis: after firing, the detector is disarmed until the level
   falls back to within `threshold_db / 2` of the floor it fired over, or until the rolling floor has
   itself risen by that much (a sustained sound became the new bed, so a second effect on top of it
   can still fire). This keeps one onset per effect on quiet beds, where a decaying tail would
   otherwise re-trigger on every wiggle.
2. **Refine** each detection on a 1 ms causal power envelope: the onset is the start of the
   contiguous run, leading up to the effect's peak, where that envelope is above the local floor by
   `threshold_db` (capped at half the way to the peak, so weak effects still get a crossing), walked
   back to where the rise began.

Both passes run on the signal after a causal 30 Hz high-pass (rumble and DC are not onsets, and
they make a pink bed's energy swing). Digital silence is handled by clamping the floor at `floor_db` (default −100 dBFS power), so an
effect on true zeros is found at its first non-negligible sample. For busy beds (music under the
effects) this detector is the wrong tool; see ../shared/notes/measurement.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import percentile_filter
from scipy.signal import butter, sosfilt

from verifiers.measure.audio_io import check_signal, db


@dataclass(frozen=True)
class Onset:
    time_s: float
    sample: int
    strength_db: float  # rise of the coarse envelope's peak above the local floor


_COARSE_WIN_S = 0.010
_COARSE_HOP_S = 0.0025
_FLOOR_SPAN_S = 0.100
_FINE_WIN_S = 0.001


def _frame_power(x: np.ndarray, hop: int, win_hops: int) -> np.ndarray:
    """Mean power of windows of `win_hops` hops, one per hop (window starts at frame*hop)."""
    n_hops = len(x) // hop
    if n_hops == 0:
        return np.array([float(np.mean(x * x))])
    hop_pow = np.mean((x[: n_hops * hop] ** 2).reshape(n_hops, hop), axis=1)
    if win_hops <= 1:
        return hop_pow
    c = np.concatenate([[0.0], np.cumsum(hop_pow)])
    ends = np.minimum(np.arange(n_hops) + win_hops, n_hops)
    return (c[ends] - c[: n_hops]) / (ends - np.arange(n_hops))


def detect_onsets(mono: np.ndarray, sample_rate_hz: int, *, min_gap_s: float = 0.05,
                  threshold_db: float = 12.0, floor_db: float = -100.0) -> list[Onset]:
    """Onsets in a mono signal, in time order.

    `threshold_db` is the rise over the local floor that counts as an onset: it must be below the
    effect's level over its bed (an effect 10 dB above the bed needs `threshold_db` ≈ 6).
    `min_gap_s` merges detections closer than that. `floor_db` is the lowest floor assumed, so
    digital silence does not make every dither bit an onset.
    """
    x = check_signal(mono, "onset input")
    if x.ndim != 1:
        raise ValueError(f"detect_onsets wants a mono 1-D signal, got shape {x.shape}")
    sr = int(sample_rate_hz)
    # Causal 30 Hz high-pass: sub-audio rumble (pink beds, DC) makes 10 ms energies swing by 10 dB;
    # above 30 Hz they swing by ~5 dB. Causal, so nothing rings before an attack.
    if sr > 200:
        x = sosfilt(butter(2, 30.0, "highpass", fs=sr, output="sos"), x)
    hop = max(1, round(_COARSE_HOP_S * sr))
    win_hops = max(1, round(_COARSE_WIN_S / _COARSE_HOP_S))
    level_db = db(_frame_power(x, hop, win_hops), floor_db=floor_db)
    level_db = np.maximum(level_db, floor_db)
    span = max(3, round(_FLOOR_SPAN_S / _COARSE_HOP_S))
    # floor_at[i] = 20th percentile of the frames ending `win_hops` before frame i: frames whose
    # window overlaps frame i's start are excluded, so a rising edge never pollutes its own floor.
    pct = percentile_filter(level_db, 20, size=span, origin=(span - 1) // 2, mode="nearest")
    lag = win_hops + 1
    floor_at = np.full_like(level_db, level_db[0])
    floor_at[lag:] = pct[:-lag] if lag < len(pct) else floor_at[lag:]
    floor_at = np.maximum(floor_at, floor_db)

    half = threshold_db / 2.0
    min_gap = round(min_gap_s * sr)
    fine_win = max(8, round(_FINE_WIN_S * sr))
    onsets: list[Onset] = []
    armed = True
    fired_floor = floor_db
    i = 0
    n = len(level_db)
    while i < n:
        rise = level_db[i] - floor_at[i]
        if armed and rise >= threshold_db:
            # peak of this event's coarse envelope, for strength
            j_end = min(n, i + 4 * win_hops)
            peak_db = float(level_db[i:j_end].max())
            sample = _refine(x, sr, i * hop, hop, win_hops, fine_win, threshold_db, floor_db)
            if not onsets or sample - onsets[-1].sample >= min_gap:
                onsets.append(Onset(time_s=sample / sr, sample=int(sample),
                                    strength_db=round(peak_db - float(floor_at[i]), 2)))
            armed = False
            fired_floor = float(floor_at[i])
        elif not armed and (level_db[i] < fired_floor + half or floor_at[i] > fired_floor + half):
            armed = True
        i += 1
    return onsets


def _refine(x: np.ndarray, sr: int, frame_start: int, hop: int, win_hops: int, fine_win: int,
            threshold_db: float, floor_db: float) -> int:
    """First sample of the rise near a coarse detection, on a 1 ms causal power envelope."""
    win = hop * win_hops
    lo = max(0, frame_start - win)
    hi = min(len(x), frame_start + 2 * win + hop)
    pre_lo = max(0, lo - round(_FLOOR_SPAN_S * sr))
    seg = x[pre_lo:hi]
    p = seg * seg
    c = np.concatenate([[0.0], np.cumsum(p)])
    idx = np.arange(1, len(seg) + 1)
    start = np.maximum(idx - fine_win, 0)
    env = (c[idx] - c[start]) / fine_win  # env[k]: mean power of seg[k-fine_win+1 .. k]
    off = lo - pre_lo
    abs_floor = 10.0 ** (floor_db / 10.0)
    pre = env[fine_win: off] if off > fine_win else env[:max(off, 1)]
    floor_mean = float(np.median(pre)) if len(pre) else 0.0
    floor_hi = float(np.percentile(pre, 99)) if len(pre) else 0.0
    floor_mean = max(floor_mean, abs_floor)
    region = env[off:]
    if len(region) == 0:
        return frame_start
    peak = float(region.max())
    level = max(floor_mean * 10.0 ** (threshold_db / 10.0), floor_hi * 1.25)
    level = min(level, floor_mean + 0.5 * (peak - floor_mean))
    level = max(level, abs_floor)
    # Anchor on the first sample halfway up to the peak (surely inside the effect), then walk back
    # through the contiguous run above `level`: a bed bump before the effect cannot be picked.
    anchor = off + int(np.argmax(region >= floor_mean + 0.5 * (peak - floor_mean)))
    cross = anchor
    while cross > off and env[cross - 1] >= level:
        cross -= 1
    # walk back to where the envelope left the floor (at most one fine window: the causal window
    # starts rising at the true onset, so the crossing is at most `fine_win` samples late on a
    # sharp attack)
    leave = max(floor_mean * 1.5, floor_hi, abs_floor)
    k = cross
    stop = max(off - fine_win, cross - fine_win, 0)
    while k > stop and env[k - 1] > leave:
        k -= 1
    # env[k] is the first sample above the floor; the window ending there holds the new sample k
    return pre_lo + k


def detect_onsets_by_band(mono: np.ndarray, sample_rate_hz: int, *, split_hz: float, min_gap_s: float = 0.05,
                          threshold_db: float = 12.0, floor_db: float = -100.0) -> list[Onset]:
    """Onsets of the full band, of the band below `split_hz` and of the band above it, in time order.

    Why: a sound starting on top of another that fills a different band (a trailer hit's low thump
    landing on the top of a riser swept up to 8 kHz) rises only 4–5 dB over the full-band level but
    14 dB over the level of its own band. The split bands stay wide (a 10 ms window over a band below
    250 Hz fires on every wiggle of white noise; below 2 kHz it stays quiet, like the full band).
    One sound may be listed once per band it rises in (a caller asks "is there an onset near t",
    and merging the bands could drop the one nearest t for an earlier one of another band).
    """
    x = check_signal(mono, "onset input")
    sr = int(sample_rate_hz)
    kw = {"min_gap_s": min_gap_s, "threshold_db": threshold_db, "floor_db": floor_db}
    found = list(detect_onsets(x, sr, **kw))
    for kind in ("lowpass", "highpass"):
        band = sosfilt(butter(4, split_hz, kind, fs=sr, output="sos"), x)
        found += detect_onsets(band, sr, **kw)
    return sorted(found, key=lambda o: o.sample)
