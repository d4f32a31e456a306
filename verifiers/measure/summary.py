"""One-call summary of a media file: streams, rates, keyframes, loudness (what `tally analyze` shows).

The dict has exactly the keys issue 12 fixes (plus a few extra): `format`, `duration_s`, `streams`
= list of `{index, type, codec, width, height, fps, bitrate_bps, keyframe_interval_s: {mean, min,
max}}` for video and `{index, type, codec, sample_rate_hz, channels, loudness: {integrated_lufs,
lra_lu, true_peak_dbtp, sample_peak_dbfs, max_momentary_lufs, max_short_term_lufs}}` for audio.
Unusable input raises MediaError.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from verifiers.measure.errors import MediaError
from verifiers.measure.loudness import loudness_of_file
from verifiers.measure.streams import StreamProbe, probe


def _r(value: float | None, nd: int = 3) -> float | None:
    return round(value, nd) if value is not None and math.isfinite(value) else None


def _video(sp: StreamProbe) -> dict[str, Any]:
    iv = sp.keyframe_intervals_s()
    return {"index": sp.index, "type": "video", "codec": sp.codec, "width": sp.width, "height": sp.height,
            "fps": _r(sp.fps), "bitrate_bps": _r(sp.bitrate_bps, 0),
            "keyframe_interval_s": {"mean": _r(float(iv.mean())) if len(iv) else None,
                                    "min": _r(float(iv.min())) if len(iv) else None,
                                    "max": _r(float(iv.max())) if len(iv) else None},
            # extras
            "base_fps": _r(sp.base_fps), "pix_fmt": sp.pix_fmt, "packets": sp.packets,
            "keyframes": int(sp.keyframe.sum()), "start_s": _r(sp.start_s), "duration_s": _r(sp.duration_s)}


def _audio(path: Path, sp: StreamProbe, audio_index: int) -> dict[str, Any]:
    loud = loudness_of_file(path, audio_stream=audio_index)
    return {"index": sp.index, "type": "audio", "codec": sp.codec, "sample_rate_hz": sp.sample_rate_hz,
            "channels": sp.channels, "loudness": loud.summary(),
            # extras
            "channel_layout": sp.channel_layout, "bitrate_bps": _r(sp.bitrate_bps, 0),
            "start_s": _r(sp.start_s), "duration_s": _r(loud.duration_s)}


def analyze_file(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    media = probe(path)
    streams: list[dict[str, Any]] = []
    audio_index = 0
    for sp in media.streams:
        if sp.type == "video" and sp.packets:
            streams.append(_video(sp))
        elif sp.type == "audio":
            if sp.packets:
                streams.append(_audio(path, sp, audio_index))
            audio_index += 1
    if not streams:
        raise MediaError(f"{path.name}: no audio or video streams")
    duration = media.duration_s
    if duration is None:
        duration = max((s.get("duration_s") or 0.0) for s in streams)
    return {"format": media.format, "duration_s": _r(duration), "streams": streams, "path": str(path)}
