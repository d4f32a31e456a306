"""Curves as catalog data: parsing rejects malformed declarations; each kind scores as documented."""

from __future__ import annotations

import pytest

from verifiers.curves import CurveError, parse_curve


def ramp(err: float, tol: float, zero_at: float) -> float:
    """The ramp the streaming scorers used inline before curves were data (verbatim)."""
    err = abs(err)
    if err <= tol:
        return 1.0
    if err >= zero_at:
        return 0.0
    return 1.0 - (err - tol) / (zero_at - tol)


def test_threshold_is_a_pass_line() -> None:
    c = parse_curve({"kind": "threshold"})
    assert c.score(2.0, 2.0) == 1.0
    assert c.score(-2.0, 2.0) == 1.0
    assert c.score(2.01, 2.0) == 0.0
    assert c.score(float("nan"), 2.0) == 0.0
    assert c.score(None, 2.0) == 0.0


@pytest.mark.parametrize("err", [0.0, 2.0, 3.0, 4.0, 7.5, 11.9, 12.0, 40.0, -5.0])
def test_linear_equals_the_legacy_ramp(err: float) -> None:
    """A `linear` curve with the legacy zero point gives exactly the old ramp(err, tol, zero_at)."""
    c = parse_curve({"kind": "linear", "zero_at_px": 12, "why": "legacy; see issue 21"})
    assert c.score(err, 2.0) == ramp(err, 2.0, 12.0)
    assert c.unit == "px" and c.describe() == {"kind": "linear", "zero_at_px": 12.0, "why": "legacy; see issue 21"}


def test_counting_kinds() -> None:
    assert parse_curve({"kind": "per_item"}).count(3, 4) == 0.75
    assert parse_curve({"kind": "per_item"}).count(0, 0) == 0.0
    assert parse_curve({"kind": "per_item"}).count([1.0, 0.5, 0.0]) == 0.5
    k = parse_curve({"kind": "k_of_n", "k": 4})
    assert k.count(5, 6) == 1.0 and k.count(2, 6) == 0.5
    s = parse_curve({"kind": "share_of_frames", "full_at_pct": 95})
    assert s.share(96.0) == 1.0 and s.share(50.0) == 0.5
    p = parse_curve({"kind": "penalty_per_extra", "per_extra": 0.25})
    assert p.penalty(1.0, 2) == 0.5 and p.penalty(1.0, 9) == 0.0


def test_parts_are_curves() -> None:
    c = parse_curve({"kind": "per_item", "parts": {"bitrate": {"kind": "threshold"}}})
    assert c.part("bitrate").kind == "threshold"
    with pytest.raises(CurveError, match="no part 'fps'"):
        c.part("fps")
    assert c.describe()["parts"] == {"bitrate": {"kind": "threshold"}}


@pytest.mark.parametrize("raw, msg", [
    ({"kind": "linear", "zero_at_px": 12}, "needs a why"),
    ({"kind": "linear", "why": "x"}, "needs zero_at"),
    ({"kind": "ramp"}, "unknown curve kind"),
    ({"kind": "threshold", "zero_at_px": 3}, "takes no 'zero_at_px'"),
    ({"kind": "k_of_n", "k": 1.5}, "integer k"),
    ({"kind": "penalty_per_extra"}, "needs per_extra"),
    ({"kind": "linear", "zero_at_px": "far", "why": "x"}, "finite number"),
    ("threshold", "a mapping with a kind"),
])
def test_malformed_curves_are_rejected(raw: object, msg: str) -> None:
    with pytest.raises(CurveError, match=msg):
        parse_curve(raw, "T99 check c")


def test_a_curve_scores_only_what_it_is_for() -> None:
    with pytest.raises(CurveError):
        parse_curve({"kind": "per_item"}).score(1.0, 0.0)
    with pytest.raises(CurveError):
        parse_curve({"kind": "threshold"}).count(1, 2)


def test_numpy_counts_are_numbers_not_iterables() -> None:
    import numpy as np

    c = parse_curve({"kind": "per_item"})
    assert c.count(np.int64(3), 4) == 0.75
    assert c.count(np.bool_(True), 2) == 0.5
