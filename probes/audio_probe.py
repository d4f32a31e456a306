"""Live audio meters for one track: loudness, peaks, tones, silence, noise floor, clipping.

Feed `AudioBlock`s in order (`push`); events go out through `emit(source, kind, payload)`:

* `meter` — every 100 ms of *stream* time (10 Hz): momentary (400 ms), short-term (3 s) and
  gated integrated loudness (LUFS), true peak per channel since the start (dBTP), sample peak per
  channel in the last 100 ms and since the start (dBFS), RMS and noise floor per channel (dBFS),
  clipped samples in the frame, tones currently on. Blocks are split at the 100 ms boundaries, so
  a frame's readings are those of the signal up to exactly its `t_s`, whatever the block size.
* `silence_start` / `silence_end`, `clip`, `tone_on` / `tone_off` — as soon as they are known:
  blocks are processed per `chunk_s` (100 ms; per-call overhead dominates below that), so a
  change goes out at most that long after its samples, in time order, with an exact `t_s`.

Loudness is the measurement package's incremental BS.1770 engine
(verifiers.measure.loudness.LoudnessMeter: libebur128 for M/S/I/LRA, the package's truepeak.py for
peaks), so a live meter and a file measurement cannot disagree. −inf readings (silence) are sent as null.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from probes.detectors.goertzel import ToneTracker
from probes.detectors.levels import NoiseFloor, SilenceTracker, WindowRms, clipped_samples
from probes.types import AudioBlock, Emit, db_or_none, lin_to_db
from verifiers.evidence.probe import AudioMeter
from verifiers.measure.loudness import LoudnessMeter

SOURCE = "probe.audio"


class AudioProbe:
    def __init__(self, emit: Emit, sample_rate_hz: int, channels: int, *, tones_hz: Sequence[float] = (),
                 channel_names: Sequence[str] | None = None, track: int = 0, name: str = "",
                 frame_s: float = 0.1, silence_dbfs: float = -60.0, silence_min_s: float = 0.3,
                 clip_level: float = 0.999, tone_min_dbfs: float = -60.0, chunk_s: float = 0.1,
                 source: str = SOURCE) -> None:
        self.emit = emit
        self.source = source
        self.sr = int(sample_rate_hz)
        self.channels = int(channels)
        self.track = track
        self.name = name
        names = channel_names
        if names is None and self.channels > 2 and self.channels not in (3, 4, 5, 6, 8):
            names = ["FC"] * self.channels  # unknown layouts: every channel counts once
        self.loudness = LoudnessMeter(self.sr, self.channels, channel_names=names)
        self.tones = ToneTracker(self.sr, self.channels, list(tones_hz), min_level_dbfs=tone_min_dbfs) \
            if tones_hz else None
        self.windows = WindowRms(self.sr, self.channels)
        self.silence = SilenceTracker(self.channels, threshold_dbfs=silence_dbfs, min_s=silence_min_s)
        self.noise = NoiseFloor(self.channels)
        self.clip_level = clip_level
        self.frame_len = max(1, round(frame_s * self.sr))
        self.chunk_len = max(1, round(chunk_s * self.sr))
        self._buf: list[np.ndarray] = []
        self._buf_n = 0
        self._buf_t = 0.0
        self._in_frame = 0
        self._t0: float | None = None
        self.frames_seen = 0  # samples
        self._frame_peak = np.zeros(self.channels)
        self._frame_sq = np.zeros(self.channels)
        self._frame_clips = np.zeros(self.channels, dtype=np.int64)
        self._total_peak = np.zeros(self.channels)
        self.meter_frames = 0
        self._changes: list[tuple[str, dict[str, Any]]] = []

    # -- feeding -------------------------------------------------------------------------------
    def push(self, block: AudioBlock) -> None:
        """Queue a block; work is done per `chunk_s` of signal (per-call overhead dominates below
        that), so events come out at most `chunk_s` after the samples that caused them. Their
        `t_s` values are exact whatever the chunking."""
        x = np.asarray(block.samples)
        if x.ndim == 1:
            x = x[:, None]
        if x.shape[1] != self.channels:
            raise ValueError(f"block has {x.shape[1]} channels, probe was made for {self.channels}")
        if block.sample_rate_hz != self.sr:
            raise ValueError(f"block at {block.sample_rate_hz} Hz, probe was made for {self.sr} Hz")
        if not self._buf:
            self._buf_t = block.t_s
        self._buf.append(x)
        self._buf_n += x.shape[0]
        if self._buf_n >= self.chunk_len:
            self.flush()

    def flush(self) -> None:
        """Process whatever is queued (call at end of input)."""
        if not self._buf:
            return
        x = self._buf[0] if len(self._buf) == 1 else np.concatenate(self._buf, axis=0)
        t = self._buf_t
        self._buf, self._buf_n = [], 0
        if self._t0 is None:
            self._t0 = t
        pos = 0
        while pos < x.shape[0]:
            take = min(x.shape[0] - pos, self.frame_len - self._in_frame)
            self._process(x[pos:pos + take], t + pos / self.sr)
            pos += take
            self._in_frame += take
            if self._in_frame == self.frame_len:
                self._in_frame = 0
                self._emit_frame(t + pos / self.sr)

    def _process(self, x: np.ndarray, t_s: float) -> None:
        self.loudness.push(x)
        peak = np.maximum(x.max(axis=0), -x.min(axis=0))
        self._frame_peak = np.maximum(self._frame_peak, peak)
        self._total_peak = np.maximum(self._total_peak, peak)
        self._frame_sq += np.einsum("ij,ij->j", x, x, dtype=np.float64)
        if peak.max() >= self.clip_level:
            count, first = clipped_samples(x, self.clip_level)
            for c in np.nonzero(count)[0]:
                if self._frame_clips[c] == 0:  # one event per channel per meter frame
                    self._change("clip", {"channel": int(c), "t_s": round(t_s + int(first[c]) / self.sr, 4),
                                        "level": self.clip_level})
            self._frame_clips += count
        starts, rms = self.windows.push(x, t_s)
        if len(starts):
            self.noise.push(rms)
            for ch in self.silence.push(starts, rms, self.windows.win / self.sr):
                self._change(ch.kind, {"channel": ch.channel, "t_s": round(ch.t_s, 4), **ch.detail})
        if self.tones is not None:
            for tc in self.tones.push(x, t_s):
                self._change("tone_on" if tc.on else "tone_off",
                           {"channel": tc.channel, "freq_hz": tc.freq_hz, "t_s": round(tc.t_s, 4),
                            "level_dbfs": db_or_none(tc.level_dbfs)})
        self.frames_seen += x.shape[0]
        if self._changes:  # detectors report per chunk; send in time order
            self._changes.sort(key=lambda kp: kp[1]["t_s"])
            for kind, payload in self._changes:
                self._send(kind, payload)
            self._changes.clear()

    def _change(self, kind: str, payload: dict[str, Any]) -> None:
        self._changes.append((kind, payload))

    # -- output --------------------------------------------------------------------------------
    def _send(self, kind: str, payload: dict[str, Any]) -> None:
        payload = {"track": self.track, **({"name": self.name} if self.name else {}), **payload}
        if kind == AudioMeter.KIND:  # typed evidence (verifiers.evidence.probe): the dashboard parses it
            payload = AudioMeter.from_payload(payload, f"{self.source}/{kind}").to_payload()
        self.emit(self.source, kind, payload)

    def _emit_frame(self, t_s: float) -> None:
        lm = self.loudness
        rms = np.sqrt(self._frame_sq / self.frame_len)
        tp = lm.true_peak_per_channel_dbtp()
        payload: dict[str, Any] = {
            "t_s": round(t_s, 4),
            # the meter's newest per-100-ms values (libebur128's, hop-aligned like this frame); −inf
            # before the first full window (0.4 s / 3 s), as in a file measurement
            "momentary_lufs": db_or_none(lm.momentary_lufs),
            "short_term_lufs": db_or_none(lm.short_term_lufs),
            "integrated_lufs": db_or_none(lm.integrated_lufs),
            "true_peak_dbtp": [db_or_none(v) for v in tp],
            "sample_peak_dbfs": [db_or_none(lin_to_db(float(v))) for v in self._frame_peak],
            "max_sample_peak_dbfs": [db_or_none(lin_to_db(float(v))) for v in self._total_peak],
            "rms_dbfs": [db_or_none(lin_to_db(float(v))) for v in rms],
            "noise_floor_dbfs": [db_or_none(v) for v in self.noise.floor_dbfs()],
            "clipped_samples": [int(v) for v in self._frame_clips],
            "silent": [bool(v) for v in self.silence.silent],
        }
        if self.tones is not None:
            payload["tones"] = self.tones.current()
        self._send("meter", payload)
        self.meter_frames += 1
        self._frame_peak[:] = 0
        self._frame_sq[:] = 0
        self._frame_clips[:] = 0

    def summary(self) -> dict[str, Any]:
        """Whole-run readings so far (same numbers a file measurement gives), JSON-ready."""
        self.flush()
        lm = self.loudness
        return {"duration_s": round(self.frames_seen / self.sr, 4), "integrated_lufs": db_or_none(lm.integrated_lufs),
                "lra_lu": db_or_none(lm.lra_lu), "true_peak_dbtp": [db_or_none(v) for v in lm.true_peak_per_channel_dbtp()],
                "sample_peak_dbfs": [db_or_none(v) for v in lm.sample_peak_per_channel_dbfs()]}
