"""`tally sweep collect`: the reports every `tally serve` node publishes, as one results.jsonl.

Each node publishes its run's report retained on `tally/<node>/run/<run>/score`; the collector
subscribes to `tally/+/run/+/score` and writes one row per (node, run, scorer, catalog), so the
retained copies a broker replays on every (re)subscription are skipped and a restarted collector
resumes where it stopped. Rows have the same shape as `tally sweep score`'s, so `tally sweep
report` reads either.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from pathlib import Path
from typing import Any

from monitor.mqtt.topics import ROOT, BrokerAddress
from monitor.sweep.results import ROW_SCHEMA, ResultsLog, key_id
from monitor.sweep.worker import report_fields

SCORE_FILTER = f"{ROOT}/+/run/+/score"


def row_from_score(topic: str, payload: bytes) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(row, report) for one score message, None when it is not a report."""
    parts = topic.split("/")
    if len(parts) != 5 or parts[2] != "run" or parts[4] != "score":
        return None
    try:
        report = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(report, dict) or "checks" not in report:
        return None
    node, run_id = parts[1], parts[3]
    run = report.get("run") or {}
    prov = run.get("provenance") or {}
    key = {"bundle": hashlib.sha256(f"tally.mqtt/1\0{node}\0{run_id}".encode()).hexdigest(),
           "scorer": str(prov.get("scorer_sha256") or "unknown"), "catalog": str(prov.get("catalog_sha256") or "unknown")}
    row = {"schema": ROW_SCHEMA, "key": key, "key_id": key_id(key), "item": f"mqtt:{node}/{run_id}",
           "task": report.get("task"), "family": report.get("family"), "labels": {"node": node},
           **report_fields(report), "scored_from": run.get("scored_from"),
           "exec": {"backend": "mqtt", "node_id": node, "run_id": run_id, "received_wall_time": time.time()}}
    return row, report


async def collect(address: BrokerAddress, out: Path, seconds: float | None = None, count: int | None = None,
                  ready: asyncio.Event | None = None) -> int:
    """Subscribe and append rows until `seconds` pass or `count` new rows arrived; returns new rows."""
    import aiomqtt

    log = ResultsLog(out)
    new = 0
    try:
        async with contextlib.AsyncExitStack() as stack:
            if seconds is not None:
                await stack.enter_async_context(asyncio.timeout(seconds))
            client = await stack.enter_async_context(aiomqtt.Client(
                address.host, address.port, username=address.username, password=address.password))
            await client.subscribe(SCORE_FILTER, qos=1)
            if ready is not None:
                ready.set()
            async for msg in client.messages:
                payload = msg.payload if isinstance(msg.payload, bytes) else str(msg.payload).encode()
                got = row_from_score(str(msg.topic), payload)
                if got is None or got[0]["key_id"] in log.done:
                    continue
                log.append(*got)
                new += 1
                if count is not None and new >= count:
                    break
    except TimeoutError:
        pass
    finally:
        log.close()
    return new
