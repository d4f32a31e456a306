"""Procedural, reproducible sound effects for synthetic task instances.

Each generator takes a numpy Generator so the same seed gives the same bytes. Sounds are
built to be *distinct* under normalised cross-correlation (different spectra, envelopes and
tonal content), with sharp attacks so onset detection has a well-defined truth.
"""

from __future__ import annotations

import numpy as np
from scipy import signal

SR_HZ = 48_000


def _env(n: int, attack_s: float, decay_s: float, sr: int) -> np.ndarray:
    t = np.arange(n) / sr
    att = np.clip(t / max(attack_s, 1e-4), 0, 1)
    return att * np.exp(-t / decay_s)


def _band_noise(rng: np.random.Generator, n: int, lo_hz: float, hi_hz: float, sr: int) -> np.ndarray:
    sos = signal.butter(4, [lo_hz, hi_hz], btype="bandpass", fs=sr, output="sos")
    return signal.sosfilt(sos, rng.standard_normal(n))


def _norm(x: np.ndarray, peak: float) -> np.ndarray:
    return x * (peak / max(np.max(np.abs(x)), 1e-12))


def impact(rng: np.random.Generator, dur_s: float = 0.6, body_hz: float = 80.0, sr: int = SR_HZ,
           peak: float = 0.8) -> np.ndarray:
    """Door slam / punch: low thump plus broadband crack, fast decay."""
    n = int(dur_s * sr)
    t = np.arange(n) / sr
    thump = np.sin(2 * np.pi * body_hz * t * (1 + 0.5 * np.exp(-t / 0.03))) * _env(n, 0.001, 0.12, sr)
    crack = _band_noise(rng, n, 800, 6000, sr) * _env(n, 0.0005, 0.02, sr)
    return _norm(thump + 0.6 * crack, peak)


def jingle(rng: np.random.Generator, dur_s: float = 0.7, sr: int = SR_HZ, peak: float = 0.6) -> np.ndarray:
    """Keys dropped: a cluster of inharmonic high partials with a scatter of re-hits."""
    n = int(dur_s * sr)
    t = np.arange(n) / sr
    out = np.zeros(n)
    for k in range(6):
        f = rng.uniform(2500, 7000)
        start = 0 if k == 0 else int(rng.uniform(0.01, 0.25) * sr)
        seg = np.sin(2 * np.pi * f * t[: n - start]) * _env(n - start, 0.0005, rng.uniform(0.05, 0.15), sr)
        out[start:] += seg * (1.0 if k == 0 else 0.5)
    return _norm(out, peak)


def footstep(rng: np.random.Generator, surface: str = "wood", dur_s: float = 0.35, sr: int = SR_HZ,
             peak: float = 0.5) -> np.ndarray:
    """Heel strike: wood is a resonant knock, gravel a grainy crunch, concrete a dry scuff."""
    n = int(dur_s * sr)
    t = np.arange(n) / sr
    if surface == "concrete":
        scuff = _band_noise(rng, n, 250, 5000, sr) * _env(n, 0.0008, rng.uniform(0.025, 0.045), sr)
        x = scuff + 0.5 * _band_noise(rng, n, 80, 400, sr) * _env(n, 0.001, 0.02, sr)
    elif surface == "gravel":
        # sparse micro-impacts, band-limited after gating (gating filtered noise would leave
        # sample-level discontinuities: clicks no microphone records)
        sos = signal.butter(4, [1500, 9000], btype="bandpass", fs=sr, output="sos")
        grains = signal.sosfilt(sos, rng.standard_normal(n) * (rng.random(n) < 0.08)) * 3.0
        x = grains * _env(n, 0.002, 0.09, sr) + 0.4 * _band_noise(rng, n, 200, 1500, sr) * _env(n, 0.001, 0.04, sr)
    else:
        f0 = rng.uniform(180, 320)
        x = np.sin(2 * np.pi * f0 * t) * _env(n, 0.0008, 0.05, sr) + 0.3 * _band_noise(
            rng, n, 400, 3000, sr) * _env(n, 0.0005, 0.015, sr)
    return _norm(x, peak)


def click(rng: np.random.Generator, freq_hz: float = 2000.0, dur_s: float = 0.12, sr: int = SR_HZ,
          peak: float = 0.5) -> np.ndarray:
    """UI click / light switch: short tonal tick with a noise transient."""
    n = int(dur_s * sr)
    t = np.arange(n) / sr
    x = np.sin(2 * np.pi * freq_hz * t) * _env(n, 0.0003, 0.015, sr) + 0.5 * _band_noise(
        rng, n, 3000, 12000, sr) * _env(n, 0.0002, 0.004, sr)
    return _norm(x, peak)


def slide(rng: np.random.Generator, dur_s: float = 0.6, f_start_hz: float = 300.0, f_end_hz: float = 150.0,
          sr: int = SR_HZ, peak: float = 0.5) -> np.ndarray:
    """Drawer / slide: rumbling noise with a falling resonance and a stop knock at the end."""
    n = int(dur_s * sr)
    t = np.arange(n) / sr
    f = np.linspace(f_start_hz, f_end_hz, n)
    tone = np.sin(2 * np.pi * np.cumsum(f) / sr)
    body = (0.6 * tone + 0.4 * _band_noise(rng, n, 100, 2500, sr)) * np.minimum(1, t / 0.002) * np.exp(-t / 0.4)
    return _norm(body, peak)


def thud(rng: np.random.Generator, dur_s: float = 0.3, sr: int = SR_HZ, peak: float = 0.45) -> np.ndarray:
    """Phone set down: a dull mid knock with a plastic rattle."""
    n = int(dur_s * sr)
    t = np.arange(n) / sr
    x = np.sin(2 * np.pi * 520 * t) * _env(n, 0.0005, 0.03, sr) + 0.7 * _band_noise(
        rng, n, 900, 2500, sr) * _env(n, 0.0005, 0.05, sr)
    return _norm(x, peak)


def place(length_samples: int, channels: int, items: list[tuple[int, np.ndarray]]) -> np.ndarray:
    """Mix mono items into a (length, channels) buffer at the given start samples."""
    out = np.zeros((length_samples, channels))
    for start, sound in items:
        end = min(length_samples, start + len(sound))
        if end > start:
            out[start:end] += sound[: end - start, None]
    return out


def chirp_tick(rng: np.random.Generator, f_start_hz: float, f_end_hz: float, dur_s: float = 0.09,
               sr: int = SR_HZ, peak: float = 0.5) -> np.ndarray:
    """UI toggle: a short tonal chirp (rising for 'on', falling for 'off') with a click on top."""
    n = int(dur_s * sr)
    f = np.geomspace(f_start_hz, f_end_hz, n)
    tone = np.sin(2 * np.pi * np.cumsum(f) / sr) * _env(n, 0.0005, dur_s / 3, sr)
    tick = _band_noise(rng, n, 4000, 12000, sr) * _env(n, 0.0002, 0.003, sr)
    return _norm(tone + 0.4 * tick, peak)


def whoosh(rng: np.random.Generator, dur_s: float = 0.3, lo_hz: float = 300.0, hi_hz: float = 3000.0,
           sr: int = SR_HZ, peak: float = 0.4, swell: bool = True) -> np.ndarray:
    """Swipe / punch whoosh: band noise swept upward; with `swell`, it grows and stops hard."""
    n = int(dur_s * sr)
    x = rng.standard_normal(n)
    centres = np.geomspace(lo_hz, hi_hz, 8)
    out = np.zeros(n)
    edges = np.linspace(0, n, 9).astype(int)
    for k, fc in enumerate(centres):  # piecewise band sweep, short crossfades between segments
        sos = signal.butter(2, [fc / 1.6, min(fc * 1.6, sr / 2.2)], btype="bandpass", fs=sr, output="sos")
        y = signal.sosfilt(sos, x)
        w = np.zeros(n)
        a, b = edges[k], edges[k + 1]
        w[a:b] = 1.0
        fade = min(256, (b - a) // 4)
        if k > 0:
            w[max(0, a - fade):a] = np.linspace(0, 1, a - max(0, a - fade))
        if k < 7:
            w[b:b + fade] = np.linspace(1, 0, len(w[b:b + fade]))
        out += y * w
    t = np.arange(n) / sr
    env = (t / dur_s) ** 2 if swell else np.sin(np.pi * t / dur_s)
    return _norm(out * env, peak)


def distinct_set(rng: np.random.Generator, n: int, sr: int = SR_HZ) -> list[np.ndarray]:
    """`n` effects that do not mistake each other under NCC: generators cycled with spread parameters."""
    out = []
    for k in range(n):
        kind = k % 5
        u = (k // 5) / max(1, (n - 1) // 5 + 1)
        if kind == 0:
            out.append(impact(rng, dur_s=0.4, body_hz=60 + 140 * u, sr=sr))
        elif kind == 1:
            out.append(click(rng, freq_hz=900 + 3000 * u, dur_s=0.15, sr=sr))
        elif kind == 2:
            out.append(chirp_tick(rng, 400 + 800 * u, 2500 + 2000 * u, dur_s=0.2, sr=sr))
        elif kind == 3:
            out.append(thud(rng, sr=sr) * 0.5 + 0.5 * click(rng, freq_hz=300 + 400 * u, dur_s=0.3, sr=sr))
        else:
            out.append(jingle(rng, dur_s=0.4, sr=sr))
    return out


def bed(rng: np.random.Generator, n: int, lo_hz: float = 100.0, hi_hz: float = 4000.0, level_dbfs: float = -30.0,
        sr: int = SR_HZ, tilt_db_oct: float = -3.0) -> np.ndarray:
    """Ambience bed: band-limited noise with a spectral tilt (dB/octave) and slow level drift, at an RMS level."""
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / sr)
    shape = np.where((f >= lo_hz) & (f <= hi_hz), (np.maximum(f, 1.0) / lo_hz) ** (tilt_db_oct / 6.0206), 0.0)
    x = np.fft.irfft(spec * shape, n)
    drift = 1 + 0.1 * np.sin(2 * np.pi * np.arange(n) / sr * rng.uniform(0.1, 0.3) + rng.uniform(0, 6.28))
    x *= drift
    rms = float(np.sqrt(np.mean(x * x))) or 1.0
    return x * (10 ** (level_dbfs / 20) / rms)


def boing(rng: np.random.Generator, f0_hz: float = 220.0, dur_s: float = 0.5, sr: int = SR_HZ,
          peak: float = 0.5) -> np.ndarray:
    """Cartoon boing: a tone with a fast, decaying vibrato."""
    n = int(dur_s * sr)
    t = np.arange(n) / sr
    f = f0_hz * (1 + 0.25 * np.sin(2 * np.pi * rng.uniform(10, 14) * t) * np.exp(-t / 0.25))
    return _norm(np.sin(2 * np.pi * np.cumsum(f) / sr) * _env(n, 0.001, 0.2, sr), peak)


def pop(rng: np.random.Generator, body_hz: float = 600.0, sr: int = SR_HZ, peak: float = 0.5) -> np.ndarray:
    """Cork pop: a short low-mid burst with a noisy edge."""
    n = int(0.12 * sr)
    t = np.arange(n) / sr
    x = np.sin(2 * np.pi * body_hz * t * (1 - 0.3 * t / 0.12)) * _env(n, 0.0003, 0.02, sr)
    return _norm(x + 0.4 * _band_noise(rng, n, 1000, 8000, sr) * _env(n, 0.0002, 0.005, sr), peak)


def zip_(rng: np.random.Generator, dur_s: float = 0.3, sr: int = SR_HZ, peak: float = 0.45) -> np.ndarray:
    """Zip: a train of tiny clicks accelerating, through a rising band-pass."""
    n = int(dur_s * sr)
    rate = np.linspace(60, 260, n) / sr
    train = (np.diff(np.floor(np.cumsum(rate)), prepend=0) > 0).astype(float)
    sos = signal.butter(2, [1500, 7000], btype="bandpass", fs=sr, output="sos")
    x = signal.sosfilt(sos, train * (1 + 0.2 * rng.standard_normal(n)))
    return _norm(x * np.minimum(1, np.arange(n) / (0.002 * sr)), peak)


def slip(rng: np.random.Generator, dur_s: float = 0.35, sr: int = SR_HZ, peak: float = 0.45) -> np.ndarray:
    """Banana slip: a fast downward whistle glide over a squeak of noise."""
    n = int(dur_s * sr)
    f = np.geomspace(rng.uniform(1800, 2400), 500, n)
    x = np.sin(2 * np.pi * np.cumsum(f) / sr) * _env(n, 0.002, 0.15, sr)
    return _norm(x + 0.2 * _band_noise(rng, n, 2000, 6000, sr) * _env(n, 0.001, 0.03, sr), peak)


def pitched_tone(f0_hz: np.ndarray, sr: int = SR_HZ, harmonics: int = 3, peak: float = 0.4) -> np.ndarray:
    """A tone following a per-sample f0 curve (slide whistle, engine), phase-continuous."""
    phase = 2 * np.pi * np.cumsum(f0_hz) / sr
    x = sum(np.sin(k * phase) / k ** 1.5 for k in range(1, harmonics + 1))
    n = len(f0_hz)
    edge = np.minimum(1, np.minimum(np.arange(n), n - 1 - np.arange(n)) / (0.01 * sr))
    return _norm(x * edge, peak)


def band_noise(rng: np.random.Generator, n: int, lo_hz: float, hi_hz: float, sr: int = SR_HZ) -> np.ndarray:
    """White noise through a 4th-order Butterworth band-pass (building block for designed sounds)."""
    return _band_noise(rng, n, lo_hz, hi_hz, sr)


def voice(rng: np.random.Generator, f0_hz: float, dur_s: float = 2.0, *, formants_hz: tuple[float, ...] = (500, 1500),
          roughness: float = 0.3, breath: float = 0.2, glide: float = 0.0, jitter_pct: float = 0.5, sr: int = SR_HZ,
          peak: float = 0.6) -> np.ndarray:
    """Animal-like vocal: jittery harmonic source with rough AM, through formant band-passes, plus breath."""
    n = int(dur_s * sr)
    t = np.arange(n) / sr
    wobble = signal.sosfilt(signal.butter(1, 12, fs=sr, output="sos"), rng.standard_normal(n))
    jitter = 1 + jitter_pct / 100 * wobble / max(float(np.std(wobble)), 1e-12)
    f = f0_hz * jitter * (1 + glide * t / dur_s)
    phase = 2 * np.pi * np.cumsum(f) / sr
    src = sum(np.sin(k * phase) / k for k in range(1, 30) if k * f0_hz < sr / 2.5)
    src *= 1 + roughness * np.sin(2 * np.pi * rng.uniform(25, 45) * t)
    out = np.zeros(n)
    for fc in formants_hz:
        out += _band_noise_filter(src, fc / 1.3, fc * 1.3, sr)
    out += breath * _band_noise(rng, n, 800, 6000, sr) * np.std(out)
    env = np.minimum(1, t / 0.05) * np.minimum(1, (dur_s - t) / 0.15)
    return _norm(out * env, peak)


def _band_noise_filter(x: np.ndarray, lo_hz: float, hi_hz: float, sr: int) -> np.ndarray:
    sos = signal.butter(2, [lo_hz, min(hi_hz, sr / 2.2)], btype="bandpass", fs=sr, output="sos")
    return signal.sosfilt(sos, x)


def riser(rng: np.random.Generator, dur_s: float = 3.0, sr: int = SR_HZ, peak: float = 0.4) -> np.ndarray:
    """Trailer riser: noise swept upward, growing exponentially, ending hard at its last sample."""
    return whoosh(rng, dur_s, 200, 8000, sr=sr, peak=peak, swell=True)


def braam(rng: np.random.Generator, dur_s: float = 2.5, f0_hz: float = 55.0, sr: int = SR_HZ,
          peak: float = 0.6) -> np.ndarray:
    """Braam: a detuned low sawtooth stack through a low-pass, hard attack, long decay."""
    n = int(dur_s * sr)
    t = np.arange(n) / sr
    x = np.zeros(n)
    for det in (-0.4, 0.0, 0.37):
        ph = (f0_hz + det) * t + rng.uniform(0, 1)
        x += 2 * (ph - np.floor(ph + 0.5))
    x = signal.sosfilt(signal.butter(2, 400, fs=sr, output="sos"), x)
    return _norm(x * np.minimum(1, t / 0.01) * np.exp(-t / (dur_s / 2.5)), peak)
