"""Opening the MQTT feed for `tally run` and `tally serve`: the named broker, or an embedded one."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

from monitor.cli import UserError
from monitor.mqtt import topics
from monitor.mqtt.feed import CommandHandler, MqttFeed


async def open_feed(stack: contextlib.AsyncExitStack, url: str | None, node: str, outbox_dir: Path,
                    on_command: CommandHandler | None, remove_when_drained: bool = False) -> MqttFeed:
    """A started feed; the embedded broker (if any) and the feed are closed by `stack`.

    `remove_when_drained`: delete the outbox folder at the end if the broker got everything (a
    run's outbox would otherwise double its bundle's size for nothing)."""
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

    async def close() -> None:
        await feed.stop()
        if remove_when_drained and feed.outbox.pending_bytes == 0:
            shutil.rmtree(outbox_dir, ignore_errors=True)

    stack.push_async_callback(close)
    return feed


def check_obs_proxy_port(port: int | None, obs_url: str | None) -> None:
    """`--obs-proxy-port` for run and serve alike: a port in 1..65535, and an OBS to relay to."""
    if port is not None and not (0 < port < 65536 and obs_url):
        raise UserError("--obs-proxy-port needs --obs (the OBS it relays to) and a port in 1..65535")
