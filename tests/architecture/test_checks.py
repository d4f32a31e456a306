"""The check framework: checks run in isolation, providers fail exactly their users, names match
the catalog at class creation, and mutants name checks through the same symbols."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifiers.base import AgentOutputError, Checks, GTError, ScoreContext
from verifiers.catalog import CheckSpec, TaskSpec
from verifiers.checks import (
    CheckedTask,
    RegistrationError,
    Result,
    check,
    check_names,
    loads,
    provides,
    unit_checks,
)
from verifiers.curves import parse_curve

PER_ITEM = parse_curve({"kind": "per_item"})
THRESHOLD = parse_curve({"kind": "threshold"})


def _task() -> TaskSpec:
    names = ("a", "b", "c", "d", "e")
    return TaskSpec(id="R06.99.99.99-T01", family="streaming", title="t",
                    checks=tuple(CheckSpec(n, 20.0, curve=PER_ITEM if n != "e" else THRESHOLD) for n in names))


class Probe(CheckedTask):  # no task_id in the body: not validated against the real catalog
    calls: list[str]

    @provides
    def good_input(self) -> int:
        self.calls.append("good_input")
        return 3

    @provides
    def missing_input(self) -> int:
        self.calls.append("missing_input")
        raise AgentOutputError("artifact missing: out.wav")

    @check("a")
    def a(self, p, curve) -> Result:
        return Result(curve.count(self.good_input, 4), {"n": self.good_input})

    @check("b")
    def b(self, p, curve) -> Result:
        return Result(curve.count(self.missing_input, 4))

    @check("c")
    def c(self, p, curve) -> Result:
        raise ZeroDivisionError("bug in c")

    @check("d")
    def d(self, p, curve) -> Result:
        raise GTError("ground truth missing: gt.json")

    @check("e")
    def e(self, p, curve) -> tuple:
        return curve.score(self.missing_input + 0.0, 1.0), {}, ""


def _score(tmp_path: Path) -> tuple[Probe, dict]:
    task = _task()
    v = Probe(task)
    v.calls = []
    checks = Checks(task)
    v.score(ScoreContext(task, tmp_path, tmp_path), checks)
    return v, {r.name: r for r in checks.ordered()}


def test_each_check_is_isolated_and_providers_are_cached(tmp_path: Path) -> None:
    v, res = _score(tmp_path)
    assert res["a"].status == "partial" and res["a"].score == 0.75 and res["a"].evidence == {"n": 3}
    assert res["b"].status == "fail" and res["b"].message == "artifact missing: out.wav"
    assert res["e"].status == "fail" and res["e"].message == "artifact missing: out.wav"
    assert res["c"].status == "error" and "verifier crashed: ZeroDivisionError: bug in c" in res["c"].message
    assert res["d"].status == "error" and res["d"].message == "ground truth missing: gt.json"
    # each provider ran once although two checks used it, the failing one included
    assert v.calls.count("good_input") == 1 and v.calls.count("missing_input") == 1


def test_every_result_carries_its_curve(tmp_path: Path) -> None:
    _v, res = _score(tmp_path)
    assert res["a"].curve == {"kind": "per_item"}
    assert res["e"].curve == {"kind": "threshold"}
    assert res["a"].to_dict()["curve"] == {"kind": "per_item"}


def test_names_must_equal_the_catalog_with_both_lists_named() -> None:
    with pytest.raises(RegistrationError) as err:
        class Wrong(CheckedTask):
            task_id = "R06.12.01.01-T01"

            @check("scenes_sources")
            def s(self, p, curve) -> Result:
                return Result(1.0)

            @check("cam_geometri")
            def c(self, p, curve) -> Result:
                return Result(1.0)
    msg = str(err.value)
    assert "['cam_geometri', 'scenes_sources']" in msg
    assert "['cam_geometry', 'scenes_sources', 'transition', 'z_order_mute']" in msg
    assert "missing: ['cam_geometry', 'transition', 'z_order_mute']" in msg


def test_a_check_decorated_twice_is_refused() -> None:
    with pytest.raises(RegistrationError, match="decorated twice"):
        class Twice(CheckedTask):
            @check("a")
            def one(self, p, curve) -> Result:
                return Result(1.0)

            @check("a")
            def two(self, p, curve) -> Result:
                return Result(1.0)


def test_symbols_come_from_the_catalog() -> None:
    n = check_names("R06.12.01.01-T01")
    assert n.cam_geometry == "cam_geometry"
    assert list(n) == ["scenes_sources", "cam_geometry", "z_order_mute", "transition"]
    with pytest.raises(AttributeError, match=r"has no check 'cam_geometri'.*its checks: scenes_sources"):
        _ = n.cam_geometri


def test_unit_checks_declare_one_check_per_unit_judged_by_its_position() -> None:
    seen: list[int] = []

    def judge(self, k: int, p, curve) -> Result:
        seen.append(k)
        return Result(k / 10)

    one, two = unit_checks(judge, "shot_1", "shot_2")
    assert (one.__tally_check__, two.__tally_check__) == ("shot_1", "shot_2")
    assert two(object(), None, None).score == 0.2 and seen == [2]


def test_loads_is_a_cached_provider_of_ctx_and_other_providers(tmp_path: Path) -> None:
    """`x = loads(f, "y", after=("z",))` is `@provides def x(self): self.z; return f(self.ctx, self.y)`:
    run once per scoring, `after` read first (its error is the one reported), exceptions cached."""
    order: list[str] = []

    def load_gt(ctx: ScoreContext) -> int:
        order.append("gt")
        assert isinstance(ctx, ScoreContext)
        return 2

    def load_render(ctx: ScoreContext, gt: int) -> int:
        order.append("render")
        return 10 * gt

    def load_broken(ctx: ScoreContext) -> int:
        order.append("broken")
        raise AgentOutputError("render unreadable")

    class Loader(CheckedTask):
        gt = loads(load_gt)
        render = loads(load_render, "gt")
        late = loads(load_gt, after=("broken",))
        broken = loads(load_broken)

        @check("a")
        def a(self, p, curve) -> Result:
            return Result(curve.count(self.render + self.render, 40))

        @check("b")
        def b(self, p, curve) -> Result:
            return Result(curve.count(self.late, 4))

        @check("c")
        def c(self, p, curve) -> Result:
            return Result(curve.count(self.broken, 4))

        @check("d")
        def d(self, p, curve) -> Result:
            return Result(curve.count(self.gt, 4))

        @check("e")
        def e(self, p, curve) -> Result:
            return Result(curve.passes(True))

    task = _task()
    checks = Checks(task)
    Loader(task).score(ScoreContext(task, tmp_path, tmp_path), checks)
    res = {r.name: r for r in checks.ordered()}
    assert res["a"].score == 1.0 and res["d"].score == 0.5
    assert res["b"].status == "fail" and res["b"].message == "render unreadable"
    assert res["c"].status == "fail" and res["c"].message == "render unreadable"
    assert order == ["gt", "render", "broken"]  # each loader once; `late` stopped at its `after`
