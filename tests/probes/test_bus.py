"""Probe events reach a real monitor EventBus from a worker thread and survive the JSON-lines codec."""

from __future__ import annotations

import asyncio
import threading

import numpy as np

from monitor.bus import EventBus
from monitor.events import Event
from probes.audio_probe import AudioProbe
from probes.run import run_source, threadsafe_emit
from probes.types import AudioBlock

SR = 48000


def blocks() -> list[AudioBlock]:
    t = np.arange(SR) / SR
    x = np.zeros((2 * SR, 2), np.float32)
    x[SR // 2: SR // 2 + SR, 1] = 0.5 * np.sin(2 * np.pi * 1000 * t)
    return [AudioBlock(x[i:i + 960], SR, i / SR) for i in range(0, len(x), 960)]


async def test_events_cross_threads_into_the_bus() -> None:
    bus = EventBus()
    sub = bus.subscribe("test")
    emit = threadsafe_emit(asyncio.get_running_loop(), bus.emit)
    probe = AudioProbe(emit, SR, 2, tones_hz=[1000])
    done = threading.Event()

    def work() -> None:
        run_source(blocks(), probe.push)
        probe.flush()
        done.set()

    await asyncio.to_thread(work)
    await asyncio.sleep(0.05)  # let the scheduled emits run
    got: list[Event] = []
    while not sub.queue.empty():
        got.append(sub.queue.get_nowait())
    assert done.is_set()
    kinds = [e.kind for e in got]
    assert kinds.count("meter") == 20 and {e.source for e in got} == {"probe.audio"}
    on = [e for e in got if e.kind == "tone_on"]
    assert len(on) == 1 and on[0].payload["channel"] == 1 and abs(on[0].payload["t_s"] - 0.5) < 0.003
    for e in got:  # JSON-lines round trip keeps every payload
        assert Event.from_json(e.to_json()).payload == e.payload
