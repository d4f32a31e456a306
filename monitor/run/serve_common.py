"""Opening the MQTT feed for `tally run` and `tally serve`: the named broker, or an embedded one."""

from __future__ import annotations

import contextlib
from pathlib import Path

from monitor.cli import UserError
from monitor.mqtt import topics
from monitor.mqtt.feed import CommandHandler, MqttFeed


async def open_feed(stack: contextlib.AsyncExitStack, url: str | None, node: str, outbox_dir: Path,
                    on_command: CommandHandler | None) -> MqttFeed:
    """A started feed; the embedded broker (if any) and the feed are closed by `stack`."""
    if url:
        try:
            address = topics.parse_broker_url(url)
        except ValueError as exc:
            raise UserError(str(exc)) from None
    else:
        from monitor.broker import EmbeddedBroker

        broker = EmbeddedBroker()
        address = await broker.start()
        stack.push_async_callback(broker.stop)
    feed = MqttFeed(address, node, outbox_dir, on_command=on_command)
    await feed.start()
    stack.push_async_callback(feed.stop)
    return feed
