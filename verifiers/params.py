"""Typed check params: each catalog check's `params` mapping validated into a frozen dataclass.

Why dataclasses and not pydantic: the params are small, flat, and read-only; a 60-line converter
gives exact messages in catalog terms (file, task, check, field) with no new dependency, and keeps
`tally tasks` fast. The dataclasses live per family in `verifiers/paramtypes/<family>.py` and are
registered with `@params_type(task_id, check_name)`; the catalog loader (verifiers/catalog.py)
converts every check that has one, so a typo or a wrong type fails at catalog load, not mid-score.

Field names carry their unit (`tolerance_px`, `duration_ms`, `bitrate_kbps`); `check_unit_names`
enforces it for numeric fields, with a short list of unitless names (counts, ratios, fractions).
"""

from __future__ import annotations

import dataclasses
import importlib
import re
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

T = TypeVar("T")

#: (task id, check name) -> its params dataclass
_TYPES: dict[tuple[str, str], type] = {}

#: family -> module defining its param dataclasses (imported by the catalog loader)
FAMILY_MODULES = {f: f"verifiers.paramtypes.{f}" for f in ("streaming", "sound", "grading", "shortform")}

#: numeric field names need one of these unit suffixes ...
UNIT_SUFFIXES = ("px", "ms", "s", "hz", "khz", "kbps", "bps", "mbps", "db", "lufs", "lu", "pct", "frames",
                 "fps", "bytes", "kb", "mb", "gb", "deg", "dbfs", "dbtp", "cents", "semitones", "bpm", "pt", "stops",
                 "ire", "ratio", "count", "x", "de2000", "lab", "levels")
#: ... unless they are one of these unitless names (a count or a plain number the seed states)
UNITLESS = {"ratio", "claps", "frames", "fps", "channels", "audio_streams", "scene_count", "count", "k",
            "min_iou", "max_spill", "max_green_pct", "font_size", "min_ssim", "source_count",
            "max_music_correlation"}  # font_size: Streamlabs text_size, unitless

_UNIT_RE = re.compile("_(" + "|".join(UNIT_SUFFIXES) + ")$")


class ParamsError(ValueError):
    """A check's params do not fit its dataclass; the message names the field."""


@dataclasses.dataclass(frozen=True)
class NoParams:
    """The params of a check that takes none."""


def params_type(task_id: str, check: str):
    """Class decorator: `cls` (a frozen dataclass) types the params of `check` of `task_id`."""
    def deco(cls: type[T]) -> type[T]:
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"{cls.__name__} must be a dataclass")
        bad = check_unit_names(cls)
        if bad:
            raise TypeError(f"{cls.__name__}: numeric fields without a unit in their name: {bad}")
        _TYPES[(task_id, check)] = cls
        return cls
    return deco


def type_for(task_id: str, check: str, family: str) -> type | None:
    mod = FAMILY_MODULES.get(family)
    if mod:
        importlib.import_module(mod)
    return _TYPES.get((task_id, check))


def check_unit_names(cls: type) -> list[str]:
    """Numeric fields whose name says no unit (and are not a known unitless quantity)."""
    hints = typing.get_type_hints(cls)
    bad = []
    for f in dataclasses.fields(cls):
        if _is_numeric(hints[f.name]) and not _UNIT_RE.search(f.name) and f.name not in UNITLESS:
            bad.append(f.name)
    return bad


def _is_numeric(tp: Any) -> bool:
    if tp in (int, float):
        return True
    args = typing.get_args(tp)
    return bool(args) and all(_is_numeric(a) or a is type(None) or a is Ellipsis for a in args) \
        and any(_is_numeric(a) for a in args)


def build_params(cls: type[T], raw: Mapping[str, Any]) -> T:
    """`raw` (a catalog params mapping) as an instance of `cls`; ParamsError naming the field."""
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(raw) - names)
    if unknown:
        raise ParamsError(f"unknown param(s) {', '.join(unknown)} (fields of {cls.__name__}: {', '.join(sorted(names))})")
    kw = {}
    for f in dataclasses.fields(cls):
        if f.name not in raw:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ParamsError(f"missing param {f.name} ({_tname(hints[f.name])})")
            continue
        kw[f.name] = _convert(raw[f.name], hints[f.name], f.name)
    return cls(**kw)


def _tname(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _convert(v: Any, tp: Any, name: str) -> Any:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any:
        return v
    if origin in (typing.Union, types.UnionType):
        for a in args:
            try:
                return _convert(v, a, name)
            except ParamsError:
                continue
        raise ParamsError(f"param {name}: {v!r} is not {_tname(tp)}")
    if tp is type(None):
        if v is None:
            return None
        raise ParamsError(f"param {name}: {v!r} is not None")
    if tp is bool:
        if isinstance(v, bool):
            return v
    elif tp is int:
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    elif tp is float:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    elif tp is str:
        if isinstance(v, str):
            return v
    elif origin is tuple:
        if isinstance(v, (list, tuple)):
            if len(args) == 2 and args[1] is Ellipsis:
                return tuple(_convert(x, args[0], f"{name}[{i}]") for i, x in enumerate(v))
            if len(v) == len(args):
                return tuple(_convert(x, a, f"{name}[{i}]") for i, (x, a) in enumerate(zip(v, args, strict=True)))
    elif origin is dict or tp is dict:
        if isinstance(v, Mapping):
            return dict(v)
    else:
        raise ParamsError(f"param {name}: unsupported field type {_tname(tp)}")
    raise ParamsError(f"param {name}: {v!r} is not {_tname(tp)}")
