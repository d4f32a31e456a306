"""Ray as the sweep's engine beyond one machine: one Ray task per item.

Each task asks for one CPU (`num_cpus=1`, the scorers are single-threaded numpy/libav work), is
retried when its worker or node dies (`max_retries`), and its row comes back as soon as it
finishes (`ray.wait` over a bounded window of tasks in flight, so 24 000 items never sit in the
scheduler at once). Inputs are read from a path every node sees (NFS, a mounted bucket) unless
`ship` is set: then the parent tars each item's files into Ray's object store and the task
unpacks them in a temporary folder on its node. The GT is never shipped: the nodes find it under
`--gt-root` (or at the recorded path).

Ray is optional (`pip install tally[ray]`); nothing here is imported without `--ray`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from typing import Any

from monitor.sweep.items import Item
from monitor.sweep.worker import pack_item, score_item

MAX_RETRIES = 3


def connect(address: str) -> bool:
    """Join the cluster at `address` ('auto': the one running here, else start a local one).
    Returns True when this call started Ray (the caller shuts it down)."""
    import ray

    if ray.is_initialized():
        return False
    opts: dict[str, Any] = {"log_to_driver": False, "include_dashboard": False}
    if address == "auto":
        try:
            ray.init(address="auto", **opts)
        except ConnectionError:  # a cluster of this machine alone: keep it on loopback
            ray.init(num_cpus=os.cpu_count() or 1, _node_ip_address="127.0.0.1", **opts)
    else:
        ray.init(address=address, **opts)
    return True


@functools.cache
def remote_scorer() -> Any:
    """The Ray remote function around worker.score_item (made once, on first use)."""
    import ray

    @ray.remote(num_cpus=1, max_retries=MAX_RETRIES)
    def score_on_ray(item_d: dict[str, Any], key: dict[str, str], gt_root: str | None,
                     shipped: bytes | None) -> dict[str, Any]:
        row = score_item(item_d, key, gt_root, shipped=shipped, backend="ray")
        ctx = ray.get_runtime_context()
        row["exec"]["node_id"] = ctx.get_node_id()
        row["exec"]["worker_id"] = ctx.get_worker_id()
        return row

    return score_on_ray


def ray_rows(todo: list[tuple[Item, dict[str, str]]], address: str, gt_root: str | None, ship: bool = False,
             window: int | None = None) -> Iterator[dict[str, Any]]:
    import ray
    from ray.exceptions import RayError

    from monitor.sweep.runner import _failed_row

    started = connect(address)
    try:
        fn = remote_scorer()
        cpus = int(ray.cluster_resources().get("CPU", 1))
        window = window or max(4 * cpus, 8)
        queue = iter(todo)
        pending: dict[Any, tuple[Item, dict[str, str]]] = {}

        def fill() -> None:
            for item, key in queue:
                shipped = ray.put(pack_item(item)) if ship and not item.problem else None
                pending[fn.remote(item.to_dict(), key, gt_root, shipped)] = (item, key)
                if len(pending) >= window:
                    return

        fill()
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                item, key = pending.pop(ref)
                try:
                    yield ray.get(ref)
                except RayError as exc:  # retries exhausted: the item's row says why
                    yield _failed_row(item, key, f"ray task lost: {type(exc).__name__}: {exc}"[:2000], "ray")
            fill()
    finally:
        if started:
            ray.shutdown()
