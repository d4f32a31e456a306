"""OBS profile files (basic/profiles/<name>/): basic.ini, stream/record encoder JSON, service.json.

Effective values follow OBS's own rules (obs-studio UI/window-basic-main.cpp, 29.0.2): absent keys
take OBS's defaults; Simple and Advanced output modes keep recording settings in different
sections; 30+ writes RecFormat2 where 29 wrote RecFormat; replay-buffer prefix/suffix live in
[SimpleOutput] even in Advanced mode.
"""

from __future__ import annotations

import configparser
import json
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from verifiers.apps.obs.collection import tracks_from_mask
from verifiers.apps.obs.defaults import with_defaults
from verifiers.apps.obs.errors import ObsFileError
from verifiers.apps.obs.hotkeys import decode_bindings


@dataclass(frozen=True)
class VideoSettings:
    base_w_px: int | None
    base_h_px: int | None
    output_w_px: int | None
    output_h_px: int | None
    fps: Fraction

    @property
    def fps_float(self) -> float:
        return float(self.fps)


@dataclass(frozen=True)
class RecordingSettings:
    path: str | None
    format: str                # "mkv", "mp4", "flv", "mov", "hybrid_mp4", ...
    encoder: str               # Advanced: encoder id or "none" (= use stream encoder); Simple: quality preset's encoder
    tracks: tuple[int, ...]    # 1-based
    rec_type: str = "Standard"  # Advanced only: Standard | FFmpeg
    quality: str | None = None  # Simple only: Stream | Small | HQ | Lossless


@dataclass(frozen=True)
class ReplayBufferSettings:
    enabled: bool
    max_time_s: int
    max_size_mb: int
    prefix: str
    suffix: str


@dataclass(frozen=True)
class Profile:
    name: str
    path: str
    output_mode: str          # "Simple" | "Advanced"
    recording: RecordingSettings
    replay_buffer: ReplayBufferSettings
    video: VideoSettings
    hotkeys: dict[str, tuple[str, ...]]
    track_bitrates_kbps: dict[int, int]
    audio_sample_rate_hz: int
    ini: dict[str, dict[str, str]] = field(repr=False)
    stream_encoder: dict[str, Any] | None = None
    record_encoder: dict[str, Any] | None = None
    service: dict[str, Any] | None = None

    def get(self, section: str, key: str, default: str | None = None) -> str | None:
        return self.ini.get(section, {}).get(key, default)


def read_ini(path: str | Path) -> dict[str, dict[str, str]]:
    """OBS's ini dialect (case-kept keys, '=' only, no interpolation) -> {section: {key: value}}."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ObsFileError(p, f"cannot read: {exc.strerror or exc}") from None
    if b"\x00" in raw:
        raise ObsFileError(p, "binary data (NUL bytes), not an ini file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ObsFileError(p, "not UTF-8 text") from None
    cp = configparser.ConfigParser(interpolation=None, delimiters=("=",), strict=False,
                                   comment_prefixes=(";", "#"), inline_comment_prefixes=None)
    cp.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        cp.read_string(text, source=str(p))
    except configparser.Error as exc:
        first = str(exc).splitlines()[0]
        raise ObsFileError(p, f"not a valid ini file: {first}") from None
    if not cp.sections() and text.strip():
        raise ObsFileError(p, "no [section] found")
    return {s: dict(cp.items(s)) for s in cp.sections()}


def read_json_object(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ObsFileError(p, f"cannot read: {exc.strerror or exc}") from None
    try:
        obj = json.loads(data)
    except UnicodeDecodeError:
        raise ObsFileError(p, "not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ObsFileError(p, f"not valid JSON (truncated?): {exc.msg} at line {exc.lineno} "
                              f"column {exc.colno}") from None
    if not isinstance(obj, dict):
        raise ObsFileError(p, f"expected a JSON object, got {type(obj).__name__}")
    return obj


def load_encoder(path: str | Path, encoder_id: str = "obs_x264") -> dict[str, Any]:
    """streamEncoder.json / recordEncoder.json with the encoder's defaults filled in."""
    return with_defaults(encoder_id, read_json_object(path))


def load_service(path: str | Path) -> dict[str, Any]:
    """service.json -> {"type": ..., "server": ..., "key": ..., other settings}."""
    obj = read_json_object(path)
    settings = obj.get("settings", {})
    if not isinstance(settings, dict):
        raise ObsFileError(path, "settings: expected an object")
    return {"type": obj.get("type", "rtmp_common"), **settings}


def load_profile(profile_dir: str | Path) -> Profile:
    """Parse a profile directory: basic.ini plus whichever encoder/service JSON files exist."""
    d = Path(profile_dir)
    ini_path = d / "basic.ini"
    ini = read_ini(ini_path)
    prof = parse_basic_ini(ini, str(ini_path))
    mode_adv = prof.output_mode == "Advanced"
    extras: dict[str, Any] = {}
    se, re_ = d / "streamEncoder.json", d / "recordEncoder.json"
    stream_id = (ini.get("AdvOut", {}).get("Encoder", "obs_x264") if mode_adv
                 else ini.get("SimpleOutput", {}).get("StreamEncoder", "x264"))
    stream_id = "obs_x264" if stream_id == "x264" else stream_id
    if se.exists():
        extras["stream_encoder"] = load_encoder(se, stream_id)
    if re_.exists():
        rec_id = prof.recording.encoder if prof.recording.encoder not in ("none", "x264") else "obs_x264"
        extras["record_encoder"] = load_encoder(re_, rec_id)
    if (d / "service.json").exists():
        extras["service"] = load_service(d / "service.json")
    return Profile(**{**prof.__dict__, **extras})


def parse_basic_ini(ini: dict[str, dict[str, str]], path: str = "basic.ini") -> Profile:
    g = _IniGet(ini, path)
    mode = g.str("Output", "Mode", "Simple")
    if mode not in ("Simple", "Advanced"):
        raise ObsFileError(path, f"[Output] Mode={mode!r}: expected Simple or Advanced")
    if mode == "Advanced":
        rec = RecordingSettings(
            path=g.opt("AdvOut", "RecFilePath"),
            format=g.opt("AdvOut", "RecFormat2") or g.str("AdvOut", "RecFormat", "mkv"),
            encoder=g.str("AdvOut", "RecEncoder", "none"),
            tracks=tracks_from_mask(g.int("AdvOut", "RecTracks", 1)),
            rec_type=g.str("AdvOut", "RecType", "Standard"))
        rb_sec = "AdvOut"
    else:
        rec = RecordingSettings(
            path=g.opt("SimpleOutput", "FilePath"),
            format=g.opt("SimpleOutput", "RecFormat2") or g.str("SimpleOutput", "RecFormat", "mkv"),
            encoder=g.str("SimpleOutput", "RecEncoder", "x264"),
            tracks=(1,), quality=g.str("SimpleOutput", "RecQuality", "Stream"))
        rb_sec = "SimpleOutput"
    rb = ReplayBufferSettings(
        enabled=g.bool(rb_sec, "RecRB", False), max_time_s=g.int(rb_sec, "RecRBTime", 20),
        max_size_mb=g.int(rb_sec, "RecRBSize", 512),
        prefix=g.str("SimpleOutput", "RecRBPrefix", "Replay"),
        suffix=g.str("SimpleOutput", "RecRBSuffix", ""))
    fps_type = g.int("Video", "FPSType", 0)
    if fps_type == 1:
        fps = Fraction(g.int("Video", "FPSInt", 30))
    elif fps_type == 2:
        den = g.int("Video", "FPSDen", 1)
        if den <= 0:
            raise ObsFileError(path, "[Video] FPSDen must be positive")
        fps = Fraction(g.int("Video", "FPSNum", 30), den)
    else:
        common = g.str("Video", "FPSCommon", "30")
        named = {"10": 10, "20": 20, "24 NTSC": Fraction(24000, 1001), "25 PAL": 25, "25": 25,
                 "29.97": Fraction(30000, 1001), "30": 30, "48": 48, "50 PAL": 50, "50": 50,
                 "59.94": Fraction(60000, 1001), "60": 60, "24": 24}
        if common not in named:
            raise ObsFileError(path, f"[Video] FPSCommon={common!r} is not an OBS frame rate")
        fps = Fraction(named[common])
    video = VideoSettings(g.opt_int("Video", "BaseCX"), g.opt_int("Video", "BaseCY"),
                          g.opt_int("Video", "OutputCX"), g.opt_int("Video", "OutputCY"), fps)
    hotkeys: dict[str, tuple[str, ...]] = {}
    for key, value in ini.get("Hotkeys", {}).items():
        try:
            hotkeys[key] = decode_bindings(json.loads(value)) if value.strip() else ()
        except json.JSONDecodeError as exc:
            raise ObsFileError(path, f"[Hotkeys] {key}: not valid JSON ({exc.msg})") from None
    bitrates = {t: g.int("AdvOut", f"Track{t}Bitrate", 160) for t in range(1, 7)}
    return Profile(name=g.str("General", "Name", Path(path).parent.name), path=path, output_mode=mode,
                   recording=rec, replay_buffer=rb, video=video, hotkeys=hotkeys,
                   track_bitrates_kbps=bitrates, audio_sample_rate_hz=g.int("Audio", "SampleRate", 48000),
                   ini=ini)


class _IniGet:
    """Typed ini lookups with OBS defaults; wrong types name file, section and key."""

    def __init__(self, ini: dict[str, dict[str, str]], path: str) -> None:
        self.ini, self.path = ini, path

    def opt(self, sec: str, key: str) -> str | None:
        v = self.ini.get(sec, {}).get(key)
        return v if v not in (None, "") else None

    def str(self, sec: str, key: str, default: str) -> str:
        v = self.opt(sec, key)
        return default if v is None else v

    def int(self, sec: str, key: str, default: int) -> int:
        v = self.opt(sec, key)
        if v is None:
            return default
        try:
            return int(v.strip())
        except ValueError:
            raise ObsFileError(self.path, f"[{sec}] {key}={v!r}: expected an integer") from None

    def opt_int(self, sec: str, key: str) -> int | None:
        return None if self.opt(sec, key) is None else self.int(sec, key, 0)

    def bool(self, sec: str, key: str, default: bool) -> bool:
        v = self.opt(sec, key)
        if v is None:
            return default
        low = v.strip().lower()
        if low in ("true", "1", "yes", "on"):
            return True
        if low in ("false", "0", "no", "off"):
            return False
        raise ObsFileError(self.path, f"[{sec}] {key}={v!r}: expected true/false")
