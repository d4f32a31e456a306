"""Small helpers shared by the sound-family task modules (writing fixtures, loading renders).

Signal processing lives in verifiers.measure; this module only moves files and arrays around.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import soundfile as sf

from verifiers.base import AgentOutputError, ScoreContext
from verifiers.measure.audio_io import Audio, load_audio, resample
from verifiers.measure.errors import MediaError
from verifiers.provenance import AUDIT_WRITE_KINDS, outside_writes, writer_name  # noqa: F401  (re-exported)
from verifiers.rubric import rubric_check, rubric_event  # noqa: F401  (re-exported for the sound tasks)

if TYPE_CHECKING:
    from verifiers.synth import InstanceWriter

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


#: what a file's name promises → the containers (as the content says: AudioInfo.format) that keep it.
#: The seeds ask for "a WAV", "48 kHz/24-bit WAV": an MP3 or AAC renamed .wav is not one, whatever
#: the decoder manages to read from it.
CONTAINERS_BY_SUFFIX = {".wav": ("WAV", "WAVEX", "RF64"), ".flac": ("FLAC",), ".aif": ("AIFF",), ".aiff": ("AIFF",)}
_READABLE_NAMES = {"mp3": "an MP3", "aac": "an ADTS AAC", "ogg": "an Ogg", "flac": "a FLAC", "FLAC": "a FLAC",
                   "AIFF": "an AIFF", "CAF": "a CAF", "W64": "a Wave64", "OGG": "an Ogg", "wav": "a WAV"}


def container_problem(audio: Audio, name: str) -> str | None:
    """Why the file's content is not the container its name promises (None when it is)."""
    suffix = Path(name).suffix.lower()
    want = CONTAINERS_BY_SUFFIX.get(suffix)
    real = audio.info.format
    if want is None or real in want:
        return None
    what = _READABLE_NAMES.get(real) or ("an MP4/M4A" if "mp4" in real else f"a {real!r}")
    return (f"{Path(name).name} is {what} file ({audio.info.subtype} audio) named {suffix}: "
            f"the task asks for a {want[0]} file (read from its content, not its name)")


def load_named_audio(path: Path, sample_rate_hz: int | None = None) -> Audio:
    """load_audio, and the content must be the container the file's name says (MediaError otherwise)."""
    audio = load_audio(path, sample_rate_hz=sample_rate_hz)
    bad = container_problem(audio, path.name)
    if bad:
        raise MediaError(bad)
    return audio


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
        audio = load_named_audio(path)
    except MediaError as exc:
        raise AgentOutputError(f"{rel} unusable: {exc}") from None
    samples = audio.samples
    if rate_hz is not None and audio.sample_rate_hz != rate_hz:
        samples = resample(samples, audio.sample_rate_hz, rate_hz)
    return audio, samples


def format_note(audio: Audio) -> str:
    """'48000 Hz, 2 ch, PCM_24' for messages."""
    return f"{audio.sample_rate_hz} Hz, {audio.channels} ch, {audio.info.subtype}"


def write_frame_near_misses(inst: InstanceWriter, events: list[dict[str, Any]], moved: tuple[int, ...],
                            check_name: str, noun: str, render: Callable[[list[dict[str, Any]]], np.ndarray],
                            output: str) -> None:
    """The near-miss pair at a seed's ±1 frame sync line: the same events `moved` 0.75 frame late
    (inside: lowers nothing) and 1.25 frames late (outside: lowers `check_name`). A quarter frame is
    ~10 ms, ten times the onset detector's refinement, so the pair tests the line, not the detector."""
    for off_frames, lowers in ((0.75, []), (1.25, [check_name])):
        near = [dict(e) for e in events]
        for i in moved:
            near[i]["frame"] += off_frames
        name = f"three_{noun}s_{off_frames:g}_frames_off".replace(".", "_")
        folder = inst.mutant(name, lowers, f"the 3 {noun}s {off_frames:g} frame off (seed ±1)")
        write_wav(folder / output, render(near))


def write_sync_mutants(inst: InstanceWriter, events: list[dict[str, Any]], moved: tuple[int, ...],
                       check_name: str, noun: str, render: Callable[[list[dict[str, Any]]], np.ndarray],
                       output: str) -> None:
    """The sync mutants of a per-event placement task: the three events `moved` 2 frames late (lowers
    `check_name`), then the near-miss pair at the ±1 frame line (`write_frame_near_misses`)."""
    late = [dict(e) for e in events]
    for i in moved:
        late[i]["frame"] += 2
    folder = inst.mutant(f"three_{noun}s_2_frames_late", [check_name], f"3 of {len(events)} {noun}s 2 frames late")
    write_wav(folder / output, render(late))
    write_frame_near_misses(inst, events, moved, check_name, noun, render, output)


def write_every_sound_everywhere(inst: InstanceWriter, events: list[dict[str, Any]], names: list[str],
                                 render: Callable[[list[dict[str, Any]]], np.ndarray], output: str, *,
                                 max_score: float | None = None, why: str = "") -> None:
    """Issue 21's "everything at once" gaming baseline of a placement task: every library sound at
    every GT event, through the task's own render, peak-normalised to -3 dBFS (the sum of a library
    clips). Every onset is in sync; which sound belongs where is not answered. ≤ 5 unless the task
    declares what it may keep (`max_score`, `why`)."""
    x = render([{**e, "sample": name} for e in events for name in names])
    peak = float(np.max(np.abs(x)))
    rel = f"baselines/everything/{output}"
    write_wav(inst.root / rel, x * (10 ** (-3 / 20) / peak) if peak > 0 else x)
    inst.baseline_case("every_sound_everywhere", [(output, f"copy:{rel}")], max_score=max_score,
                       why=why or f"every one of the {len(names)} library sounds at every GT event")
