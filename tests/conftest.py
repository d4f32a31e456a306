"""Suite-wide collection order for the parallel phase of `make test`.

Why: pytest-xdist's load scheduler hands tests out in collection order. When a 40-60 s self-test
is collected late, one worker runs it alone at the end while the other sits idle, so the phase's
wall time is the tail, not the work. Starting the longest modules first (longest-processing-time
first, the classic list-scheduling rule) lets the many short tests fill in around them.

Only the order changes, and only under xdist (the serial real-app phase keeps its own order, since
its module fixtures share one OBS). xdist still hands out single tests, so a module's tests can land
on both workers and a module-scoped fixture is then built on each (short-form T08/T11's self-test:
~27 CPU-s twice); `--dist loadscope --no-loadscope-reorder` would keep modules whole (not measured).
The key is the `slow` marker ("takes more than ~20 s"): modules with more slow tests go first; the rest keep pytest's order. The sort is deterministic, as xdist requires
every worker to collect the same list.
"""

from __future__ import annotations

import os

import pytest

#: real-app modules whose app keeps about a core busy for 10 s or more (measured CPU/wall >= 0.4 on
#: a test: OBS encoding 1080p under llvmpipe, ffmpeg publishers in real time) or whose assertion
#: is a sub-frame timing an app's render stall would move (T14's claps). Marked `app_heavy`, so
#: the serial real-app phase can run as two serial processes: these one at a time in one, the
#: mostly-waiting real-app modules (replay buffer, scenario timelines, vMix emulator, observers)
#: in the other. (Not xdist_group: pytest-xdist 3.8 groups by rewriting item._nodeid, which
#: pytest 9.2's Node.nodeid no longer reads, so --dist loadgroup silently acts as --dist load.)
APP_HEAVY_MODULES = frozenset({
    "tests/streaming/test_t05_real_obs.py", "tests/streaming/test_real_obs_t02.py",
    "tests/streaming/test_real_obs_t14.py", "tests/streaming/test_real_obs.py",
    "tests/rtmp/test_health_real_obs.py", "tests/rtmp/test_health_publishers.py",
    "tests/rtmp/test_abuse_rss.py",
})

def pytest_configure(config: pytest.Config) -> None:
    """One instance folder per test session (verifiers.synth.INSTANCE_CACHE_ENV): each task's
    synthetic instance is written once and copied for every test, worker and `tally` subprocess.

    Made by the process that starts the session (xdist workers and subprocesses inherit the
    variable); a value set from outside is used as it is and left alone."""
    from verifiers.synth import INSTANCE_CACHE_ENV

    if os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get(INSTANCE_CACHE_ENV):
        return
    import tempfile

    folder = tempfile.mkdtemp(prefix="tally-session-instances-")
    os.environ[INSTANCE_CACHE_ENV] = folder
    config._tally_instance_folder = folder  # type: ignore[attr-defined]


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = getattr(config, "_tally_instance_folder", None)
    if folder:
        import shutil

        from verifiers.synth import INSTANCE_CACHE_ENV

        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(INSTANCE_CACHE_ENV, None)


@pytest.hookimpl(tryfirst=True)  # before the mark plugin's -m selection reads the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.split("::", 1)[0] in APP_HEAVY_MODULES:
            item.add_marker(pytest.mark.app_heavy)
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    slow = {m: sum(1 for it in its if it.get_closest_marker("slow")) for m, its in modules.items()}
    order = sorted(modules, key=lambda m: -slow[m])  # stable: ties keep pytest's module order
    items[:] = [it for m in order for it in modules[m]]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """With TALLY_TEST_CPU_LOG=<path>, append one JSON line per test: wall and CPU seconds
    (this process plus the children it waited for) of setup + call + teardown.

    Why: wall time on a shared 2-core machine says as much about the neighbours as about the
    test; CPU seconds are what the 15-minute budget of the parallel phase is made of.
    """
    path = os.environ.get("TALLY_TEST_CPU_LOG")
    if not path:
        yield
        return
    import json
    import resource
    import time

    def cpu_s() -> float:
        own = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    wall0, cpu0 = time.monotonic(), cpu_s()
    yield
    row = {"nodeid": item.nodeid, "wall_s": round(time.monotonic() - wall0, 3),
           "cpu_s": round(cpu_s() - cpu0, 3), "worker": os.environ.get("PYTEST_XDIST_WORKER", "")}
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(row) + "\n")
