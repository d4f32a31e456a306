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

The feed must outlive any single message and any broker restart, because a daemon whose feed
died is deaf and mute while looking alive. So: the connection task is supervised (any exception is
an `mqtt/feed_error` event and a reconnect with backoff; the same crash three times at the same
outbox position skips that record); a record the broker cannot take is acknowledged unsent with an
`mqtt/outbox_skipped` event; the command reader ending (the broker went away while we were idle)
ends the connection and reconnects; and the retained status is re-published every `heartbeat_s`
(half the MQTT keepalive, each publish given as long to be acknowledged), so an idle daemon notices a
dead or frozen broker within one keepalive (5 s).
Those incident events go to `tally/<node>/feed/<kind>` and, during a run, into its bus (a
`reconnected` event only to the topic: the run's events already show an outage by their timing).
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
from monitor.events import Event, EventFactory
from monitor.mqtt import topics
from monitor.outbox import Outbox, OutboxRecord

log = logging.getLogger(__name__)
#: aiomqtt warns on every window of in-flight publishes ("pending publish calls"); that is our design.
_client_log = logging.getLogger("monitor.mqtt.client")
_client_log.setLevel(logging.ERROR)

CommandHandler = Callable[[bytes], Awaitable[None] | None]
#: MQTT keepalive of the feed's connection (s); the status heartbeat uses the same period.
KEEPALIVE_S = 5
#: Crashes at one outbox position after which the record there is skipped as poison.
POISON_CRASHES = 3


class MqttFeed:
    """Publishes a run's (or the daemon's) events and status; also listens for control commands.

    It is a run component (`start(bus)` / `stop()`), but `tally serve` keeps one alive across runs
    and re-points it with `set_run()`.
    """

    name = "mqtt"

    def __init__(self, broker: topics.BrokerAddress, node: str, outbox_dir: Path, run_id: str | None = None,
                 on_command: CommandHandler | None = None, window: int = 32,
                 reconnect_max_s: float = 2.0, drain_timeout_s: float = 10.0,
                 heartbeat_s: float = KEEPALIVE_S / 2) -> None:
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
        self._heartbeat_s = heartbeat_s
        self._factory = EventFactory()
        self._bus: EventBus | None = None
        #: incident events (feed errors, skipped records), newest last; kept short
        self.incidents: list[Event] = []
        self._crash_pos: int | None = None
        self._crash_count = 0

    # -- producer side (synchronous, never blocks on the network) --------------------------------

    def attach(self, bus: EventBus) -> None:
        bus.add_sink(self.on_event)
        self._bus = bus

    def set_run(self, run_id: str | None) -> None:
        self.run_id = run_id
        if run_id is None:
            self._bus = None

    def _incident(self, kind: str, payload: dict[str, Any], to_run: bool = True) -> None:
        """Say what went wrong: a log line, an event on `tally/<node>/feed/<kind>`, the run's bus."""
        log.warning("mqtt feed: %s %s", kind, payload)
        event = self._factory.make("mqtt", kind, payload)
        self.incidents = [*self.incidents[-99:], event]
        self.outbox.append(topics.feed_event(self.node, kind), event.to_json())
        if to_run and self._bus is not None and self.run_id is not None:
            self._bus.emit("mqtt", kind, payload)
        self._wake.set()

    def on_event(self, event: Event) -> None:
        """Bus sink: queue the event's line exactly as the bundle writes it."""
        if self.run_id is None:
            return
        if not self.outbox.append(topics.event(self.node, self.run_id, event.source, event.kind), event.to_json()):
            log.warning("mqtt feed: event %s/%s seq %d too big to queue; not published",
                        event.source, event.kind, event.seq)
        self._wake.set()

    def queue_json(self, topic: str, obj: Any, retain: bool = False) -> None:
        payload = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        self.queue_line(topic, payload, retain)

    def queue_line(self, topic: str, line: str, retain: bool = False) -> None:
        if not self.outbox.append(topic, line, retain):
            self._incident("outbox_skipped", {"topic": topic, "size_bytes": len(line.encode("utf-8")),
                                              "reason": "over the outbox record limit; not published"})
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
        # Not connected: the broker is away, so waiting the whole drain timeout only delays exit
        # (what is queued stays on disk for the next start).
        wait_s = self._drain_timeout_s if self.connected.is_set() else min(self._drain_timeout_s, 1.0)
        drained = await self.drained(wait_s)
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
                              will=will, timeout=5.0, keepalive=KEEPALIVE_S, clean_session=True, logger=_client_log,
                              max_inflight_messages=self._window * 2)

    async def _run(self) -> None:
        """Supervisor: connect, serve until the connection ends for any reason, back off, again."""
        backoff_s = 0.1
        while not self._stopping:
            try:
                async with self._client_for() as client:
                    self._client = client
                    self.connects += 1
                    backoff_s = 0.1
                    if self.connects > 1:  # the broker's side of the story is in the outbox's order
                        self._incident("reconnected", {"connects": self.connects,
                                                       "after": (self.last_error or "")[:300]}, to_run=False)
                    await self._connected(client)
            except asyncio.CancelledError:
                raise
            except aiomqtt.MqttError as exc:
                self.last_error = str(exc)
            except OSError as exc:
                self.last_error = f"{type(exc).__name__}: {exc}"
            except Exception as exc:  # a bug or a record nothing can send: never the end of the feed
                self.last_error = f"{type(exc).__name__}: {exc}"
                self._crashed(exc)
            finally:
                self._client = None
                self.connected.clear()
            if self._stopping:
                break
            self.outbox.save_cursor()
            await asyncio.sleep(backoff_s)
            backoff_s = min(self._reconnect_max_s, backoff_s * 2)

    async def _connected(self, client: aiomqtt.Client) -> None:
        """Pump and command reader side by side; whichever ends first ends the connection."""
        loop = asyncio.get_running_loop()
        if self._on_command is not None:
            await client.subscribe(topics.command(self.node), qos=1)
        self._status_dirty = True
        self.connected.set()
        tasks = {loop.create_task(self._pump(client), name="mqtt-pump")}
        reader = None
        if self._on_command is not None:
            reader = loop.create_task(self._read_commands(client), name="mqtt-commands")
            tasks.add(reader)
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
        if reader is not None and reader in done and not self._stopping:
            raise aiomqtt.MqttError("command reader ended (connection lost)")

    def _crashed(self, exc: Exception) -> None:
        """Report a crash; the third at the same outbox position skips the record there."""
        pos = self.outbox.cursor
        self._crash_count = self._crash_count + 1 if pos == self._crash_pos else 1
        self._crash_pos = pos
        payload: dict[str, Any] = {"error": f"{type(exc).__name__}: {exc}"[:500], "restarts": self.connects,
                                   "outbox_cursor": pos}
        if self._crash_count >= POISON_CRASHES:
            head = self.outbox.peek(1)
            if head:
                self.outbox.ack(head[0])
                payload["skipped_record_topic"] = head[0].topic[:200]
            self._crash_count = 0
        self._incident("feed_error", payload)

    async def _pump(self, client: aiomqtt.Client) -> None:
        """Sliding window: keep up to `window` publishes in flight, acknowledge strictly in order.

        Waiting for a whole batch instead would tie throughput to the broker's PUBACK latency
        (Nagle-delayed on a default mosquitto); here the head's ack frees one slot at a time.
        """
        inflight: collections.deque[tuple[OutboxRecord, asyncio.Future[None]]] = collections.deque()
        next_pos = self.outbox.cursor
        loop = asyncio.get_running_loop()
        last_status = loop.time()
        try:
            while not self._stopping:
                if loop.time() - last_status >= self._heartbeat_s:
                    self._status_dirty = True  # heartbeat: a dead broker shows as a failed publish
                if self._status_dirty:
                    last_status = loop.time()
                    self._status_dirty = False
                    payload = json.dumps(self._status, sort_keys=True, separators=(",", ":"))
                    try:
                        await client.publish(topics.status(self.node), payload, qos=1, retain=True,
                                             timeout=self._heartbeat_s)
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
                            async with asyncio.timeout(min(1.0, self._heartbeat_s)):
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
                    if isinstance(exc, (aiomqtt.MqttError, OSError)):
                        raise exc
                    if exc is not None:  # the client refuses this record (bad topic, too big): skip it
                        self._incident("outbox_skipped", {"topic": record.topic[:200],
                                                          "size_bytes": len(record.payload.encode("utf-8")),
                                                          "reason": f"{type(exc).__name__}: {exc}"[:500]})
                    elif record.problem:
                        self._incident("outbox_skipped", {"reason": record.problem})
                    self.outbox.ack(record)
                if not inflight:
                    next_pos = self.outbox.cursor  # the outbox may have compacted to zero
        finally:
            for _, fut in inflight:
                fut.cancel()
            if inflight:
                await asyncio.gather(*(f for _, f in inflight), return_exceptions=True)

    def _send(self, client: aiomqtt.Client, record: OutboxRecord) -> asyncio.Future[None]:
        if not record.topic or record.problem:  # unreadable or oversized: acknowledged in order, never sent
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
