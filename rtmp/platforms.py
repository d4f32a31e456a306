"""Platform profiles (rtmp/profiles/*.yaml): versioned data saying what YouTube, Twitch or a
broadcast chain would flag in a live stream, each rule with its public source.

Loaded once and validated strictly (an unknown measure, severity or source is a ProfileError
naming the file and rule), so a typo in a profile fails at startup instead of never firing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

PROFILE_DIR = Path(__file__).with_name("profiles")

SEVERITIES = ("info", "warning", "error")
#: What the health evaluator can measure (rtmp.health.measure_stream).
MEASURES = frozenset({
    "keyframe_interval_s", "video_codec", "video_profile", "video_width", "video_height", "video_fps",
    "video_bitrate_kbps", "video_bitrate_peak_ratio", "audio_codec", "audio_profile",
    "audio_sample_rate_hz", "audio_channels", "audio_bitrate_kbps", "audio_loudness_lufs",
    "metadata_mismatch",
})


class ProfileError(ValueError):
    """A profile file that cannot be used as it is."""


@dataclass(frozen=True)
class Band:
    max_height: int
    max_fps: float
    min: float | None
    max: float | None


@dataclass(frozen=True)
class Rule:
    issue: str
    severity: str
    measure: str
    source: str
    max: float | None = None
    min: float | None = None
    one_of: tuple[Any, ...] | None = None
    bands: tuple[Band, ...] | None = None
    bound: str | None = None  # with bands: which bound of the band this rule checks
    empty: bool = False
    tolerance: float = 0.0       # absolute, in the measure's unit
    tolerance_pct: float = 0.0   # relative to the limit
    quote: str | None = None


@dataclass(frozen=True)
class Profile:
    name: str
    version: int
    title: str
    status: dict[str, str]
    no_data_status: str
    sources: dict[str, dict[str, Any]]
    rules: tuple[Rule, ...]
    platform_status: dict[str, str] = field(default_factory=dict)


def _num(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ProfileError(f"{where}: expected a number, got {value!r}")
    return float(value)


def _rule(raw: Any, where: str, sources: dict[str, Any]) -> Rule:
    if not isinstance(raw, dict):
        raise ProfileError(f"{where}: a rule must be a mapping")
    for key in ("issue", "severity", "measure", "source"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise ProfileError(f"{where}: '{key}' missing")
    where = f"{where} ({raw['issue']})"
    if raw["severity"] not in SEVERITIES:
        raise ProfileError(f"{where}: severity must be one of {SEVERITIES}")
    if raw["measure"] not in MEASURES:
        raise ProfileError(f"{where}: unknown measure {raw['measure']!r}")
    if raw["source"] not in sources:
        raise ProfileError(f"{where}: source {raw['source']!r} is not in the profile's sources")
    bands = None
    if "bands" in raw:
        if raw.get("bound") not in ("min", "max"):
            raise ProfileError(f"{where}: bands need 'bound: min' or 'bound: max'")
        bands = tuple(Band(int(_num(b.get("max_height"), where)), _num(b.get("max_fps"), where),
                           _num(b["min"], where) if b.get("min") is not None else None,
                           _num(b["max"], where) if b.get("max") is not None else None)
                      for b in raw["bands"])
    one_of = tuple(raw["one_of"]) if "one_of" in raw else None
    checks = [bands is not None, one_of is not None, bool(raw.get("empty")),
              "max" in raw or "min" in raw]
    if sum(checks) != 1:
        raise ProfileError(f"{where}: give exactly one of max/min, one_of, bands, empty")
    return Rule(issue=raw["issue"], severity=raw["severity"], measure=raw["measure"], source=raw["source"],
                max=_num(raw["max"], where) if "max" in raw and bands is None else None,
                min=_num(raw["min"], where) if "min" in raw and bands is None else None,
                one_of=one_of, bands=bands, bound=raw.get("bound"), empty=bool(raw.get("empty")),
                tolerance=_num(raw.get("tolerance", 0.0), where),
                tolerance_pct=_num(raw.get("tolerance_pct", 0.0), where), quote=raw.get("quote"))


def parse_profile(data: Any, where: str) -> Profile:
    if not isinstance(data, dict):
        raise ProfileError(f"{where}: not a mapping")
    for key in ("profile", "title"):
        if not isinstance(data.get(key), str):
            raise ProfileError(f"{where}: '{key}' missing")
    if not isinstance(data.get("version"), int):
        raise ProfileError(f"{where}: 'version' must be an integer")
    sources = data.get("sources")
    if not isinstance(sources, dict) or not all(isinstance(v, dict) and v.get("url") for v in sources.values()):
        raise ProfileError(f"{where}: every source needs a url")
    status = data.get("status")
    if not isinstance(status, dict) or set(status) != set(SEVERITIES):
        raise ProfileError(f"{where}: 'status' must map {SEVERITIES} to status names")
    rules = data.get("rules")
    if not isinstance(rules, list) or not rules:
        raise ProfileError(f"{where}: no rules")
    return Profile(name=data["profile"], version=data["version"], title=data["title"], status=dict(status),
                   no_data_status=str(data.get("no_data_status", "noData")), sources=dict(sources),
                   rules=tuple(_rule(r, f"{where} rule {i}", sources) for i, r in enumerate(rules)),
                   platform_status=dict(data.get("platform_status") or {}))


def available() -> list[str]:
    return sorted(p.stem for p in PROFILE_DIR.glob("*.yaml"))


def load_profile(name_or_path: str) -> Profile:
    """A built-in profile by name (youtube, twitch, broadcast) or a YAML file by path."""
    path = Path(name_or_path)
    if path.suffix not in (".yaml", ".yml"):
        path = PROFILE_DIR / f"{name_or_path}.yaml"
        if not path.is_file():
            raise ProfileError(f"unknown profile {name_or_path!r} (built in: {', '.join(available())})")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ProfileError(f"{path}: {exc}") from None
    return parse_profile(data, str(path))


def load_profiles(names: list[str] | str) -> list[Profile]:
    """`youtube,twitch` or a list; duplicates dropped, order kept."""
    if isinstance(names, str):
        names = [n for n in (x.strip() for x in names.split(",")) if n]
    seen: dict[str, Profile] = {}
    for name in names:
        prof = load_profile(name)
        seen.setdefault(prof.name, prof)
    return list(seen.values())


def task_profiles(title: str, params: dict[str, Any]) -> list[str]:
    """Which profiles `tally run` checks a task's ingest against: the task's `params.ingest.
    profiles` if the catalog gives them, else YouTube and Twitch for a task that asks for
    "platform-compliant" settings (T05), else none."""
    ingest = params.get("ingest") if isinstance(params.get("ingest"), dict) else {}
    given = ingest.get("profiles")
    if isinstance(given, list) and all(isinstance(x, str) for x in given):
        return list(given)
    return ["youtube", "twitch"] if "platform" in title.lower() else []
