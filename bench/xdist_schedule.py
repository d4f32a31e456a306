"""Predicted wall time of `make test`'s parallel phase on 2 idle cores, from a per-test CPU log.

Why: on a machine shared with other work, a real `-n 2` run measures the neighbours; the CPU
seconds of each test (TALLY_TEST_CPU_LOG, tests/conftest.py) do not change with the schedule, so
the makespan of a schedule can be replayed from them. This replays pytest-xdist 3.8's
LoadScopeScheduling (2 units per worker at the start, one more when a worker has <= 2 tests left):

  pertest    every test its own unit (xdist 3.8's own loadgroup under pytest 9.2)
  conftest   tests/conftest.py's scheduler: modules that share a fixture whole, the rest per test
  loadscope  `--dist loadscope --no-loadscope-reorder`: every module whole

A module fixture (its cost: the first test's CPU minus the median of the module's others) is paid
again by each worker that runs a test of that module. Missing tests count --missing-s each.

    TALLY_TEST_CPU_LOG=/tmp/cpu.jsonl .venv/bin/pytest -q -p no:cacheprovider -m "not obs and not realtime"
    PYTEST_XDIST_WORKER=gw0 .venv/bin/pytest -q --collect-only -m "not obs and not realtime" | grep :: > /tmp/order.txt
    .venv/bin/python bench/xdist_schedule.py /tmp/cpu.jsonl /tmp/order.txt
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import keep_whole  # noqa: E402  (the rule the real scheduler uses)


def module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def fixture_key(nodeid: str) -> str:
    """One module fixture per module, one per parameter for a parametrised one (T08/T11)."""
    tail = nodeid.rsplit("[", 1)
    return module(nodeid) + ("[" + tail[1] if "test_selftest_t08_t11" in nodeid and len(tail) == 2 else "")


def simulate(units: list[list[str]], cpu_s: dict[str, float], fixture_s: dict[str, float],
             shared: set[str]) -> tuple[float, list[float], float]:
    """(makespan, each worker's busy seconds, module-fixture seconds paid) of 2 workers."""
    queue = collections.deque(units)
    workers = [{"t": 0.0, "todo": collections.deque(), "built": set()} for _ in range(2)]
    for _ in range(2):
        for w in workers:
            if queue:
                w["todo"].extend(queue.popleft())
    paid = 0.0
    while any(w["todo"] for w in workers):
        w = min((w for w in workers if w["todo"]), key=lambda w: w["t"])
        test = w["todo"].popleft()
        w["t"] += cpu_s[test]
        key = fixture_key(test)
        if module(test) in shared and key not in w["built"]:
            w["built"].add(key)
            w["t"] += fixture_s.get(key, 0.0)
            paid += fixture_s.get(key, 0.0)
        if len(w["todo"]) <= 2 and queue:
            w["todo"].extend(queue.popleft())
    return max(w["t"] for w in workers), [w["t"] for w in workers], paid


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cpu_log")
    ap.add_argument("order", help="nodeids in a worker's collection order (see above)")
    ap.add_argument("--missing-s", type=float, default=0.2)
    args = ap.parse_args()
    logged = {}
    for line in Path(args.cpu_log).read_text().splitlines():
        row = json.loads(line)
        logged[row["nodeid"]] = row["cpu_s"]
    order = [ln.strip() for ln in Path(args.order).read_text().splitlines() if "::" in ln]
    cpu_s = {n: logged.get(n, args.missing_s) for n in order}
    shared = {m for m in {module(n) for n in order} if keep_whole(m, ROOT)}
    by_key: dict[str, list[str]] = {}
    for n in order:
        if module(n) in shared:
            by_key.setdefault(fixture_key(n), []).append(n)
    fixture_s = {}
    for key, tests in by_key.items():
        if len(tests) > 1:
            fixture_s[key] = max(0.0, cpu_s[tests[0]] - statistics.median(cpu_s[t] for t in tests[1:]))
            cpu_s[tests[0]] -= fixture_s[key]
    modules: dict[str, list[str]] = {}
    for n in order:
        modules.setdefault(module(n), []).append(n)
    schedules = {
        "pertest": [[n] for n in order],
        "conftest": [],
        "loadscope": list(modules.values()),
    }
    seen: set[str] = set()
    for n in order:
        if module(n) not in shared:
            schedules["conftest"].append([n])
        elif module(n) not in seen:
            seen.add(module(n))
            schedules["conftest"].append(modules[module(n)])
    print(f"{len(order)} tests, {sum(n in logged for n in order)} in the log, "
          f"{sum(cpu_s.values()) + sum(fixture_s.values()):.0f} CPU-s with each fixture once")
    for name, units in schedules.items():
        span, busy, paid = simulate(units, cpu_s, fixture_s, shared)
        print(f"{name:10s} makespan {span:6.0f} s  workers {[round(b) for b in busy]}  module fixtures {paid:.0f} CPU-s")


if __name__ == "__main__":
    main()
