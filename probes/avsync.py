"""A/V sync from clapper events: for each video flash, the audio transient next to it.

The offset is `audio onset − flash frame time`, both on the container's timeline (per-stream pts,
start times kept; see probes.sources.av): positive means the sound comes late. A flash is
evaluated once audio up to `flash + search_s` has arrived; the transient is the strongest onset
(verifiers.measure.onsets, ~1 ms on sharp attacks) within ±`search_s` of the flash, found on the
channel mix. A flash with no transient near it is reported as `sync_missing`, not skipped.

Resolution is bounded by the video frame period for the flash side (a flash is dated by the pts of
the first bright frame) and by the onset detector for the audio side.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from probes.types import AudioBlock, Emit
from verifiers.measure.onsets import detect_onsets

SOURCE = "probe.avsync"


class AvSyncProbe:
    def __init__(self, emit: Emit, *, search_s: float = 0.5, threshold_db: float = 12.0, keep_s: float = 10.0,
                 source: str = SOURCE) -> None:
        self.emit = emit
        self.source = source
        self.search_s = search_s
        self.threshold_db = threshold_db
        self.keep_s = keep_s
        self._blocks: deque[tuple[float, np.ndarray]] = deque()
        self._sr: int | None = None
        self._pending: list[float] = []
        self.results: list[dict[str, Any]] = []

    # -- inputs --------------------------------------------------------------------------------
    def push_audio(self, block: AudioBlock) -> None:
        x = np.asarray(block.samples, dtype=np.float64)
        mono = x.mean(axis=1) if x.ndim == 2 else x
        self._sr = block.sample_rate_hz
        self._blocks.append((block.t_s, mono))
        end = block.t_s + len(mono) / block.sample_rate_hz
        while self._blocks and self._blocks[0][0] + len(self._blocks[0][1]) / self._sr < end - self.keep_s:
            self._blocks.popleft()
        self._evaluate(end)

    def push_flash(self, t_s: float) -> None:
        self._pending.append(t_s)

    def on_video_event(self, source: str, kind: str, payload: dict[str, Any]) -> None:
        """Use as (part of) a VideoProbe's emit: takes the flashes, ignores the rest."""
        if kind == "flash":
            self.push_flash(float(payload["t_s"]))

    # -- work ----------------------------------------------------------------------------------
    def _audio_end(self) -> float:
        if not self._blocks or self._sr is None:
            return -np.inf
        t, x = self._blocks[-1]
        return t + len(x) / self._sr

    def _evaluate(self, audio_end_s: float) -> None:
        ready = [t for t in self._pending if audio_end_s >= t + self.search_s]
        for t in ready:
            self._pending.remove(t)
            self._measure(t)

    def flush(self) -> None:
        """End of input: evaluate every flash still waiting, with whatever audio there is."""
        for t in list(self._pending):
            self._pending.remove(t)
            self._measure(t)

    def _measure(self, flash_t: float) -> None:
        sr = self._sr
        blocks = [(t, x) for t, x in self._blocks
                  if sr and t < flash_t + self.search_s and t + len(x) / sr > flash_t - self.search_s]
        if not blocks or sr is None:
            self._send("sync_missing", {"flash_t_s": round(flash_t, 4), "reason": "no audio around the flash"})
            return
        t0 = blocks[0][0]
        x = np.concatenate([b for _, b in blocks])
        lo = max(0, round((flash_t - self.search_s - t0) * sr))
        hi = min(len(x), round((flash_t + self.search_s - t0) * sr))
        onsets = detect_onsets(x[lo:hi], sr, threshold_db=self.threshold_db)
        if not onsets:
            self._send("sync_missing", {"flash_t_s": round(flash_t, 4), "reason": "no audio transient"})
            return
        best = max(onsets, key=lambda o: o.strength_db)
        audio_t = t0 + (lo + best.sample) / sr
        result = {"flash_t_s": round(flash_t, 4), "audio_t_s": round(audio_t, 4),
                  "offset_ms": round((audio_t - flash_t) * 1000.0, 2), "strength_db": best.strength_db}
        self.results.append(result)
        self._send("sync", result)

    def _send(self, kind: str, payload: dict[str, Any]) -> None:
        self.emit(self.source, kind, payload)
