"""Small helpers shared by the sound-family task modules (writing fixtures, loading renders).

Signal processing lives in verifiers.measure; this module only moves files and arrays around.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from verifiers.base import AgentOutputError, ScoreContext
from verifiers.measure.audio_io import Audio, load_audio, resample
from verifiers.measure.errors import MediaError
from verifiers.provenance import AUDIT_WRITE_KINDS, outside_writes, writer_name  # noqa: F401  (re-exported)
from verifiers.rubric import rubric_check, rubric_event  # noqa: F401  (re-exported for the sound tasks)

RATE_HZ = 48_000


def write_wav(path: Path, data: np.ndarray, rate: int = RATE_HZ, subtype: str = "PCM_24") -> Path:
    """Write a WAV (creating folders); data at `RATE_HZ` is resampled when `rate` differs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    arr = np.asarray(data, dtype=np.float64)
    if rate != RATE_HZ:
        arr = resample(arr, RATE_HZ, rate)
    sf.write(str(path), arr, rate, subtype=subtype)
    _zero_peak_timestamp(path)
    return path


def _zero_peak_timestamp(path: Path) -> None:
    """libsndfile stamps float WAVs' PEAK chunk with the wall clock; zero it so the same seed gives
    the same bytes (the chunk is informational: version, timestamp, per-channel peaks)."""
    with open(path, "r+b") as fh:
        head = fh.read(512)
        k = head.find(b"PEAK")
        if k >= 12:
            fh.seek(k + 12)
            fh.write(b"\x00\x00\x00\x00")


def truncate_file(path: Path) -> Path:
    """Cut a written file in half: the 'render died mid-write' mutant."""
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])
    return path


def load_output(ctx: ScoreContext, rel: str, rate_hz: int | None = RATE_HZ) -> tuple[Audio, np.ndarray]:
    """(file as written, samples at `rate_hz`): a broken render is the agent's failure, named.

    A render the audit saw written by one of the task's forbidden writers (ffmpeg, sox, a shell…)
    is not the DAW's bounce: the seeds say such files "are logged and fail", so it is refused here.
    """
    path = ctx.artifact(rel)
    bad = outside_writes(ctx, rel, ctx.task.forbidden_writers)
    if bad:
        raise AgentOutputError(f"{rel} was written by {writer_name(bad[-1])} outside the DAW (audit)")
    try:
        audio = load_audio(path)
    except MediaError as exc:
        raise AgentOutputError(f"{rel} unusable: {exc}") from None
    samples = audio.samples
    if rate_hz is not None and audio.sample_rate_hz != rate_hz:
        samples = resample(samples, audio.sample_rate_hz, rate_hz)
    return audio, samples


def format_note(audio: Audio) -> str:
    """'48000 Hz, 2 ch, PCM_24' for messages."""
    return f"{audio.sample_rate_hz} Hz, {audio.channels} ch, {audio.info.subtype}"
