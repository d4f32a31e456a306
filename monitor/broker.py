"""An embedded MQTT broker (amqtt) for when the user names none: the feed always has somewhere to go.

Bound to 127.0.0.1 on a free port, anonymous access (nothing leaves the machine), no $SYS
publishing and no packet logging (they would only add noise and CPU on a shared host).
"""

from __future__ import annotations

import contextlib
import logging
import socket

from monitor.mqtt.topics import BrokerAddress


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on right now (tiny race until the broker binds it; fine on loopback)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class EmbeddedBroker:
    """amqtt broker in this process's event loop; `start()` returns the address clients use."""

    def __init__(self, host: str = "127.0.0.1", port: int | None = None) -> None:
        self.host = host
        self.port = port
        self._broker = None

    async def start(self) -> BrokerAddress:
        from amqtt.broker import Broker  # imported late: amqtt pulls in a lot and is only needed here

        for name in ("amqtt", "transitions"):
            logging.getLogger(name).setLevel(logging.WARNING)
        port = self.port or free_port(self.host)
        config = {
            "listeners": {"default": {"type": "tcp", "bind": f"{self.host}:{port}"}},
            "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}},
        }
        broker = Broker(config)
        await broker.start()
        self._broker = broker
        self.port = port
        return BrokerAddress(self.host, port)

    async def stop(self) -> None:
        if self._broker is not None:
            with contextlib.suppress(Exception):  # amqtt can complain about clients mid-disconnect
                await self._broker.shutdown()
            self._broker = None
