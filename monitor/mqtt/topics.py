"""MQTT topic names, in one place so docs/mqtt.md, the feed and the tests cannot drift apart.

    tally/<node>/status                         retained; last will says "offline"
    tally/<node>/cmd                            control: start / done / abort (JSON)
    tally/<node>/control/error                  a rejected control message (an Event line)
    tally/<node>/feed/<kind>                    the feed's own incidents: feed_error, outbox_skipped, reconnected
    tally/<node>/run/<run>/<source>/<kind>      every event of a run (the bundle's event line)
    tally/<node>/run/<run>/score                the final report.json of a run (retained)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

ROOT = "tally"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def level(text: str) -> str:
    """One topic level: MQTT wildcards, separators and odd characters become '_' (never empty)."""
    return _UNSAFE.sub("_", text) or "_"


def status(node: str) -> str:
    return f"{ROOT}/{level(node)}/status"


def command(node: str) -> str:
    return f"{ROOT}/{level(node)}/cmd"


def control_error(node: str) -> str:
    return f"{ROOT}/{level(node)}/control/error"


def feed_event(node: str, kind: str) -> str:
    return f"{ROOT}/{level(node)}/feed/{level(kind)}"


def event(node: str, run_id: str, source: str, kind: str) -> str:
    return f"{ROOT}/{level(node)}/run/{level(run_id)}/{level(source)}/{level(kind)}"


def run_events(node: str, run_id: str = "+") -> str:
    """Subscription filter for every event of one run (or of all runs with the default)."""
    run = run_id if run_id == "+" else level(run_id)
    return f"{ROOT}/{level(node)}/run/{run}/#"


def score(node: str, run_id: str) -> str:
    return f"{ROOT}/{level(node)}/run/{level(run_id)}/score"


@dataclass(frozen=True)
class BrokerAddress:
    host: str
    port: int
    username: str | None = None
    password: str | None = None

    def __str__(self) -> str:  # never shows the password
        user = f"{self.username}@" if self.username else ""
        return f"mqtt://{user}{self.host}:{self.port}"


def parse_broker_url(url: str) -> BrokerAddress:
    """`mqtt://[user[:pass]@]host[:port]` (or `host:port`); raises ValueError with a readable message."""
    text = url if "://" in url else f"mqtt://{url}"
    parts = urlsplit(text)
    if parts.scheme not in ("mqtt", "tcp"):
        raise ValueError(f"broker URL {url!r}: scheme must be mqtt:// (TLS and websockets are not supported)")
    if not parts.hostname:
        raise ValueError(f"broker URL {url!r}: no host")
    try:
        port = parts.port or 1883
    except ValueError:
        raise ValueError(f"broker URL {url!r}: bad port") from None
    return BrokerAddress(parts.hostname, port, parts.username, parts.password)
