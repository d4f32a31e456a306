"""Live per-stream measurement from the bitstream (timestamps and byte counts), not from claims.

Windows use *media* time (message timestamps), so a burst of buffered data after a network stall
does not look like a bitrate spike. Sequence headers and metadata are excluded from bitrates
(a CBR check must not count them). Bitrate over whole GOPs is the figure to compare with a CBR
setting: x264's VBV lets single seconds swing, a GOP evens them out.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from verifiers.evidence.rtmp import AudioStats, StreamSnapshot, Summary, VideoStats

#: How much media time the fps window covers.
FPS_WINDOW_MS = 5000
#: The live `bitrate_bps` averages the most recent complete GOPs covering at least this much
#: media time (whole GOPs only, so a CBR encoder's VBV swings inside a GOP cancel out). Short on
#: purpose: x264's first GOP in CBR overshoots (the VBV starts nearly full) and a live figure
#: should let that go once the stream has settled.
LIVE_BITRATE_SPAN_MS = 4000
_GOPS_KEPT = 64
#: Span of the short bitrate window (`bitrate_1s_bps`).
BITRATE_WINDOW_MS = 1000
#: Entries either window may hold whatever the timestamps say: 5 s of 240 fps video or of
#: 96 kHz AAC is far below it, a flood of messages that share one timestamp is not (the issue
#: measured +292 MB per 3 M 2-byte AAC messages when windows were bounded by media time only).
MAX_WINDOW_ENTRIES = 4096
#: Whole media seconds of video bytes kept for the peak/mean (CBR) measure.
_BINS_KEPT = 12


@dataclass
class _Track:
    """Byte/timestamp bookkeeping shared by audio and video.

    Two windows, each bounded by media time *and* entry count, with O(1) work per frame: frame
    timestamps of the last FPS_WINDOW_MS (fps), and (ts, bytes) of the last BITRATE_WINDOW_MS
    with a running byte sum (bitrate_1s).
    """

    frames: int = 0
    bytes: int = 0               # media payload bytes, sequence headers excluded
    first_ts_ms: int | None = None
    last_ts_ms: int | None = None
    last_bytes: int = 0          # size of the most recent frame (excluded from span bitrates)
    window: deque[int] = field(default_factory=lambda: deque(maxlen=MAX_WINDOW_ENTRIES))  # ts, last ~5 s
    bwindow: deque[tuple[int, int]] = field(default_factory=lambda: deque(maxlen=MAX_WINDOW_ENTRIES))
    bwindow_bytes: int = 0       # sum of the sizes in bwindow
    backwards: int = 0           # timestamps that went back

    def add(self, ts_ms: int, size: int) -> None:
        if self.first_ts_ms is None:
            self.first_ts_ms = ts_ms
        elif self.last_ts_ms is not None and ts_ms < self.last_ts_ms:
            self.backwards += 1
        self.frames += 1
        self.bytes += size
        self.last_ts_ms = ts_ms
        self.last_bytes = size
        w = self.window
        w.append(ts_ms)  # at maxlen the oldest entry falls out by itself
        while w[0] < ts_ms - FPS_WINDOW_MS:
            w.popleft()
        bw = self.bwindow
        if len(bw) == MAX_WINDOW_ENTRIES:
            self.bwindow_bytes -= bw[0][1]
        bw.append((ts_ms, size))
        self.bwindow_bytes += size
        start = ts_ms - BITRATE_WINDOW_MS
        while bw[0][0] < start:
            self.bwindow_bytes -= bw.popleft()[1]

    def overall_bps(self) -> float | None:
        """Bytes of every frame but the last, over the span from first to last timestamp."""
        if self.first_ts_ms is None or self.last_ts_ms is None or self.last_ts_ms <= self.first_ts_ms:
            return None
        return (self.bytes - self.last_bytes) * 8000 / (self.last_ts_ms - self.first_ts_ms)

    def window_bps(self) -> float | None:
        """Bitrate over the last BITRATE_WINDOW_MS of media time, ending at the newest frame
        (which is excluded: its bytes belong to the interval after it)."""
        if not self.bwindow or self.last_ts_ms is None:
            return None
        if self.first_ts_ms is None or self.first_ts_ms > self.last_ts_ms - BITRATE_WINDOW_MS:
            return None
        return (self.bwindow_bytes - self.last_bytes) * 8000 / BITRATE_WINDOW_MS

    def rate_hz(self) -> float | None:
        w = self.window
        if len(w) < 2 or w[-1] <= w[0]:
            return None
        return (len(w) - 1) * 1000 / (w[-1] - w[0])


class StreamStats:
    """Everything measured about one published stream; `snapshot()` is what events/API show."""

    def __init__(self) -> None:
        self.video = _Track()
        self.audio = _Track()
        self.video_codec: str | None = None
        self.video_config: dict[str, Any] = {}
        self.audio_codec: str | None = None
        self.audio_config: dict[str, Any] = {}
        self.metadata_claimed: dict[str, Any] = {}
        self.total_bytes = 0            # every audio/video/data body, headers included
        self.keyframes = 0
        self._last_kf_ts: int | None = None
        self._gop_bytes = 0
        self.keyframe_intervals_s: list[float] = []
        self.gop_bitrates_bps: list[float] = []
        self._gop_spans: deque[tuple[int, int]] = deque(maxlen=_GOPS_KEPT)  # (bytes, ms), newest last
        #: the same from the second GOP on: x264's first CBR GOP overshoots (VBV starts full)
        self._settled_spans: deque[tuple[int, int]] = deque(maxlen=_GOPS_KEPT)
        #: (media second, video payload bytes) from the second keyframe on, newest last
        self._bins: deque[list[int]] = deque(maxlen=_BINS_KEPT)
        self.max_abs_skew_ms = 0
        self.video_gaps = 0             # frame intervals over 1.5× the typical one (drops)
        self._typical_interval_ms: float | None = None

    # --- feeding ---------------------------------------------------------------------------------
    def add_bytes(self, n: int) -> None:
        self.total_bytes += n

    def on_video_frame(self, ts_ms: int, payload_bytes: int, keyframe: bool) -> None:
        v = self.video
        prev = v.last_ts_ms
        if keyframe:
            if self._last_kf_ts is not None and ts_ms > self._last_kf_ts:
                span = ts_ms - self._last_kf_ts
                self.keyframe_intervals_s.append(span / 1000)
                self.gop_bitrates_bps.append(self._gop_bytes * 8000 / span)
                if self._gop_spans:
                    self._settled_spans.append((self._gop_bytes, span))
                self._gop_spans.append((self._gop_bytes, span))
                del self.keyframe_intervals_s[:-1000]
                del self.gop_bitrates_bps[:-1000]
            self._last_kf_ts = ts_ms
            self._gop_bytes = 0
            self.keyframes += 1
        if self._last_kf_ts is not None:
            self._gop_bytes += payload_bytes
        if self.keyframes >= 2:
            sec = ts_ms // 1000
            bins = self._bins
            if bins and bins[-1][0] == sec:
                bins[-1][1] += payload_bytes
            elif not bins or sec > bins[-1][0]:
                bins.append([sec, payload_bytes])
        v.add(ts_ms, payload_bytes)
        if prev is not None and ts_ms > prev:
            interval = ts_ms - prev
            typical = self._typical_interval_ms
            if typical is not None and interval > 1.5 * typical + 1:
                self.video_gaps += 1
            # Slow-moving estimate so one gap does not redefine "typical".
            self._typical_interval_ms = interval if typical is None else typical * 0.95 + interval * 0.05
        self._skew()

    def on_audio_frame(self, ts_ms: int, payload_bytes: int) -> None:
        self.audio.add(ts_ms, payload_bytes)
        self._skew()

    def _skew(self) -> None:
        a, v = self.audio.last_ts_ms, self.video.last_ts_ms
        if a is not None and v is not None:
            self.max_abs_skew_ms = max(self.max_abs_skew_ms, abs(a - v))

    # --- reading ---------------------------------------------------------------------------------
    def gop_bitrate_bps(self, settled: bool = False) -> float | None:
        """Bitrate over the most recent whole GOPs covering LIVE_BITRATE_SPAN_MS (or all kept);
        `settled`: without the first GOP (None until the second GOP is complete)."""
        total_bytes = total_ms = 0
        for size, ms in reversed(self._settled_spans if settled else self._gop_spans):
            total_bytes += size
            total_ms += ms
            if total_ms >= LIVE_BITRATE_SPAN_MS:
                break
        return total_bytes * 8000 / total_ms if total_ms else None

    def keyframe_span_s(self) -> float | None:
        """The longer of the last complete keyframe interval and the time since the last
        keyframe (so a 6 s GOP shows as too long before its next keyframe arrives)."""
        if self._last_kf_ts is None or self.video.last_ts_ms is None:
            return None
        open_s = max(0, self.video.last_ts_ms - self._last_kf_ts) / 1000
        last_s = self.keyframe_intervals_s[-1] if self.keyframe_intervals_s else None
        if last_s is None:
            # Before the second keyframe only an open span over any plausible interval counts.
            return open_s if open_s > 2.5 else None
        return max(last_s, open_s)

    def bitrate_peak_ratio(self) -> float | None:
        """Largest whole-second video bitrate over the mean of the kept whole seconds (from the
        second GOP on); 1.0 is perfectly constant. None with fewer than 3 whole seconds."""
        # The oldest second may have begun mid-second and the newest is still filling.
        whole = [b for _, b in list(self._bins)[1:-1]]
        if len(whole) < 3:
            return None
        mean = sum(whole) / len(whole)
        return max(whole) / mean if mean > 0 else None

    def duration_s(self) -> float:
        firsts = [t.first_ts_ms for t in (self.video, self.audio) if t.first_ts_ms is not None]
        lasts = [t.last_ts_ms for t in (self.video, self.audio) if t.last_ts_ms is not None]
        if not firsts or not lasts:
            return 0.0
        return max(0, max(lasts) - min(firsts)) / 1000

    def snapshot(self) -> dict[str, Any]:
        """The event/API payload: the typed snapshot (verifiers.evidence) as its dict."""
        return self.typed_snapshot().to_payload()

    def typed_snapshot(self) -> StreamSnapshot:
        v, a = self.video, self.audio
        live_bps = self.gop_bitrate_bps()
        if live_bps is None:
            live_bps = v.window_bps()
        skew = (a.last_ts_ms - v.last_ts_ms) if a.last_ts_ms is not None and v.last_ts_ms is not None else None
        return StreamSnapshot(
            duration_s=round(self.duration_s(), 3),
            bytes=self.total_bytes,
            av_skew_ms=skew,
            max_abs_av_skew_ms=self.max_abs_skew_ms,
            video=VideoStats(
                codec=self.video_codec,
                **self.video_config,
                frames=v.frames,
                keyframes=self.keyframes,
                fps=_round(v.rate_hz(), 3),
                fps_overall=_round(((v.frames - 1) * 1000 / (v.last_ts_ms - v.first_ts_ms))
                                   if v.frames > 1 and v.last_ts_ms and v.first_ts_ms is not None
                                   and v.last_ts_ms > v.first_ts_ms else None, 3),
                bitrate_bps=_round(live_bps, 0),
                bitrate_1s_bps=_round(v.window_bps(), 0),
                bitrate_gop_bps=Summary.of(self.gop_bitrates_bps),
                bitrate_overall_bps=_round(v.overall_bps(), 0),
                keyframe_interval_s=Summary.of(self.keyframe_intervals_s),
                gaps=self.video_gaps,
                timestamps_backwards=v.backwards,
                bytes=v.bytes,
                first_ts_ms=v.first_ts_ms,
                last_ts_ms=v.last_ts_ms,
            ),
            audio=AudioStats(
                codec=self.audio_codec,
                **self.audio_config,
                frames=a.frames,
                bitrate_bps=_round(a.overall_bps(), 0),
                bitrate_1s_bps=_round(a.window_bps(), 0),
                frame_rate_hz=_round(a.rate_hz(), 3),
                timestamps_backwards=a.backwards,
                bytes=a.bytes,
                first_ts_ms=a.first_ts_ms,
                last_ts_ms=a.last_ts_ms,
            ),
            claimed=dict(self.metadata_claimed),
        )

def _round(x: float | None, nd: int) -> float | None:
    if x is None:
        return None
    return round(x, nd) if nd else float(round(x))


#: onMetaData keys worth comparing with measurements.
CLAIM_KEYS = ("width", "height", "framerate", "videodatarate", "audiodatarate", "audiosamplerate",
              "audiosamplesize", "stereo", "audiochannels", "videocodecid", "audiocodecid", "encoder",
              "duration")
