"""Suite-wide collection order for the parallel phase of `make test`.

Why: pytest-xdist's load scheduler hands tests out in collection order. When a 40-60 s self-test
is collected late, one worker runs it alone at the end while the other sits idle, so the phase's
wall time is the tail, not the work. Starting the longest modules first (longest-processing-time
first, the classic list-scheduling rule) lets the many short tests fill in around them.

Only the order changes, and only under xdist (the serial real-app phase keeps its own order, since
its module fixtures share one OBS). Tests go out one at a time, except the modules that share a
module fixture, which go to one worker whole (pytest_xdist_make_scheduler below), so the fixture is
built once (short-form T08/T11's self-test was built on both workers: ~27 CPU-s twice).
The key is the `slow` marker ("takes more than ~20 s"): modules with more slow tests go first; the rest keep pytest's order. The sort is deterministic, as xdist requires
every worker to collect the same list.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: real-app modules whose app keeps about a core busy for 10 s or more (measured CPU/wall >= 0.4 on
#: a test: OBS encoding 1080p under llvmpipe, ffmpeg publishers in real time) or whose assertion
#: is a sub-frame timing an app's render stall would move (T14's claps). Marked `app_heavy`, so
#: the serial real-app phase can run as two serial processes: these one at a time in one, the
#: mostly-waiting real-app modules (replay buffer, scenario timelines, vMix emulator, observers)
#: in the other. (Not xdist_group: pytest-xdist 3.8 groups by rewriting item._nodeid, which
#: pytest 9.2's Node.nodeid no longer reads; pytest_xdist_make_scheduler below groups by module instead.)
APP_HEAVY_MODULES = frozenset({
    "tests/streaming/test_t05_real_obs.py", "tests/streaming/test_real_obs_t02.py",
    "tests/streaming/test_real_obs_t14.py", "tests/streaming/test_real_obs.py",
    "tests/rtmp/test_health_real_obs.py", "tests/rtmp/test_health_publishers.py",
    "tests/rtmp/test_abuse_rss.py",
})

#: modules whose tests mostly wait (daemons, brokers, ffmpeg publishers, Ray's start-up, feed outages,
#: X servers): measured CPU/wall < 0.4 over >= 1 s of wall in a 2-worker run (TALLY_TEST_CPU_LOG,
#: 2026-12-03: 26 modules, 224 s of wall for 49 CPU-s). Marked `waits`, so `make test` runs them in a
#: third, serial process beside the two xdist workers instead of letting them hold a worker (a core)
#: while they sleep. A module is listed whole: its fixtures stay built once; so is every module of
#: tests/sweep (test_ship, test_stats, test_sweep_report_html are quick), so its session fixtures
#: (instances, scored workdirs) are built in one process only.
WAITS_MODULES = frozenset({
    "tests/sweep/test_ray_cluster.py", "tests/rtmp/test_ffmpeg_publishers.py", "tests/hostile/test_daemon.py",
    "tests/run/test_serve.py", "tests/rtmp/test_sessions.py", "tests/run/test_feed_outage.py",
    "tests/sweep/test_sweep_resume.py", "tests/probes/test_avsync.py", "tests/probes/test_pulse_capture.py",
    "tests/rtmp/test_cli.py", "tests/sweep/test_mqtt_nodes.py", "tests/run/test_ingest_e2e.py",
    "tests/rtmp/test_tap.py", "tests/vmix/test_observer.py", "tests/scenarios/test_x11.py",
    "tests/obs/test_ws_proxy.py", "tests/run/test_audit.py", "tests/scenarios/test_cli.py",
    "tests/run/test_vmix_wiring.py", "tests/x11/test_x_input.py", "tests/scenarios/test_engine.py",
    "tests/obs/test_obs_screenshot_unit.py", "tests/obs/test_watchdog.py", "tests/run/test_lifecycle.py",
    "tests/probes/test_sources.py", "tests/sweep/test_bundle_replay.py",
    "tests/sweep/test_ship.py", "tests/sweep/test_stats.py", "tests/sweep/test_sweep_report_html.py",
})

#: CPU-bound modules that `make test` runs in its second phase, on two xdist workers at nice 19 beside
#: the two real-app lanes, instead of on the phase-1 workers. Why: the real-app phase leaves about
#: half the machine idle (measured 2026-12-03, idle 2-core machine, 1-s samples of /proc/stat: 1.02
#: of 2 cores over 269 s: OBS and the publishers wait for real time), while phase 1 is bound by its
#: two cores. Every sound test module (they share the sound instances; ~175 CPU-s by
#: TALLY_TEST_CPU_LOG) and the streaming self-tests (~122 CPU-s; the real-OBS tests of phase 2 reuse
#: their instances) fill that half; what the idle half cannot hold runs on both cores after the
#: real-app lanes end, as fast as in phase 1. At nice 19 a real-app process that wakes gets its core
#: at once (CFS weight 1024 against 15), and every real-app test still reads its app's health and
#: retries with the reason (tests/app_health.py). Marked `filler`; a module here is in no other list.
FILLER_MODULES = frozenset(
    {str(p.relative_to(Path(__file__).parent.parent)) for p in (Path(__file__).parent / "sound").glob("test_*.py")}
    | {"tests/streaming/test_selftest.py"})

#: per-session folders (environment variable -> what it holds), made by the process that starts the
#: session; xdist workers and `tally` subprocesses inherit the variables
SESSION_FOLDERS = {
    "TALLY_INSTANCE_CACHE": "instances",   # verifiers.synth.INSTANCE_CACHE_ENV
    "TALLY_OCR_CACHE_DIR": "ocr",          # verifiers.measure.ocr.OCR_CACHE_DIR_ENV
}


def pytest_configure(config: pytest.Config) -> None:
    """One instance folder (verifiers.synth.INSTANCE_CACHE_ENV: each task's synthetic instance is
    written once and copied for every test, worker and `tally` subprocess) and one OCR folder
    (verifiers.measure.ocr.OCR_CACHE_DIR_ENV: a frame read by one worker or subprocess is not read
    again by another) per test session.

    Made by the process that starts the session (xdist workers and subprocesses inherit the
    variables); a value set from outside is used as it is and left alone."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    import tempfile

    made = {}
    for env, what in SESSION_FOLDERS.items():
        if not os.environ.get(env):
            made[env] = os.environ[env] = tempfile.mkdtemp(prefix=f"tally-session-{what}-")
    config._tally_session_folders = made  # type: ignore[attr-defined]


def pytest_unconfigure(config: pytest.Config) -> None:
    import shutil

    for env, folder in getattr(config, "_tally_session_folders", {}).items():
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(env, None)


@pytest.hookimpl(tryfirst=True)  # before the mark plugin's -m selection reads the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        if module in APP_HEAVY_MODULES:
            item.add_marker(pytest.mark.app_heavy)
        if module in WAITS_MODULES:
            item.add_marker(pytest.mark.waits)
        if module in FILLER_MODULES:
            item.add_marker(pytest.mark.filler)
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    slow = {m: sum(1 for it in its if it.get_closest_marker("slow")) for m, its in modules.items()}
    order = sorted(modules, key=lambda m: -slow[m])  # stable: ties keep pytest's module order
    items[:] = [it for m in order for it in modules[m]]


def _builds_module_fixture(path: Path, scopes: frozenset[str]) -> bool:
    """Does this file define a fixture of one of these scopes (shared beyond one test)?"""
    import ast

    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "fixture":
            for kw in node.keywords:
                if kw.arg == "scope" and isinstance(kw.value, ast.Constant) and kw.value.value in scopes:
                    return True
    return False


#: in a conftest, a session fixture serves several modules (built once per worker whatever the split)
SHARED_SCOPES = frozenset({"module", "package", "class"})


def keep_whole(module: str, root: Path) -> bool:
    """Must this test module run on one worker? Yes when it, or a conftest.py above it inside the
    test tree, builds a fixture shared by several tests: on two workers it is built twice."""
    path = root / module
    if _builds_module_fixture(path, SHARED_SCOPES | {"session"}):  # a module's own session fixture is its
        return True
    folder = path.parent
    while folder != root.parent and folder.is_relative_to(root):
        conftest = folder / "conftest.py"
        if conftest != Path(__file__) and conftest.exists() and _builds_module_fixture(conftest, SHARED_SCOPES):
            return True
        folder = folder.parent
    return False


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """`--dist loadgroup` as meant: tests go out one at a time (collection order, longest modules
    first), except that a module whose tests share a module fixture goes out whole.

    Why: pytest-xdist 3.8 groups by rewriting item._nodeid, which pytest 9.2 no longer reads, so its
    own loadgroup hands out single tests and a module fixture (short-form T08/T11's self-test, the
    grading bad-input renders, the CLI instance) is built on both workers. `--dist loadscope`
    would keep every module whole, but then one module of 20 self-tests (grading, short-form) is
    a single unit of work on one worker. Here only the modules that share a fixture are units
    (found by reading their source, so a new module fixture needs no list kept up to date)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    root = Path(config.rootpath)
    whole: dict[str, bool] = {}

    class ModuleFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            if module not in whole:
                whole[module] = keep_whole(module, root)
            return module if whole[module] else nodeid

    config.option.loadscopereorder = False  # keep the longest-first collection order above
    return ModuleFixtureScheduling(config, log)


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
