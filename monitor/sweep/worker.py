"""One item in, one result row out: the unit a pool process or a Ray task runs.

The parent computes each item's key (what the score depends on) before dispatching, so resuming
needs no worker; the worker only scores, with the same pure functions `tally score` and
`tally replay` use, and reports where it ran and how long it took under `exec`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import os
import resource
import socket
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from monitor.bundle import BundleError, bundle_sha256, read_events, relocate_strings, sha256_file, tree_sha256
from monitor.sweep.hashes import catalog_sha256, scorer_sha256
from monitor.sweep.items import Item
from monitor.sweep.results import ROW_SCHEMA, key_id


@functools.lru_cache(maxsize=4096)
def _tree(path: str) -> str:
    return tree_sha256(Path(path)) if Path(path).is_dir() else "absent"


def item_key(item: Item) -> dict[str, str]:
    """(bundle, scorer, catalog) hashes. `bundle` names the inputs' content and the item's labels
    (so two repeats with equal outputs stay two items); for a JSONL item it is its work dir,
    GT and events content."""
    digest = hashlib.sha256(b"tally.item/1\n")
    digest.update(json.dumps(item.labels, sort_keys=True).encode() + b"\n")
    if item.problem:
        digest.update(b"problem\0" + item.id.encode())
    elif item.kind == "bundle":
        try:
            digest.update(b"bundle\0" + bundle_sha256(Path(str(item.bundle))).encode())
        except OSError as exc:
            digest.update(b"unreadable\0" + item.id.encode() + str(exc).encode())
    else:
        events = item.events
        ev = sha256_file(Path(events)) if events and Path(events).is_file() else "none"
        if item.named:
            digest.update(b"id\0" + item.id.encode() + b"\n")
        digest.update(f"spec\0{item.task}\0{_tree(str(item.workdir))}\0{_tree(str(item.gt))}\0{ev}".encode())
    task = item.task or ""
    scorer = scorer_sha256(task) if task else "none"
    return {"bundle": digest.hexdigest(), "scorer": scorer, "catalog": catalog_sha256()}


def _family(task: str | None) -> str | None:
    from verifiers.catalog import load_catalog

    try:
        return load_catalog().get(task).family if task else None
    except KeyError:
        return None


def pack_item(item: Item) -> bytes:
    """The item's files as an uncompressed tar, for Ray's object store (`--ship`)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        if item.kind == "bundle" and item.bundle:
            tar.add(item.bundle, arcname="bundle")
        else:
            if item.workdir:
                tar.add(item.workdir, arcname="workdir")
            if item.events:
                tar.add(item.events, arcname="events.jsonl")
    return buf.getvalue()


def report_fields(report: dict[str, Any]) -> dict[str, Any]:
    """What a row keeps of a report: score, completeness, each check's status and score, its hash."""
    checks = {c["name"]: {"status": c["status"], "score": round(float(c["score"]), 6), "weight": c["weight"]}
              for c in report["checks"]}
    return {"status": "scored", "error": None, "score": report["score"], "complete": report["complete"],
            "implemented": report["implemented"], "unjudged_weight": report["unjudged_weight"], "checks": checks,
            "report_sha256": hashlib.sha256(json.dumps(report, sort_keys=True).encode()).hexdigest()}


def _score(item: Item, gt_root: str | None) -> tuple[dict[str, Any], str | None]:
    """(report, scored_from)."""
    if item.kind == "bundle":
        from monitor.run.rescore import score_bundle

        report = score_bundle(Path(str(item.bundle)), gt_root=Path(gt_root) if gt_root else None)
        return report, (report.get("run") or {}).get("scored_from", "workdir")
    from verifiers.scoring import score_task

    events = None
    if item.events:
        events = [e.to_dict() for e in read_events(Path(item.events)).events]
    return score_task(str(item.task), Path(str(item.workdir)), Path(str(item.gt)), events).to_dict(), None


def score_item(item_d: dict[str, Any], key: dict[str, str], gt_root: str | None = None,
               shipped: bytes | None = None, backend: str = "pool") -> dict[str, Any]:
    """The result row for one item (the report under `report`, which the writer files apart)."""
    item = Item.from_dict(item_d)
    t0, cpu0 = time.perf_counter(), time.process_time()
    row: dict[str, Any] = {"schema": ROW_SCHEMA, "key": key, "key_id": key_id(key), "item": item.id,
                           "task": item.task, "family": _family(item.task), "labels": item.labels}
    report = None
    try:
        if item.problem:
            raise BundleError(item.problem)
        with contextlib.ExitStack() as stack:
            relocate: dict[str, str] = {}
            if shipped is not None:
                tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tally-shipped-")))
                with tarfile.open(fileobj=io.BytesIO(shipped), mode="r") as tar:
                    tar.extractall(tmp, filter="data")
                if item.kind == "bundle":
                    item.bundle = str(tmp / "bundle")
                else:
                    relocate[str(tmp / "workdir")] = str(item.workdir)
                    item.workdir = str(tmp / "workdir")
                    if item.events:
                        item.events = str(tmp / "events.jsonl")
            report, scored_from = _score(item, gt_root)
            report = relocate_strings(report, relocate)
        row.update(report_fields(report), scored_from=scored_from)
    except Exception as exc:  # one bad item is a row, never the end of the sweep
        row.update(status="failed", error=f"{type(exc).__name__}: {exc}", score=None, complete=False,
                   implemented=None, unjudged_weight=None, checks={}, scored_from=None, report_sha256=None)
    row["exec"] = {"backend": backend, "host": socket.gethostname(), "pid": os.getpid(), "node_id": None,
                   "worker_s": round(time.perf_counter() - t0, 4), "cpu_s": round(time.process_time() - cpu0, 4),
                   "end_wall_time": time.time(),
                   "max_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}
    row["report"] = report
    return row


def warm() -> None:
    """Import the scorers once per worker process (before the first item, not inside its time)."""
    from verifiers import registry

    getattr(registry, "import_all", registry.implemented_ids)()
    try:  # OpenCV keeps its own pool; one thread a worker, like the math libraries (runner.THREAD_ENV)
        import cv2

        cv2.setNumThreads(1)
    except ImportError:
        pass
