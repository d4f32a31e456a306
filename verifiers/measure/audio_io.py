"""Load any audio file as float64 samples, with what the file says about itself.

WAV/FLAC/AIFF go through soundfile (libsndfile: exact PCM, bit depth known); anything else
(MP3, AAC, Opus, audio tracks of video containers) goes through PyAV (FFmpeg). Samples come back as
float64 in ±1, shape (frames, channels).

Channel order is FFmpeg's/WAVE's order for the layout (5.1 = FL FR FC LFE BL BR, or SL SR for
"5.1(side)"): PyAV already remaps AAC's internal order, and libsndfile keeps WAVE order. The layout
name and per-channel names are in :class:`AudioInfo` so callers can index by name instead of by
position (`info.channel_index("FC")`).

libsndfile silently loads a WAV whose header promises more data than the file holds; a recording
cut off mid-write must not look like a short, valid take, so the RIFF chunk sizes are checked against
the file size first and a shortfall raises :class:`MediaError` ("truncated").
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy.signal import resample_poly

from verifiers.measure.container import check_file, open_container
from verifiers.measure.errors import MediaError, describe
from verifiers.measure.memo import file_key, memo

#: WAVE_FORMAT_EXTENSIBLE speaker-mask bits, in mask order (= channel order in the file).
_SPEAKER_BITS = ("FL", "FR", "FC", "LFE", "BL", "BR", "FLC", "FRC", "BC", "SL", "SR", "TC",
                 "TFL", "TFC", "TFR", "TBL", "TBC", "TBR")
#: Layout a file with no explicit mask is assumed to have (WAVE/FFmpeg defaults).
_DEFAULT_LAYOUT = {1: ("mono", ("FC",)), 2: ("stereo", ("FL", "FR")), 3: ("2.1", ("FL", "FR", "LFE")),
                   4: ("quad", ("FL", "FR", "BL", "BR")), 5: ("5.0", ("FL", "FR", "FC", "BL", "BR")),
                   6: ("5.1", ("FL", "FR", "FC", "LFE", "BL", "BR")),
                   8: ("7.1", ("FL", "FR", "FC", "LFE", "BL", "BR", "SL", "SR"))}
_MASK_LAYOUT_NAMES = {("FC",): "mono", ("FL", "FR"): "stereo",
                      ("FL", "FR", "FC", "LFE", "BL", "BR"): "5.1",
                      ("FL", "FR", "FC", "LFE", "SL", "SR"): "5.1(side)",
                      ("FL", "FR", "FC", "LFE", "BL", "BR", "SL", "SR"): "7.1"}
_SOUNDFILE_FORMATS = {"WAV", "WAVEX", "FLAC", "AIFF", "OGG", "W64", "RF64", "CAF"}
_PCM_BITS = {"PCM_S8": 8, "PCM_U8": 8, "PCM_16": 16, "PCM_24": 24, "PCM_32": 32, "FLOAT": 32,
             "DOUBLE": 64, "ALAC_16": 16, "ALAC_20": 20, "ALAC_24": 24, "ALAC_32": 32}


@dataclass(frozen=True)
class AudioInfo:
    """What the file says about its audio (first audio stream for containers)."""

    path: str
    format: str  # container/format name: "WAV", "FLAC", "mp3", "mov,mp4,m4a,3gp,3g2,mj2", ...
    subtype: str | None  # sample encoding: "PCM_16", "FLOAT", "aac", "mp3", ...
    sample_rate_hz: int
    channels: int
    frames: int
    duration_s: float
    bit_depth: int | None  # None for lossy codecs, where it has no meaning
    float_samples: bool
    channel_layout: str | None
    channel_names: tuple[str, ...] = ()  # per channel, in sample order: ("FL", "FR", "FC", ...)
    start_s: float = 0.0  # container start time of the stream (AAC priming shows up here)

    def channel_index(self, name: str) -> int:
        """Column of the named channel ("FL", "LFE", ...); MediaError when the layout lacks it."""
        try:
            return self.channel_names.index(name)
        except ValueError:
            raise MediaError(f"{Path(self.path).name}: no {name} channel in layout "
                             f"{self.channel_layout or self.channels}") from None


@dataclass
class Audio:
    """Decoded audio: float64 samples in ±1, shape (frames, channels)."""

    samples: np.ndarray
    sample_rate_hz: int
    info: AudioInfo

    @property
    def mono(self) -> np.ndarray:
        """Mean of the channels (a downmix for event detection, not a loudness-correct one)."""
        return self.samples.mean(axis=1)

    @property
    def duration_s(self) -> float:
        return self.samples.shape[0] / float(self.sample_rate_hz)

    @property
    def channels(self) -> int:
        return self.samples.shape[1]


def resample(samples: np.ndarray, from_hz: int, to_hz: int) -> np.ndarray:
    """Polyphase resampling along axis 0 (time); exact rational ratio, linear phase, no delay."""
    if from_hz <= 0 or to_hz <= 0:
        raise ValueError(f"sample rates must be positive, got {from_hz} -> {to_hz}")
    if from_hz == to_hz:
        return np.asarray(samples, dtype=np.float64)
    ratio = Fraction(int(to_hz), int(from_hz))
    x = np.asarray(samples, dtype=np.float64)
    # content-keyed: a self-test resamples the same sources (and often the same render) per case
    return memo("resample", (x, ratio.numerator, ratio.denominator),
                lambda: resample_poly(x, ratio.numerator, ratio.denominator, axis=0))


def _name(path: Path) -> str:
    return path.name or str(path)




@dataclass(frozen=True)
class _WavHeader:
    channel_names: tuple[str, ...] | None
    layout: str | None


def _check_wav(path: Path) -> _WavHeader | None:
    """Walk RIFF chunks; raise MediaError if the data chunk runs past the end. None if not RIFF/WAVE.

    Sizes of 0 or 0xFFFFFFFF are what streaming writers (ffmpeg to a pipe) leave behind: "unknown",
    not truncation, so they are accepted.
    """
    size = path.stat().st_size
    with path.open("rb") as fh:
        head = fh.read(12)
        if len(head) < 12 or head[:4] not in (b"RIFF", b"RIFX") or head[8:12] != b"WAVE":
            return None
        endian = "<" if head[:4] == b"RIFF" else ">"
        names: tuple[str, ...] | None = None
        layout: str | None = None
        pos = 12
        saw_data = False
        while pos + 8 <= size:
            fh.seek(pos)
            chunk = fh.read(8)
            cid, csize = chunk[:4], struct.unpack(endian + "I", chunk[4:])[0]
            if cid == b"fmt ":
                fmt = fh.read(min(csize, 40))
                if len(fmt) >= 24 and struct.unpack(endian + "H", fmt[:2])[0] == 0xFFFE:
                    nch = struct.unpack(endian + "H", fmt[2:4])[0]
                    mask = struct.unpack(endian + "I", fmt[20:24])[0]
                    bits = [n for i, n in enumerate(_SPEAKER_BITS) if mask >> i & 1]
                    if mask and len(bits) == nch:
                        names = tuple(bits)
                        layout = _MASK_LAYOUT_NAMES.get(names, "+".join(bits))
            if cid == b"data":
                saw_data = True
                if csize in (0, 0xFFFFFFFF):
                    break
                have = size - (pos + 8)
                if csize > have:
                    raise MediaError(f"{_name(path)}: truncated: header says {csize} bytes of audio, "
                                     f"file holds {have}")
                break
            pos += 8 + csize + (csize & 1)
        if not saw_data:
            raise MediaError(f"{_name(path)}: truncated or malformed WAV: no data chunk")
    return _WavHeader(names, layout)


#: Leading bytes of the containers libsndfile reads for us. Anything else (MP3 above all: libsndfile's
#: mpg123 prints its own warnings to stderr) goes straight to PyAV.
_SNDFILE_MAGIC = (b"RIFF", b"RIFX", b"RF64", b"fLaC", b"FORM", b"OggS", b"caff", b"riff")


def _soundfile_info(path: Path) -> AudioInfo | None:
    with path.open("rb") as fh:
        if fh.read(4) not in _SNDFILE_MAGIC:
            return None
    wav = _check_wav(path)
    try:
        info = sf.info(str(path))
    except (RuntimeError, sf.LibsndfileError):
        if wav is not None:
            raise MediaError(f"{_name(path)}: unreadable WAV (libsndfile refused it)") from None
        return None
    if info.format not in _SOUNDFILE_FORMATS:
        return None
    names, layout = (wav.channel_names, wav.layout) if wav else (None, None)
    if names is None:
        layout, names = _DEFAULT_LAYOUT.get(info.channels, (None, ()))
    bits = _PCM_BITS.get(info.subtype)
    return AudioInfo(path=str(path), format=info.format, subtype=info.subtype,
                     sample_rate_hz=int(info.samplerate), channels=int(info.channels),
                     frames=int(info.frames), duration_s=info.frames / float(info.samplerate),
                     bit_depth=bits, float_samples=info.subtype in ("FLOAT", "DOUBLE"),
                     channel_layout=layout, channel_names=tuple(names))


def _open_av(path: Path, audio_stream: int = 0):
    container = open_container(path)
    if len(container.streams.audio) <= audio_stream:
        container.close()
        raise MediaError(f"{_name(path)}: no audio stream" + (f" #{audio_stream}" if audio_stream else ""))
    return container


def _short(exc: BaseException) -> str:
    return describe(exc)


def _av_info(path: Path, container, frames: int | None = None, audio_stream: int = 0) -> AudioInfo:
    stream = container.streams.audio[audio_stream]
    ctx = stream.codec_context
    rate = int(ctx.sample_rate or stream.rate or 0)
    if rate <= 0:
        raise MediaError(f"{_name(path)}: audio stream has no sample rate")
    layout = ctx.layout
    names = tuple(ch.name for ch in layout.channels) if layout is not None else ()
    fmt_name = ctx.format.name if ctx.format is not None else ""
    is_float = fmt_name.startswith(("flt", "dbl"))
    lossless = ctx.name in ("pcm_s16le", "pcm_s24le", "pcm_s32le", "pcm_s16be", "pcm_s24be", "pcm_f32le",
                            "flac", "alac", "pcm_u8", "pcm_f64le", "wavpack", "tta")
    bits = None
    if lossless:
        bits = int(getattr(ctx, "bits_per_raw_sample", 0) or 0) or (ctx.format.bits if ctx.format else None)
    start_s = float(stream.start_time * stream.time_base) if stream.start_time is not None else 0.0
    if frames is None:
        if stream.duration is not None:
            dur = float(stream.duration * stream.time_base)
        elif container.duration is not None:
            dur = container.duration / 1_000_000.0
        else:
            dur = 0.0
        frames = round(dur * rate)
    return AudioInfo(path=str(path), format=container.format.name, subtype=ctx.name,
                     sample_rate_hz=rate, channels=int(ctx.channels or len(names) or 1), frames=int(frames),
                     duration_s=frames / float(rate), bit_depth=bits, float_samples=is_float,
                     channel_layout=layout.name if layout is not None else None, channel_names=names,
                     start_s=start_s)


def audio_info(path: str | Path) -> AudioInfo:
    """Header facts without decoding (for containers, frames is the declared duration × rate)."""
    path = Path(path)
    check_file(path)
    info = _soundfile_info(path)
    if info is not None:
        if info.frames == 0:
            raise MediaError(f"{_name(path)}: no audio samples (0 frames)")
        return info
    container = _open_av(path)
    try:
        return _av_info(path, container)
    finally:
        container.close()


def _decode_av(path: Path, audio_stream: int = 0) -> tuple[np.ndarray, AudioInfo]:
    import av

    container = _open_av(path, audio_stream)
    try:
        stream = container.streams.audio[audio_stream]
        chunks: list[np.ndarray] = []
        resampler = None
        try:
            for frame in container.decode(stream):
                if resampler is None:
                    resampler = av.AudioResampler(format="dblp", layout=frame.layout, rate=frame.sample_rate)
                for out in resampler.resample(frame):
                    chunks.append(out.to_ndarray().T)
            if resampler is not None:
                for out in resampler.resample(None):
                    chunks.append(out.to_ndarray().T)
        except av.error.FFmpegError as exc:
            if not chunks:
                raise MediaError(f"{_name(path)}: audio cannot be decoded ({_short(exc)})") from None
            raise MediaError(f"{_name(path)}: truncated or corrupt audio after "
                             f"{sum(len(c) for c in chunks)} frames ({_short(exc)})") from None
        if not chunks:
            raise MediaError(f"{_name(path)}: no audio samples decoded")
        samples = np.ascontiguousarray(np.concatenate(chunks, axis=0), dtype=np.float64)
        declared = _av_info(path, container, audio_stream=audio_stream)
        info = _av_info(path, container, frames=samples.shape[0], audio_stream=audio_stream)
        if declared.frames > 0 and info.frames < declared.frames - max(0.5 * info.sample_rate_hz,
                                                                       0.05 * declared.frames):
            raise MediaError(f"{_name(path)}: truncated: container declares {declared.duration_s:.2f} s, "
                             f"only {info.duration_s:.2f} s decodes")
        return samples, info
    finally:
        container.close()


def load_audio(path: str | Path, *, sample_rate_hz: int | None = None, audio_stream: int = 0) -> Audio:
    """Decode the whole file to float64 (frames, channels).

    `audio_stream` picks among the file's audio streams (0 = first). With `sample_rate_hz`,
    resample to it (info keeps the file's own rate). Raises MediaError for a
    missing/empty/truncated/undecodable file, a file with no audio, or non-finite samples.
    """
    path = Path(path)
    check_file(path)
    # content-keyed (the file's bytes and name: the name's suffix may steer the demuxer): the same
    # bytes decode to the same samples; errors are never remembered, so they name this path
    samples, rate, info = memo("load_audio", (file_key(path), path.name, sample_rate_hz, audio_stream),
                               lambda: _load_audio(path, sample_rate_hz, audio_stream))
    return Audio(samples=samples, sample_rate_hz=rate, info=replace(info, path=str(path)))


def _load_audio(path: Path, sample_rate_hz: int | None, audio_stream: int) -> tuple[np.ndarray, int, AudioInfo]:
    info = _soundfile_info(path) if audio_stream == 0 else None
    if info is not None:
        if info.frames == 0:
            raise MediaError(f"{_name(path)}: no audio samples (0 frames)")
        try:
            samples = sf.read(str(path), dtype="float64", always_2d=True)[0]
        except (RuntimeError, sf.LibsndfileError) as exc:
            raise MediaError(f"{_name(path)}: audio cannot be decoded ({_short(exc)})") from None
        if samples.shape[0] < info.frames:
            raise MediaError(f"{_name(path)}: truncated: {info.frames} frames declared, "
                             f"{samples.shape[0]} read")
    else:
        samples, info = _decode_av(path, audio_stream)
    if samples.shape[0] == 0:
        raise MediaError(f"{_name(path)}: no audio samples (0 frames)")
    bad = ~np.isfinite(samples)
    if bad.any():
        first = int(np.argmax(bad.any(axis=1)))
        raise MediaError(f"{_name(path)}: {int(bad.sum())} non-finite (NaN/inf) samples, first at "
                         f"{first / info.sample_rate_hz:.3f} s")
    rate = info.sample_rate_hz
    if sample_rate_hz is not None and sample_rate_hz != rate:
        samples = resample(samples, rate, int(sample_rate_hz))
        rate = int(sample_rate_hz)
    return samples, rate, info


class AudioBlocks:
    """A file's audio as consecutive (frames, channels) float64 blocks, without holding it all.

    `dtype="float32"` (or setting `.dtype` before iterating, once `info` has been looked at) decodes
    straight to float32: for PCM up to 24 bit, float WAV and lossy codecs the values are the same,
    at half the memory traffic (the loudness meter reads float32 anyway).

    `info` is known before iterating (header facts; `frames` may be the declared count). Iterating
    raises MediaError on non-finite samples (naming the time), decode errors, and files that turn
    out shorter than declared (truncated), exactly as :func:`load_audio` would.
    """

    def __init__(self, path: str | Path, *, block_s: float = 10.0, audio_stream: int = 0,
                 dtype: str = "float64") -> None:
        self.path = Path(path)
        check_file(self.path)
        self.audio_stream = audio_stream
        if dtype not in ("float32", "float64"):
            raise ValueError(f"dtype must be float32 or float64, got {dtype!r}")
        self.dtype = dtype
        self._sf = _soundfile_info(self.path) if audio_stream == 0 else None
        if self._sf is not None:
            if self._sf.frames == 0:
                raise MediaError(f"{_name(self.path)}: no audio samples (0 frames)")
            self.info = self._sf
        else:
            container = _open_av(self.path, audio_stream)
            try:
                self.info = _av_info(self.path, container, audio_stream=audio_stream)
            finally:
                container.close()
        self.block_frames = max(1, int(block_s * self.info.sample_rate_hz))
        self.frames_read = 0

    def _check(self, block: np.ndarray) -> np.ndarray:
        # a finite sum proves every sample finite without a block-sized mask; else look closer
        bad = np.zeros(0, dtype=bool) if np.isfinite(block.sum()) else ~np.isfinite(block)
        if bad.any():
            first = self.frames_read + int(np.argmax(bad.any(axis=1)))
            raise MediaError(f"{_name(self.path)}: non-finite (NaN/inf) samples, first at "
                             f"{first / self.info.sample_rate_hz:.3f} s")
        self.frames_read += block.shape[0]
        return block

    def __iter__(self):
        if self._sf is not None:
            try:
                for block in sf.blocks(str(self.path), blocksize=self.block_frames, dtype=self.dtype,
                                       always_2d=True):
                    yield self._check(block)
            except (RuntimeError, sf.LibsndfileError) as exc:
                raise MediaError(f"{_name(self.path)}: audio cannot be decoded ({_short(exc)})") from None
            if self.frames_read < self.info.frames:
                raise MediaError(f"{_name(self.path)}: truncated: {self.info.frames} frames declared, "
                                 f"{self.frames_read} read")
            return
        yield from self._iter_av()

    def _iter_av(self):
        import av

        container = _open_av(self.path, self.audio_stream)
        try:
            stream = container.streams.audio[self.audio_stream]
            pending: list[np.ndarray] = []
            have = 0
            resampler = None
            try:
                for frame in container.decode(stream):
                    if resampler is None:
                        resampler = av.AudioResampler(format="fltp" if self.dtype == "float32" else "dblp",
                                                      layout=frame.layout, rate=frame.sample_rate)
                    for out in [*resampler.resample(frame)]:
                        pending.append(out.to_ndarray().T)
                        have += pending[-1].shape[0]
                    if have >= self.block_frames:
                        yield self._check(np.concatenate(pending, axis=0))
                        pending, have = [], 0
                if resampler is not None:
                    pending.extend(out.to_ndarray().T for out in resampler.resample(None))
            except av.error.FFmpegError as exc:
                raise MediaError(f"{_name(self.path)}: truncated or corrupt audio after "
                                 f"{self.frames_read + have} frames ({_short(exc)})") from None
            if pending:
                yield self._check(np.concatenate(pending, axis=0))
            if self.frames_read == 0:
                raise MediaError(f"{_name(self.path)}: no audio samples decoded")
            declared = self.info.frames
            if declared > 0 and self.frames_read < declared - max(0.5 * self.info.sample_rate_hz,
                                                                  0.05 * declared):
                raise MediaError(f"{_name(self.path)}: truncated: container declares "
                                 f"{declared / self.info.sample_rate_hz:.2f} s, only "
                                 f"{self.frames_read / self.info.sample_rate_hz:.2f} s decodes")
        finally:
            container.close()


def check_signal(samples: np.ndarray, what: str = "signal") -> np.ndarray:
    """Validate an in-memory signal for the primitives: non-empty, finite, numeric; float64 view."""
    arr = np.asarray(samples)
    if arr.size == 0:
        raise MediaError(f"{what}: empty (0 samples)")
    if not np.issubdtype(arr.dtype, np.number):
        raise MediaError(f"{what}: not numeric samples (dtype {arr.dtype})")
    arr = arr.astype(np.float64, copy=False)
    if not np.isfinite(arr).all():
        raise MediaError(f"{what}: contains non-finite (NaN/inf) samples")
    return arr


def db(power: float | np.ndarray, floor_db: float = -200.0) -> float | np.ndarray:
    """10·log10 of a power with a floor instead of -inf (digital silence)."""
    out = 10.0 * np.log10(np.maximum(power, 10.0 ** (floor_db / 10.0)))
    return float(out) if np.ndim(out) == 0 else out


__all__ = ["Audio", "AudioBlocks", "AudioInfo", "audio_info", "check_signal", "db", "load_audio", "resample"]
