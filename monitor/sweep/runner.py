"""The sweep loop: key every item, skip what results.jsonl already holds, score the rest on a
local process pool (default) or Ray, and append each row as it arrives, under a progress bar.

Resuming is the same call: keys already scored are skipped, so a killed sweep picks up where it
stopped and a fixed verifier (new scorer hash) re-scores exactly its own task's items.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from monitor.sweep.items import Item
from monitor.sweep.results import ROW_SCHEMA, ResultsLog, key_id
from monitor.sweep.worker import item_key, score_item, warm

SWEEP_META = "sweep.json"


@dataclass
class SweepSummary:
    items: int = 0
    skipped: int = 0
    scored: int = 0
    failed: int = 0
    elapsed_s: float = 0.0
    backend: str = "pool"
    nodes: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def _failed_row(item: Item, key: dict[str, str], error: str, backend: str) -> dict[str, Any]:
    return {"schema": ROW_SCHEMA, "key": key, "key_id": key_id(key), "item": item.id, "task": item.task,
            "family": None, "labels": item.labels, "status": "failed", "error": error, "score": None,
            "complete": False, "implemented": None, "unjudged_weight": None, "checks": {}, "scored_from": None,
            "report_sha256": None, "exec": {"backend": backend}, "report": None}


#: One thread per worker for the math libraries, as Ray gives a num_cpus=1 task: N workers each
#: running a core-wide thread pool oversubscribe the machine (measured: ~2x the CPU per item).
THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS")


@contextlib.contextmanager
def _single_threaded_children() -> Iterator[None]:
    """Children started inside inherit one-thread settings (the user's own values win)."""
    saved = {k: os.environ.get(k) for k in THREAD_ENV}
    for k in THREAD_ENV:
        os.environ.setdefault(k, "1")
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def pool_rows(todo: list[tuple[Item, dict[str, str]]], workers: int, gt_root: str | None,
              window: int = 256) -> Iterator[dict[str, Any]]:
    """Rows as they finish, from `workers` processes (forkserver: the scorers are imported once)."""
    with _single_threaded_children():
        yield from _pool_rows(todo, workers, gt_root, window)


def _pool_rows(todo: list[tuple[Item, dict[str, str]]], workers: int, gt_root: str | None,
               window: int) -> Iterator[dict[str, Any]]:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["monitor.sweep.preload"])
    pending: dict[Future, tuple[Item, dict[str, str]]] = {}
    queue = iter(todo)
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=warm) as pool:
        def fill() -> None:
            for item, key in queue:
                pending[pool.submit(score_item, item.to_dict(), key, gt_root)] = (item, key)
                if len(pending) >= window:
                    return
        fill()
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                item, key = pending.pop(fut)
                try:
                    yield fut.result()
                except Exception as exc:  # a worker died (OOM, crash): the item's row says so
                    yield _failed_row(item, key, f"worker lost: {type(exc).__name__}: {exc}", "pool")
            fill()


def run_sweep(items: list[Item], out: Path, workers: int | None = None, gt_root: Path | None = None,
              ray_address: str | None = None, ship: bool = False, console: Console | None = None) -> SweepSummary:
    console = console or Console(stderr=True)
    log = ResultsLog(out)
    summary = SweepSummary(items=len(items), backend="ray" if ray_address else "pool")
    t0 = time.perf_counter()
    todo: list[tuple[Item, dict[str, str]]] = []
    seen: set[str] = set()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), TextColumn("{task.fields[rate]}"), console=console,
                  transient=False) as progress:
        hashing = progress.add_task("hashing inputs", total=len(items), rate="")
        for item in items:
            key = item_key(item)
            kid = key_id(key)
            if kid in log.done or kid in seen:
                summary.skipped += 1
            else:
                seen.add(kid)
                todo.append((item, key))
            progress.advance(hashing)
        _write_meta(log.dir, items, summary, workers, ray_address)
        scoring = progress.add_task(f"scoring ({summary.backend})", total=len(todo), rate="")
        gt = str(gt_root) if gt_root else None
        if ray_address:
            from monitor.sweep.ray_backend import ray_rows

            rows = ray_rows(todo, ray_address, gt, ship=ship)
        else:
            rows = pool_rows(todo, workers or os.cpu_count() or 1, gt)
        t_score = time.perf_counter()
        for row in rows:
            report = row.pop("report", None)
            log.append(row, report)
            if row["status"] == "scored":
                summary.scored += 1
            else:
                summary.failed += 1
            node = (row.get("exec") or {}).get("node_id") or (row.get("exec") or {}).get("host") or "?"
            summary.nodes[node] = summary.nodes.get(node, 0) + 1
            done = summary.scored + summary.failed
            progress.update(scoring, advance=1, rate=f"{done / max(time.perf_counter() - t_score, 1e-9):.1f} items/s")
    log.close()
    summary.elapsed_s = round(time.perf_counter() - t0, 3)
    return summary


def _write_meta(root: Path, items: list[Item], summary: SweepSummary, workers: int | None,
                ray_address: str | None) -> None:
    from monitor.bundle import write_json_atomic
    from monitor.sweep.hashes import catalog_sha256, tally_version

    write_json_atomic(root / SWEEP_META, {"items": len(items), "to_score": len(items) - summary.skipped,
                                         "skipped": summary.skipped, "backend": summary.backend,
                                         "workers": workers, "ray": ray_address, "tally_version": tally_version(),
                                         "catalog_sha256": catalog_sha256(), "updated_wall_time": time.time()})


def load_meta(root: Path) -> dict[str, Any]:
    path = Path(root) / SWEEP_META
    return json.loads(path.read_text()) if path.is_file() else {}
