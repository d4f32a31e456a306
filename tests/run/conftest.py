"""Fixtures for the run lifecycle tests: a real mosquitto on a free loopback port, and an MQTT tap."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import aiomqtt
import pytest

from monitor.broker import free_port
from monitor.mqtt.topics import BrokerAddress
from scenarios.procs import stop_process


def _wait_port(port: int, up: bool, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as s:
            s.settimeout(0.2)
            is_up = s.connect_ex(("127.0.0.1", port)) == 0
        if is_up == up:
            return
        time.sleep(0.05)
    raise TimeoutError(f"port {port} did not become {'open' if up else 'closed'}")


@dataclass
class Mosquitto:
    """A mosquitto process we own; stop() and start() keep the same port and config file."""

    conf: Path
    port: int
    proc: subprocess.Popen | None = None

    @property
    def address(self) -> BrokerAddress:
        return BrokerAddress("127.0.0.1", self.port)

    def start(self) -> None:
        self.proc = subprocess.Popen(["mosquitto", "-c", str(self.conf)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        _wait_port(self.port, up=True)

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None
        _wait_port(self.port, up=False)


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    if shutil.which("mosquitto") is None:
        pytest.skip("mosquitto not installed")
    port = free_port()
    conf = tmp_path / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n", encoding="utf-8")
    broker = Mosquitto(conf, port)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@dataclass
class Tap:
    """Everything a subscriber saw, as (topic, payload text, retain)."""

    messages: list[tuple[str, str, bool]] = field(default_factory=list)
    ready: asyncio.Event = field(default_factory=asyncio.Event)

    def on(self, prefix: str) -> list[tuple[str, str]]:
        return [(t, p) for t, p, _ in self.messages if t.startswith(prefix)]

    def json_on(self, prefix: str) -> list[dict]:
        return [json.loads(p) for _, p in self.on(prefix)]


async def tap_broker(address: BrokerAddress, filters: list[str], tap: Tap, stop: asyncio.Event) -> None:
    """Subscribe (QoS 1) and collect; reconnects if the broker goes away (outage tests)."""
    while not stop.is_set():
        try:
            async with aiomqtt.Client(address.host, address.port, keepalive=5) as client:
                for f in filters:
                    await client.subscribe(f, qos=1)
                tap.ready.set()
                async for message in client.messages:
                    payload = message.payload.decode("utf-8", "replace") if isinstance(message.payload, bytes) else str(message.payload)
                    tap.messages.append((str(message.topic), payload, bool(message.retain)))
                    if stop.is_set():
                        return
        except aiomqtt.MqttError:
            await asyncio.sleep(0.1)


@contextlib.asynccontextmanager
async def tapping(address: BrokerAddress, filters: list[str]):
    tap, stop = Tap(), asyncio.Event()
    task = asyncio.get_running_loop().create_task(tap_broker(address, filters, tap, stop))
    async with asyncio.timeout(10):
        await tap.ready.wait()
    try:
        yield tap
    finally:
        stop.set()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
