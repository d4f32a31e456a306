"""Sweep benchmark: items/s on a process pool (1 and 2 workers) and on Ray, Ray's overhead per
item against the pool, memory per worker, and what 24 000 scorings would cost.

    .venv/bin/python bench/sweep.py [--items 200] [--rounds 2] [--no-ray] [--cache DIR]

Items: synthetic instances (`tally synth`) of 12 tasks from all four families; each item is one
solution (oracle, do-nothing or a mutant) laid over the instance's work dir, cycled with agent
and repeat labels to --items. Instances and work dirs are cached (default /tmp/tally-bench-sweep).
Runs are interleaved (pool-1, pool-2, Ray, then again) so machine load hits all alike; each run
scores into a fresh sweep dir. Ray is started once (local, num_cpus=2) and its start-up is
reported apart. Prints numbers only; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a loopback-only local cluster: no token file
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])

from rich.console import Console  # noqa: E402

from monitor.sweep.items import discover  # noqa: E402
from monitor.sweep.results import read_rows  # noqa: E402
from monitor.sweep.runner import run_sweep  # noqa: E402

TASKS = ("R06.12.01.01-T01", "R06.12.01.01-T03", "R06.12.01.01-T12",  # streaming
         "R06.07.01.03-T05", "R06.07.01.03-T01", "R06.07.01.03-T14",  # sound
         "R06.04.02.02-T01", "R06.04.02.02-T03", "R06.04.02.02-T05",  # grading
         "R06.04.01.04-T02", "R06.04.01.04-T17", "R06.04.01.04-T10")  # shortform
SCORINGS = 24_000  # 80 tasks x 100 agents x 3 repeats


def build_items(cache: Path, n: int) -> Path:
    """items.jsonl over the cached solutions (instances synthesised on first use)."""
    from verifiers.synth import overlay, synth_instance

    specs = []
    for tid in TASKS:
        inst = cache / "instances" / tid
        if not (inst / "gt").is_dir():
            t0 = time.perf_counter()
            synth_instance(tid, inst, seed=0)
            print(f"  synth {tid}: {time.perf_counter() - t0:.1f} s", flush=True)
        sols = [("oracle", inst / "oracle"), ("nothing", None)]
        sols += [(f"mutant_{m.name}", m) for m in sorted((inst / "mutants").iterdir()) if m.is_dir()]
        for name, sol in sols:
            wd = cache / "work" / tid / name
            if not wd.is_dir():
                tmp = wd.with_name(wd.name + ".tmp")
                shutil.rmtree(tmp, ignore_errors=True)
                if sol is None:
                    shutil.copytree(inst / "workdir", tmp)
                else:
                    overlay(inst / "workdir", sol, tmp)
                tmp.rename(wd)
            spec = {"task": tid, "workdir": str(wd), "gt": str(inst / "gt"), "solution": name}
            if sol is not None and (sol / "events.jsonl").is_file():
                spec["events"] = str(sol / "events.jsonl")
            specs.append(spec)
    # round-robin over tasks so every task has ~n/len(TASKS) items
    by_task = {t: [s for s in specs if s["task"] == t] for t in TASKS}
    lines, i = [], 0
    while len(lines) < n:
        t = TASKS[i % len(TASKS)]
        k = i // len(TASKS)
        s = by_task[t][k % len(by_task[t])]
        rep = k // len(by_task[t])
        item = {key: s[key] for key in ("task", "workdir", "gt", "events") if key in s}
        item["labels"] = {"agent": f"agent{rep % 2}", "repeat": str(rep // 2), "solution": s["solution"]}
        lines.append(json.dumps(item))
        i += 1
    path = cache / f"items-{n}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def one_run(jsonl: Path, workers: int | None, ray: str | None) -> dict:
    out = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    try:
        items = discover([jsonl])
        t0 = time.perf_counter()
        summary = run_sweep(items, out, workers=workers, ray_address=ray, console=Console(stderr=True, quiet=True))
        wall = time.perf_counter() - t0
        rows = read_rows(out / "results.jsonl")
    finally:
        shutil.rmtree(out, ignore_errors=True)
    per_worker_rss: dict[tuple[str, int], int] = {}
    for r in rows:
        ex = r["exec"]
        key = (ex.get("host") or "", ex.get("pid") or 0)
        per_worker_rss[key] = max(per_worker_rss.get(key, 0), ex.get("max_rss_bytes") or 0)
    ends = sorted(r["exec"]["end_wall_time"] for r in rows)
    steady = (len(ends) - 1) / (ends[-1] - ends[0]) if len(ends) > 1 and ends[-1] > ends[0] else None
    return {"wall_s": wall, "items": len(rows), "failed": summary.failed, "steady_items_s": steady,
            "worker_s": [r["exec"]["worker_s"] for r in rows], "cpu_s": [r["exec"].get("cpu_s") or 0.0 for r in rows],
            "rss": list(per_worker_rss.values()),
            "tasks": sorted({r["task"] for r in rows}), "families": sorted({r["family"] for r in rows if r["family"]})}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-ray", action="store_true")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "tally-bench-sweep")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    print(f"building {args.items} items over {len(TASKS)} tasks (cache {args.cache}) ...", flush=True)
    jsonl = build_items(args.cache, args.items)
    ray_init_s = None
    configs: list[tuple[str, int | None, str | None]] = [("pool-1", 1, None), ("pool-2", 2, None)]
    if not args.no_ray:
        import ray

        t0 = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
        ray_init_s = time.perf_counter() - t0
        configs.append(("ray-2", None, "auto"))
    results: dict[str, list[dict]] = {name: [] for name, _, _ in configs}
    try:
        for rnd in range(args.rounds):
            for name, workers, ray_addr in configs:
                res = one_run(jsonl, workers, ray_addr)
                results[name].append(res)
                print(f"round {rnd + 1} {name:7s}: {res['items']} items in {res['wall_s']:6.1f} s = "
                      f"{res['items'] / res['wall_s']:5.2f} items/s (failed {res['failed']})", flush=True)
    finally:
        if not args.no_ray:
            import ray

            ray.shutdown()
    first = results["pool-1"][0]
    print(f"\n{first['items']} items, {len(first['tasks'])} tasks, families {', '.join(first['families'])}")
    if ray_init_s is not None:
        print(f"Ray local start-up (once, not in the runs): {ray_init_s:.1f} s")
    med = {name: statistics.median(r["wall_s"] for r in rs) for name, rs in results.items()}
    n = first["items"]
    steady = {name: statistics.median(r["steady_items_s"] for r in rs) for name, rs in results.items()}
    print(f"{'config':8s} {'median wall s':>14s} {'items/s':>9s} {'steady items/s':>15s} {'vs pool-2':>10s} "
          f"{'worker s/item':>14s} {'CPU s/item':>11s} {'max RSS/worker MB':>18s}")
    for name, rs in results.items():
        ws = [w for r in rs for w in r["worker_s"]]
        cpu = [w for r in rs for w in r["cpu_s"]]
        rss = [x for r in rs for x in r["rss"]]
        print(f"{name:8s} {med[name]:14.1f} {n / med[name]:9.2f} {steady[name]:15.2f} {med[name] / med['pool-2']:10.3f} "
              f"{statistics.mean(ws):14.3f} {statistics.mean(cpu):11.3f} {statistics.median(rss) / 2**20:18.0f}")
    # the cost of an item on an idle core is its CPU time (wall time here includes other jobs' load)
    per_item_s = statistics.mean(w for r in results["pool-1"] for w in r["cpu_s"]) or \
        statistics.mean(w for r in results["pool-1"] for w in r["worker_s"])
    print(f"\nper-item scoring cost (pool-1, CPU time per item, mean): {per_item_s:.3f} s")
    if "ray-2" in med:
        over = (med["ray-2"] - med["pool-2"]) / n
        print(f"Ray overhead per item vs pool-2, whole run (pool start-up included): {over * 1000:+.1f} ms wall "
              f"({(med['ray-2'] / med['pool-2'] - 1) * 100:+.1f} %)")
        s_over = 1 / steady["ray-2"] - 1 / steady["pool-2"]
        print(f"Ray overhead per item vs pool-2, steady state (first to last row): {s_over * 1000:+.1f} ms "
              f"({(steady['pool-2'] / steady['ray-2'] - 1) * 100:+.1f} %)")
    print(f"\n{SCORINGS} scorings (80 tasks x 100 agents x 3 repeats) at {per_item_s:.3f} s each, 2 cores a node:")
    for nodes in (1, 10, 100):
        hours = SCORINGS * per_item_s / (2 * nodes) / 3600
        print(f"  {nodes:3d} node(s): {hours:7.2f} h ({SCORINGS * per_item_s / 3600:.1f} core-hours)")


if __name__ == "__main__":
    main()
