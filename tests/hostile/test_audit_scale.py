"""Issue 20 item 6, the audit: it refuses `/`, its first walk does not block the event loop, the
thread answering permission requests never walks the tree, and a directory created during the run
is marked from its create event (the write in it is attributed). Numbers printed for the note."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time

import pytest

from monitor.audit.component import AuditComponent
from monitor.bus import EventBus

N_DIRS = 20_000


def _tree(root, n: int) -> None:
    for i in range(n):
        os.makedirs(root / f"d{i // 100:03d}" / f"e{i % 100:02d}", exist_ok=True)


async def test_the_audit_refuses_the_root():
    with pytest.raises(ValueError, match="refuses to watch /"):
        await AuditComponent("/").start(EventBus())


async def _max_loop_gap_s(work, stop: asyncio.Event) -> float:
    gap, last = 0.0, time.monotonic()
    while not stop.is_set():
        await asyncio.sleep(0.005)
        now = time.monotonic()
        gap, last = max(gap, now - last), now
    return gap


def _open_latencies_ms(path, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        with open(path, "rb"):
            pass
        out.append((time.perf_counter() - t0) * 1000)
    return sorted(out)


async def test_a_big_tree_blocks_neither_the_loop_nor_openers(tmp_path):
    work = tmp_path / "work"
    await asyncio.to_thread(_tree, work, N_DIRS)
    target = work / "d000" / "e00" / "f.txt"
    target.write_text("x")
    base = await asyncio.to_thread(_open_latencies_ms, target, 2000)  # the same opens, no audit
    bus = EventBus()
    events = []
    bus.add_sink(events.append)
    audit = AuditComponent(work, mode="fanotify")
    stop = asyncio.Event()
    ticker = asyncio.get_running_loop().create_task(_max_loop_gap_s(work, stop))
    t0 = time.monotonic()
    try:
        await audit.start(bus)
    except OSError as exc:  # no CAP_SYS_ADMIN here
        stop.set()
        await ticker
        pytest.skip(f"fanotify unavailable: {exc}")
    start_s = time.monotonic() - t0
    stop.set()
    loop_gap_s = await ticker
    watcher = audit._watcher
    assert watcher.marked_dirs >= N_DIRS
    lat = await asyncio.to_thread(_open_latencies_ms, target, 2000)
    # a directory made now is marked from its create event, and a write in it is attributed
    fresh = work / "made" / "during" / "run"
    fresh.mkdir(parents=True)
    t1 = time.monotonic()
    async with asyncio.timeout(20):
        while not {str(fresh), str(fresh.parent)} <= watcher._marked_dirs:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
    mark_s = time.monotonic() - t1
    src = tmp_path / "s.txt"
    src.write_text("y")
    await asyncio.to_thread(subprocess.run, ["cp", str(src), str(fresh / "c.txt")], check=True)
    await asyncio.sleep(0.3)
    await audit.stop()
    writes = [e.payload for e in events if e.kind == "write" and e.payload["path"].endswith("c.txt")]
    print(f"\n{N_DIRS} dirs: audit start {start_s:.2f} s, longest event-loop stall meanwhile "
          f"{loop_gap_s * 1000:.0f} ms; open() p50 {lat[len(lat) // 2]:.3f} ms p99 {lat[int(len(lat) * 0.99)]:.3f} ms "
          f"max {lat[-1]:.2f} ms (no audit: p50 {base[len(base) // 2]:.3f} ms p99 {base[int(len(base) * 0.99)]:.3f} ms); "
          f"new dir marked {mark_s * 1000:.0f} ms after mkdir")
    assert writes and (writes[0]["exe"] or "").endswith("/cp"), writes
