"""tests/conftest.py's scheduler for `--dist loadgroup`: a module whose tests share a module fixture
goes to one worker whole; every other test goes out alone, in collection order.

Why a test: pytest-xdist 3.8 under pytest 9.2 silently handed out single tests for loadgroup, so
short-form T08/T11's module self-test (~27 CPU-s) was built on both workers; nothing failed, the
suite only got slower. These tests fail if the hook stops being used or stops telling the two
kinds of module apart."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tests.conftest import keep_whole, pytest_xdist_make_scheduler

ROOT = Path(__file__).resolve().parents[2]


class _Config:
    """The few config reads the scheduler makes (a real xdist session needs workers)."""

    def __init__(self, dist: str) -> None:
        self.rootpath = ROOT
        self.option = SimpleNamespace(dist=dist, tx=["2*popen"], numprocesses=2, loadscopereorder=True, maxworkerrestart=None)

    def getvalue(self, name: str):
        return getattr(self.option, name)

    getoption = getvalue


def test_modules_with_a_module_fixture_stay_whole():
    for module in ("tests/shortform/test_selftest_t08_t11.py", "tests/grading/test_bad_input.py",
                   "tests/foundation/test_scoring_cli.py", "tests/hostile/test_agent_files.py",  # its own session fixture
                   "tests/probes/test_bus.py"):  # a module fixture of tests/probes/conftest.py
        assert keep_whole(module, ROOT), module
    for module in ("tests/shortform/test_selftest.py", "tests/grading/test_selftest.py",
                   "tests/measure/test_memo.py", "tests/hostile/test_daemon.py"):  # hostile/conftest's session fixture: per worker anyway
        assert not keep_whole(module, ROOT), module


def test_loadgroup_scopes_split_per_test_except_shared_fixture_modules():
    sched = pytest_xdist_make_scheduler(_Config("loadgroup"), None)
    assert sched is not None
    t08 = "tests/shortform/test_selftest_t08_t11.py::test_selftest_passes[T08]"
    one = "tests/grading/test_selftest.py::test_selftest[R06.04.02.02-T01]"
    assert sched._split_scope(t08) == "tests/shortform/test_selftest_t08_t11.py"
    assert sched._split_scope(one) == one
    assert sched.config.option.loadscopereorder is False  # the conftest's longest-first order is kept


def test_other_dist_modes_are_xdists_own():
    assert pytest_xdist_make_scheduler(_Config("load"), None) is None


def test_marker_module_lists_name_existing_disjoint_modules():
    """APP_HEAVY_MODULES, WAITS_MODULES and FILLER_MODULES are paths: a renamed module would silently
    leave its lane; a module in two lists would run in neither phase-1 lane or twice."""
    from tests.conftest import APP_HEAVY_MODULES, FILLER_MODULES, WAITS_MODULES

    for module in APP_HEAVY_MODULES | WAITS_MODULES | FILLER_MODULES:
        assert (ROOT / module).is_file(), module
    assert not APP_HEAVY_MODULES & WAITS_MODULES
    assert not FILLER_MODULES & (APP_HEAVY_MODULES | WAITS_MODULES)
