"""Scoring curves as catalog data: how a measurement becomes a check's 0..1 score.

Every converted check names its curve in the catalog (`curve: {kind: threshold}`), so a benchmark
author can read and audit how partial credit is given without reading the scorer. The kinds:

- `threshold`: 1 when |err| <= tol, else 0 (a seed threshold is a pass line).
- `linear`: 1 within tol, falling linearly to 0 at `zero_at_<unit>`; needs a `why` (a soft curve
  is a deviation from the pass line and must say who chose the zero point).
- `per_item`: the fraction of items (events, shots, parts of a spec) that are right.
- `k_of_n`: 1 when at least `k` items are right, else the fraction of k reached.
- `share_of_frames`: 1 when at least `full_at_pct` of the frames pass, else the passing share.
- `penalty_per_extra`: a base score less `per_extra` for every extra (unwanted) item, floored at 0.

A curve may carry named sub-curves (`parts:`) for checks that combine several measurements, e.g.
`{kind: per_item, parts: {bitrate: {kind: linear, zero_at_pct: 30, why: ...}}}`.
Unconverted scorers get the placeholder kind `inline` (their curve is still code, see issue 17).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

KINDS = ("threshold", "linear", "per_item", "k_of_n", "share_of_frames", "penalty_per_extra", "inline")

#: fields each kind takes besides `kind`, `why`, `parts` (a `zero_at_<unit>` key carries its unit)
_KIND_FIELDS: dict[str, set[str]] = {
    "threshold": set(), "linear": {"zero_at"}, "per_item": set(), "k_of_n": {"k"},
    "share_of_frames": {"full_at_pct"}, "penalty_per_extra": {"per_extra"}, "inline": set(),
}
_ZERO_AT_RE = re.compile(r"^zero_at(?:_([a-z]+))?$")

#: placeholder for checks whose scorer still computes its score inline (not converted yet)
INLINE_WHY = "not declared yet: this scorer computes its score inline (conversion pending, issue 17)"


class CurveError(ValueError):
    """A curve declaration in the catalog is malformed; the message names what is wrong."""


@dataclass(frozen=True)
class Curve:
    kind: str
    why: str = ""
    zero_at: float | None = None  # linear: where the score reaches 0 (in `unit`)
    unit: str = ""  # linear: the measurement's unit, from the `zero_at_<unit>` key
    k: int | None = None  # k_of_n
    full_at_pct: float = 100.0  # share_of_frames
    per_extra: float | None = None  # penalty_per_extra
    parts: Mapping[str, Curve] = field(default_factory=dict)

    # ---- applying ----------------------------------------------------------------------------

    def score(self, err: float | None, tol: float = 0.0) -> float:
        """threshold / linear: the score of a (signed or absolute) error against its tolerance."""
        if self.kind not in ("threshold", "linear"):
            raise CurveError(f"curve {self.kind} scores counts, not errors: use count()/share()/penalty()")
        if err is None or not math.isfinite(err):
            return 0.0
        err = abs(float(err))
        if err <= tol:
            return 1.0
        if self.kind == "threshold":
            return 0.0
        assert self.zero_at is not None
        if err >= self.zero_at:
            return 0.0
        return 1.0 - (err - tol) / (self.zero_at - tol)

    def passes(self, ok: bool) -> float:
        """threshold applied to a yes/no measurement (the test is the scorer's, the line the seed's)."""
        if self.kind != "threshold":
            raise CurveError(f"passes() needs a threshold curve, not {self.kind}")
        return 1.0 if ok else 0.0

    def count(self, ok: float | Iterable[Any], total: float | None = None) -> float:
        """per_item / k_of_n: score of `ok` right items out of `total` (or of an iterable of 0..1 scores;
        numpy counts and bools are numbers too)."""
        if isinstance(ok, Iterable):
            vals = [float(v) for v in ok]
            ok_f, total = sum(vals), len(vals) if total is None else total
        else:
            ok_f = float(ok)
        if self.kind == "per_item":
            return ok_f / total if total else 0.0
        if self.kind == "k_of_n":
            assert self.k is not None
            return 1.0 if ok_f >= self.k else ok_f / self.k
        raise CurveError(f"count() needs a per_item or k_of_n curve, not {self.kind}")

    def share(self, passing_pct: float) -> float:
        """share_of_frames: full marks at full_at_pct, otherwise the passing share."""
        if self.kind != "share_of_frames":
            raise CurveError(f"share() needs a share_of_frames curve, not {self.kind}")
        return 1.0 if passing_pct >= self.full_at_pct - 1e-9 else passing_pct / 100.0

    def penalty(self, base: float, extras: int) -> float:
        if self.kind != "penalty_per_extra":
            raise CurveError(f"penalty() needs a penalty_per_extra curve, not {self.kind}")
        assert self.per_extra is not None
        return max(0.0, base - self.per_extra * extras)

    def part(self, name: str) -> Curve:
        try:
            return self.parts[name]
        except KeyError:
            raise CurveError(f"curve has no part {name!r} (declared: {sorted(self.parts) or 'none'})") from None

    # ---- showing -----------------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """The catalog form, as `tally tasks --json` and reports show it."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.zero_at is not None:
            out[f"zero_at_{self.unit}" if self.unit else "zero_at"] = self.zero_at
        if self.k is not None:
            out["k"] = self.k
        if self.kind == "share_of_frames":
            out["full_at_pct"] = self.full_at_pct
        if self.per_extra is not None:
            out["per_extra"] = self.per_extra
        if self.why:
            out["why"] = self.why
        if self.parts:
            out["parts"] = {k: v.describe() for k, v in self.parts.items()}
        return out


INLINE = Curve("inline", why=INLINE_WHY)


def _num(raw: Mapping[str, Any], key: str, where: str) -> float:
    v = raw[key]
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
        raise CurveError(f"{where}: curve {key} must be a finite number, got {v!r}")
    return float(v)


def parse_curve(raw: Any, where: str = "curve") -> Curve:
    """A catalog `curve:` mapping as a Curve; CurveError naming `where` when malformed."""
    if not isinstance(raw, Mapping) or "kind" not in raw:
        raise CurveError(f"{where}: a curve is a mapping with a kind (one of {', '.join(KINDS[:-1])})")
    kind = raw["kind"]
    if kind not in _KIND_FIELDS:
        raise CurveError(f"{where}: unknown curve kind {kind!r} (one of {', '.join(KINDS[:-1])})")
    why = raw.get("why", "")
    if not isinstance(why, str):
        raise CurveError(f"{where}: curve why must be a string")
    kw: dict[str, Any] = {}
    for key in raw:
        if key in ("kind", "why", "parts"):
            continue
        m = _ZERO_AT_RE.match(key)
        if m and "zero_at" in _KIND_FIELDS[kind]:
            kw["zero_at"], kw["unit"] = _num(raw, key, where), m.group(1) or ""
        elif key in _KIND_FIELDS[kind] and key != "zero_at":
            kw[key] = _num(raw, key, where)
        else:
            allowed = sorted({"why", "parts"} | {("zero_at_<unit>" if f == "zero_at" else f) for f in _KIND_FIELDS[kind]})
            raise CurveError(f"{where}: curve {kind} takes no {key!r} (allowed: {', '.join(allowed)})")
    if kind == "linear":
        if "zero_at" not in kw:
            raise CurveError(f"{where}: a linear curve needs zero_at_<unit> (where the score reaches 0)")
        if not why:
            raise CurveError(f"{where}: a linear curve needs a why (it softens a seed threshold)")
    if kind == "k_of_n":
        if "k" not in kw or kw["k"] < 1 or kw["k"] != int(kw["k"]):
            raise CurveError(f"{where}: k_of_n needs an integer k >= 1")
        kw["k"] = int(kw["k"])
    if kind == "penalty_per_extra" and "per_extra" not in kw:
        raise CurveError(f"{where}: penalty_per_extra needs per_extra")
    parts_raw = raw.get("parts") or {}
    if not isinstance(parts_raw, Mapping):
        raise CurveError(f"{where}: curve parts must be a mapping of name -> curve")
    parts = {str(k): parse_curve(v, f"{where} part {k!r}") for k, v in parts_raw.items()}
    return Curve(kind, why=why, parts=parts, **kw)
