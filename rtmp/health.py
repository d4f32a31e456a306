"""Live stream health against platform profiles, evaluated on every stats tick.

Every measured value comes from the bitstream (SPS and AudioSpecificConfig, frame timestamps,
payload bytes); onMetaData is only ever compared with those, and a disagreement is itself the
`metadataMismatch` issue. A rule whose measure is not available yet (no second GOP, no audio)
is listed under `not_evaluated` rather than passed.
"""

from __future__ import annotations

from typing import Any

from rtmp.platforms import Profile, Rule
from rtmp.stats import StreamStats

_SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


def _mismatches(stats: StreamStats, snap: dict[str, Any]) -> list[dict[str, Any]] | None:
    """Claims in onMetaData that the bitstream contradicts; None without metadata."""
    claimed = stats.metadata_claimed
    if not claimed:
        return None
    v, a = snap["video"], snap["audio"]
    out: list[dict[str, Any]] = []

    def num(key: str) -> float | None:
        value = claimed.get(key)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None

    for key, measured in (("width", v.get("width")), ("height", v.get("height"))):
        c = num(key)
        if c is not None and measured is not None and int(c) != int(measured):
            out.append({"key": key, "claimed": c, "measured": measured})
    c = num("framerate")
    if c is not None and v.get("fps") is not None and abs(c - v["fps"]) > max(1.0, 0.05 * c):
        out.append({"key": "framerate", "claimed": c, "measured": v["fps"]})
    c = num("audiosamplerate")
    rate = a.get("sample_rate_hz")
    if c is not None and rate is not None and int(c) not in (rate, 2 * rate):  # implicit SBR: 2× the core
        out.append({"key": "audiosamplerate", "claimed": c, "measured": rate})
    c = num("audiochannels")
    if c is not None and a.get("channels") and int(c) != a["channels"]:
        out.append({"key": "audiochannels", "claimed": c, "measured": a["channels"]})
    stereo = claimed.get("stereo")
    if isinstance(stereo, bool) and a.get("channels") in (1, 2) and stereo != (a["channels"] == 2):
        out.append({"key": "stereo", "claimed": stereo, "measured": a["channels"]})
    c = num("videodatarate")
    settled = stats.gop_bitrate_bps(settled=True)
    if c is not None and settled is not None and abs(settled / 1000 - c) > 0.3 * c:
        out.append({"key": "videodatarate", "claimed": c, "measured": round(settled / 1000)})
    return out


def measure_stream(stats: StreamStats, snap: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every value a profile rule can check; None = not measurable (yet)."""
    v, a = snap["video"], snap["audio"]
    vbps = stats.gop_bitrate_bps(settled=True)
    abps = a.get("bitrate_bps")
    has_video = bool(v.get("frames")) or bool(v.get("codec"))
    has_audio = bool(a.get("frames")) or bool(a.get("codec"))
    out = {
        "keyframe_interval_s": stats.keyframe_span_s(),
        "video_codec": v.get("codec") if has_video else None,
        "video_profile": v.get("profile"),
        "video_width": v.get("width"),
        "video_height": v.get("height"),
        "video_fps": v.get("fps"),
        "video_bitrate_kbps": vbps / 1000 if vbps is not None else None,
        "video_bitrate_peak_ratio": stats.bitrate_peak_ratio(),
        "audio_codec": a.get("codec") if has_audio else None,
        "audio_profile": a.get("profile"),
        "audio_sample_rate_hz": a.get("sample_rate_hz"),
        "audio_channels": a.get("channels"),
        "audio_bitrate_kbps": abps / 1000 if isinstance(abps, (int, float)) else None,
        "audio_loudness_lufs": None,
        "metadata_mismatch": _mismatches(stats, snap),
    }
    if extra:
        out.update({k: val for k, val in extra.items() if k in out})
    return out


def _check(rule: Rule, value: Any, measures: dict[str, Any]) -> tuple[bool, Any] | None:
    """(violated, limit) or None when the rule cannot be evaluated."""
    if value is None:
        return None
    if rule.empty:
        return (bool(value), [])
    if rule.one_of is not None:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            ok = any(isinstance(x, (int, float)) and abs(value - x) <= rule.tolerance for x in rule.one_of)
        else:
            ok = value in rule.one_of
        return (not ok, list(rule.one_of))
    lo, hi = rule.min, rule.max
    if rule.bands is not None:
        height, fps = measures.get("video_height"), measures.get("video_fps")
        if height is None or fps is None:
            return None
        band = next((b for b in rule.bands if height <= b.max_height and fps <= b.max_fps), rule.bands[-1])
        lo, hi = (band.min, None) if rule.bound == "min" else (None, band.max)
    if hi is not None:
        slack = rule.tolerance + hi * rule.tolerance_pct / 100
        if value > hi + slack:
            return (True, hi)
    if lo is not None:
        slack = rule.tolerance + lo * rule.tolerance_pct / 100
        if value < lo - slack:
            return (True, lo)
    return (False, hi if hi is not None else lo)


def _rounded(value: Any) -> Any:
    return round(value, 3) if isinstance(value, float) else value


class ProfileHealth:
    """One profile's view of one stream; `evaluate` says whether anything changed."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.status: str | None = None
        self.issues: dict[str, dict[str, Any]] = {}
        self.not_evaluated: list[str] = []

    def evaluate(self, measures: dict[str, Any], has_media: bool, now_s: float) -> bool:
        prof = self.profile
        raised: dict[str, dict[str, Any]] = {}
        skipped: list[str] = []
        for rule in prof.rules:
            value = measures.get(rule.measure)
            result = _check(rule, value, measures)
            if result is None:
                skipped.append(rule.issue)
                continue
            violated, limit = result
            if not violated:
                continue
            prev = self.issues.get(rule.issue) or raised.get(rule.issue)
            worst = raised.get(rule.issue)
            if worst is not None and _SEVERITY_RANK[worst["severity"]] >= _SEVERITY_RANK[rule.severity]:
                continue
            raised[rule.issue] = {"type": rule.issue, "severity": rule.severity, "measured": _rounded(value),
                                  "limit": limit, "since_s": prev["since_s"] if prev else round(now_s, 3),
                                  "source": prof.sources[rule.source]["url"]}
        if not has_media:
            status = prof.no_data_status
        elif raised:
            worst_sev = max((i["severity"] for i in raised.values()), key=_SEVERITY_RANK.__getitem__)
            status = prof.status[worst_sev]
        else:
            status = prof.status["info"]
        changed = status != self.status or set(raised) != set(self.issues)
        self.status, self.issues, self.not_evaluated = status, raised, skipped
        return changed

    def view(self) -> dict[str, Any]:
        out: dict[str, Any] = {"profile": self.profile.name, "version": self.profile.version,
                               "status": self.status or self.profile.no_data_status,
                               "issues": sorted(self.issues.values(), key=lambda i: i["type"]),
                               "not_evaluated": sorted(set(self.not_evaluated))}
        if self.profile.platform_status:
            out["platform_status"] = self.profile.platform_status.get(out["status"], out["status"])
        return out


class StreamHealth:
    """All profiles for one stream. `extra` takes measurements the ingest cannot make itself
    (audio_loudness_lufs from a live audio probe)."""

    def __init__(self, profiles: list[Profile]) -> None:
        self.profiles = [ProfileHealth(p) for p in profiles]
        self.extra: dict[str, Any] = {}

    def evaluate(self, stats: StreamStats, snap: dict[str, Any]) -> list[dict[str, Any]]:
        """Evaluate every profile; return the views of those whose status or issue set changed."""
        if not self.profiles:
            return []
        measures = measure_stream(stats, snap, self.extra)
        has_media = bool(snap["video"]["frames"] or snap["audio"]["frames"])
        now_s = float(snap["duration_s"])
        return [ph.view() for ph in self.profiles if ph.evaluate(measures, has_media, now_s)]

    def view(self) -> dict[str, dict[str, Any]]:
        return {ph.profile.name: ph.view() for ph in self.profiles}
