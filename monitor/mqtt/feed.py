"""The MQTT feed: every bus event goes to the disk outbox, and a publisher drains it to the broker.

Why a bus *sink* and not a subscription: subscriptions drop events when full (by design, so a slow
consumer cannot stall producers), but the feed promises none are lost. Appending one line to a
file is cheap enough to do inline; the slow part (the network) only ever reads the file.

Delivery is QoS 1, in outbox order, with up to `window` publishes in flight, acknowledged record
by record in order: the cursor only moves past a record once the broker sent its PUBACK and
every earlier record's. When the broker goes away the publisher reconnects with
backoff and resends from the cursor, so a subscriber may see an event twice (at-least-once) but
never out of order after de-duplication by `seq`, and never misses one.

The status topic is retained and the connection carries a last will, so anyone subscribing learns
whether the daemon is up, idle or running, even after it died without saying goodbye.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiomqtt

from monitor.bus import EventBus
from monitor.events import Event
from monitor.mqtt import topics
from monitor.outbox import Outbox, OutboxRecord

log = logging.getLogger(__name__)
#: aiomqtt warns on every window of in-flight publishes ("pending publish calls"); that is our design.
_client_log = logging.getLogger("monitor.mqtt.client")
_client_log.setLevel(logging.ERROR)

CommandHandler = Callable[[bytes], Awaitable[None] | None]


class MqttFeed:
    """Publishes a run's (or the daemon's) events and status; also listens for control commands.

    It is a run component (`start(bus)` / `stop()`), but `tally serve` keeps one alive across runs
    and re-points it with `set_run()`.
    """

    name = "mqtt"

    def __init__(self, broker: topics.BrokerAddress, node: str, outbox_dir: Path, run_id: str | None = None,
                 on_command: CommandHandler | None = None, window: int = 32,
                 reconnect_max_s: float = 2.0, drain_timeout_s: float = 10.0) -> None:
        self.broker = broker
        self.node = node
        self.run_id = run_id
        self.outbox = Outbox(outbox_dir)
        self._on_command = on_command
        self._window = window
        self._reconnect_max_s = reconnect_max_s
        self._drain_timeout_s = drain_timeout_s
        self._wake = asyncio.Event()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._client: aiomqtt.Client | None = None
        self._status: dict[str, Any] = {"state": "idle", "node": node, "run": None}
        self._status_dirty = True
        self.connected = asyncio.Event()
        self.connects = 0
        self.last_error: str | None = None

    # -- producer side (synchronous, never blocks on the network) --------------------------------

    def attach(self, bus: EventBus) -> None:
        bus.add_sink(self.on_event)

    def set_run(self, run_id: str | None) -> None:
        self.run_id = run_id

    def on_event(self, event: Event) -> None:
        """Bus sink: queue the event's line exactly as the bundle writes it."""
        if self.run_id is None:
            return
        self.outbox.append(topics.event(self.node, self.run_id, event.source, event.kind), event.to_json())
        self._wake.set()

    def queue_json(self, topic: str, obj: Any, retain: bool = False) -> None:
        payload = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        self.outbox.append(topic, payload, retain)
        self._wake.set()

    def queue_line(self, topic: str, line: str, retain: bool = False) -> None:
        self.outbox.append(topic, line, retain)
        self._wake.set()

    def set_status(self, **fields: Any) -> None:
        """Update the retained status; published at once if connected, else on (re)connect."""
        self._status = {"node": self.node, **fields}
        self._status_dirty = True
        self._wake.set()

    # -- component lifecycle ---------------------------------------------------------------------

    async def start(self, bus: EventBus | None = None) -> None:
        if bus is not None:
            self.attach(bus)
        self._stopping = False
        self._task = asyncio.get_running_loop().create_task(self._run(), name="mqtt-feed")

    async def drained(self, timeout_s: float) -> bool:
        """Wait until the broker has acknowledged everything queued so far."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self.outbox.pending_bytes > 0 or self._status_dirty:
            if loop.time() >= deadline:
                return False
            self._wake.set()
            await asyncio.sleep(0.05)
        return True

    async def stop(self, final_status: dict[str, Any] | None = None) -> None:
        """Drain what is queued (bounded wait), publish the final status, disconnect cleanly."""
        if self._task is None:
            self.outbox.close()
            return
        if final_status is not None:
            self.set_status(**final_status)
        drained = await self.drained(self._drain_timeout_s)
        if not drained:
            log.warning("mqtt: %d bytes still queued in %s; they are sent on the next start",
                        self.outbox.pending_bytes, self.outbox.folder)
        self._stopping = True
        self._wake.set()
        # Cooperative stop first (the pump returns and the client disconnects cleanly, so the
        # broker does not fire the last will); cancellation only if that does not happen quickly.
        done, _ = await asyncio.wait({self._task}, timeout=3.0)
        if not done:
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=3.0)
        self._task = None
        self.outbox.close()

    # -- the publisher ---------------------------------------------------------------------------

    def _client_for(self) -> aiomqtt.Client:
        will = aiomqtt.Will(topics.status(self.node),
                            json.dumps({"node": self.node, "state": "offline"}, sort_keys=True), qos=1,
                            retain=True)
        return aiomqtt.Client(self.broker.host, self.broker.port, username=self.broker.username,
                              password=self.broker.password, identifier=f"tally-{topics.level(self.node)}-{os.getpid()}",
                              will=will, timeout=5.0, keepalive=5, clean_session=True, logger=_client_log,
                              max_inflight_messages=self._window * 2)

    async def _run(self) -> None:
        backoff_s = 0.1
        while not self._stopping:
            try:
                async with self._client_for() as client:
                    self._client = client
                    self.connects += 1
                    backoff_s = 0.1
                    reader = None
                    if self._on_command is not None:
                        await client.subscribe(topics.command(self.node), qos=1)
                        reader = asyncio.get_running_loop().create_task(self._read_commands(client))
                    self._status_dirty = True
                    self.connected.set()
                    try:
                        await self._pump(client)
                    finally:
                        if reader is not None:
                            reader.cancel()
                            with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                                await reader
            except aiomqtt.MqttError as exc:
                self.last_error = str(exc)
            except OSError as exc:
                self.last_error = f"{type(exc).__name__}: {exc}"
            finally:
                self._client = None
                self.connected.clear()
            if self._stopping:
                break
            self.outbox.save_cursor()
            await asyncio.sleep(backoff_s)
            backoff_s = min(self._reconnect_max_s, backoff_s * 2)

    async def _pump(self, client: aiomqtt.Client) -> None:
        """Sliding window: keep up to `window` publishes in flight, acknowledge strictly in order.

        Waiting for a whole batch instead would tie throughput to the broker's PUBACK latency
        (Nagle-delayed on a default mosquitto); here the head's ack frees one slot at a time.
        """
        inflight: collections.deque[tuple[OutboxRecord, asyncio.Future[None]]] = collections.deque()
        next_pos = self.outbox.cursor
        try:
            while not self._stopping:
                if self._status_dirty:
                    self._status_dirty = False
                    payload = json.dumps(self._status, sort_keys=True, separators=(",", ":"))
                    try:
                        await client.publish(topics.status(self.node), payload, qos=1, retain=True)
                    except BaseException:
                        self._status_dirty = True
                        raise
                if len(inflight) < self._window:
                    for record in self.outbox.peek(self._window - len(inflight), start=next_pos):
                        inflight.append((record, self._send(client, record)))
                        next_pos = record.end
                if not inflight:
                    self._wake.clear()
                    if self.outbox.pending_bytes == 0 and not self._status_dirty:
                        # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancellation.
                        with contextlib.suppress(TimeoutError):
                            async with asyncio.timeout(1.0):
                                await self._wake.wait()
                    else:
                        await asyncio.sleep(0.02)  # a line is being written; read it whole next time
                    continue
                head = inflight[0][1]
                if not head.done():
                    self._wake.clear()
                    waker = asyncio.ensure_future(self._wake.wait())
                    try:
                        await asyncio.wait({head, waker}, timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
                    finally:
                        waker.cancel()
                while inflight and inflight[0][1].done():
                    record, fut = inflight.popleft()
                    exc = fut.exception()
                    if exc is not None:
                        raise exc if isinstance(exc, (aiomqtt.MqttError, OSError)) else aiomqtt.MqttError(str(exc))
                    self.outbox.ack(record)
                if not inflight:
                    next_pos = self.outbox.cursor  # the outbox may have compacted to zero
        finally:
            for _, fut in inflight:
                fut.cancel()
            if inflight:
                await asyncio.gather(*(f for _, f in inflight), return_exceptions=True)

    def _send(self, client: aiomqtt.Client, record: OutboxRecord) -> asyncio.Future[None]:
        if not record.topic:  # an unreadable (torn) line: acknowledged in order, never sent
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            done.set_result(None)
            return done
        return asyncio.ensure_future(client.publish(record.topic, record.payload, qos=1, retain=record.retain))

    async def _read_commands(self, client: aiomqtt.Client) -> None:
        assert self._on_command is not None
        async for message in client.messages:
            payload = message.payload if isinstance(message.payload, bytes) else str(message.payload).encode()
            try:
                result = self._on_command(payload)
                if asyncio.iscoroutine(result):
                    await result
            except Exception:  # a handler bug must not take the feed down
                log.exception("mqtt: command handler failed")
