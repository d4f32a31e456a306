"""HTTP API of the ingest (aiohttp): `GET /api/streams` (JSON) and `GET /metrics` (Prometheus text).

`/api/streams` is paginated (`?offset=&limit=&state=live|ended`, default limit 100, at most
1000): an ended stream's view is computed once when it ends, a live one's per request (live
streams are bounded by the connection cap). Each page carries `server_clock_s`, the server's
monotonic clock when the page was built: a rate computed between two polls (media seconds per
second) divides by the server's clock, not the client's, which also counts request latency and
the client's own scheduling.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from rtmp.server import IngestServer


def _esc(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


DEFAULT_PAGE = 100
MAX_PAGE = 1000


class BadQuery(ValueError):
    """A query parameter of /api/streams that is not acceptable (answered with 400)."""


def _int_param(query: Mapping[str, str], name: str, default: int, lo: int, hi: int) -> int:
    raw = query.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadQuery(f"{name} must be an integer") from None
    if not lo <= value <= hi:
        raise BadQuery(f"{name} must be in {lo}..{hi}")
    return value


def _page(server: IngestServer, query: Mapping[str, str] | None) -> tuple[list[Any], int, int]:
    query = query or {}
    offset = _int_param(query, "offset", 0, 0, 1 << 31)
    limit = _int_param(query, "limit", DEFAULT_PAGE, 1, MAX_PAGE)
    state = query.get("state")
    if state not in (None, "live", "ended"):
        raise BadQuery("state must be live or ended")
    recs, total = server.registry.page(offset, limit, state)
    return recs, total, offset


def streams_payload(server: IngestServer, query: Mapping[str, str] | None = None) -> dict[str, Any]:
    recs, total, offset = _page(server, query)
    nxt = offset + len(recs)
    return {"streams": [rec.api_view() for rec in recs], "total": total, "offset": offset,
            "next_offset": nxt if nxt < total else None, "server_clock_s": time.monotonic()}


def streams_json(server: IngestServer, query: Mapping[str, str] | None = None) -> str:
    """streams_payload as JSON text, joined from each stream's (cached, when ended) JSON."""
    recs, total, offset = _page(server, query)
    nxt = offset + len(recs)
    tail = json.dumps({"total": total, "offset": offset, "next_offset": nxt if nxt < total else None,
                       "server_clock_s": time.monotonic()})
    return '{"streams": [' + ", ".join(rec.api_json() for rec in recs) + "], " + tail[1:]


def metrics_text(server: IngestServer) -> str:
    mt = server.metrics
    lines: list[str] = []

    def metric(name: str, kind: str, help_text: str, samples: list[tuple[str, float]]) -> None:
        lines.append(f"# HELP {name} {help_text}")
        lines.append(f"# TYPE {name} {kind}")
        for labels, value in samples:
            lines.append(f"{name}{labels} {value:g}" if isinstance(value, float) else f"{name}{labels} {value}")

    metric("tally_rtmp_connections_total", "counter", "TCP connections accepted.", [("", mt.connections_total)])
    metric("tally_rtmp_connections_active", "gauge", "Open RTMP connections.", [("", mt.connections_active)])
    metric("tally_rtmp_handshake_failures_total", "counter", "Handshakes failed or timed out.",
           [("", mt.handshake_failures_total)])
    metric("tally_rtmp_protocol_errors_total", "counter", "Sessions ended by a protocol error.",
           [("", mt.protocol_errors_total)])
    metric("tally_rtmp_internal_errors_total", "counter", "Sessions ended by an internal error.",
           [("", mt.internal_errors_total)])
    metric("tally_rtmp_publishes_total", "counter", "Accepted publishes.", [("", mt.publishes_total)])
    metric("tally_rtmp_publish_rejected_total", "counter", "Refused publishes.", [("", mt.publish_rejected_total)])
    metric("tally_rtmp_received_bytes_total", "counter", "Bytes received from publishers.",
           [("", mt.bytes_received_total)])
    metric("tally_rtmp_reads_total", "counter", "Socket reads (event-loop wakeups for input).",
           [("", mt.reads_total)])
    metric("tally_rtmp_event_callback_errors_total", "counter", "Exceptions raised by the event consumer.",
           [("", mt.callback_errors_total)])
    metric("tally_rtmp_connections_refused_total", "counter", "Connections refused at a cap (nobody to evict).",
           [("", mt.connections_refused_total)])
    metric("tally_rtmp_connections_evicted_total", "counter", "Non-publishing connections evicted at a cap.",
           [("", mt.connections_evicted_total)])
    metric("tally_rtmp_budget_drops_total", "counter", "Connections dropped for the server-wide byte budget.",
           [("", mt.budget_drops_total)])
    metric("tally_rtmp_pending_bytes", "gauge", "Bytes of partial messages held over all connections.",
           [("", server.ctx.budget.used_bytes)])
    metric("tally_rtmp_media_messages_total", "counter", "Audio/video messages handled.",
           [("", mt.media_messages_total)])
    # Histogram: message complete (last byte parsed) → handled (recorded, measured, events emitted).
    name = "tally_rtmp_message_delay_seconds"
    lines.append(f"# HELP {name} Delay from a media message's last byte arriving to its handling.")
    lines.append(f"# TYPE {name} histogram")
    cum = 0
    for bound, count in zip(mt.delay_buckets_s, mt.delay_counts, strict=False):
        cum += count
        lines.append(f'{name}_bucket{{le="{bound:g}"}} {cum}')
    cum += mt.delay_counts[-1]
    lines.append(f'{name}_bucket{{le="+Inf"}} {cum}')
    lines.append(f"{name}_sum {mt.delay_sum_s:.9f}")
    lines.append(f"{name}_count {cum}")
    live = list(server.registry.live.values())
    metric("tally_rtmp_streams_live", "gauge", "Streams being published.", [("", len(live))])
    per: dict[str, list[tuple[str, float]]] = {"bytes": [], "fps": [], "video_bps": [], "audio_bps": [],
                                               "kf": [], "dur": []}
    for rec in live:
        snap = rec.stats.snapshot()
        labels = f'{{app="{_esc(rec.app)}",key="{_esc(rec.key)}"}}'
        per["bytes"].append((labels, snap["bytes"]))
        per["dur"].append((labels, float(snap["duration_s"])))
        if snap["video"]["fps"] is not None:
            per["fps"].append((labels, float(snap["video"]["fps"])))
        if snap["video"]["bitrate_bps"] is not None:
            per["video_bps"].append((labels, float(snap["video"]["bitrate_bps"])))
        if snap["audio"]["bitrate_bps"] is not None:
            per["audio_bps"].append((labels, float(snap["audio"]["bitrate_bps"])))
        if snap["video"]["keyframe_interval_s"]["last"] is not None:
            per["kf"].append((labels, float(snap["video"]["keyframe_interval_s"]["last"])))
    metric("tally_rtmp_stream_bytes", "gauge", "Bytes received per live stream.", per["bytes"])
    metric("tally_rtmp_stream_duration_seconds", "gauge", "Media duration per live stream.", per["dur"])
    metric("tally_rtmp_stream_video_fps", "gauge", "Measured frame rate.", per["fps"])
    metric("tally_rtmp_stream_video_bitrate_bps", "gauge", "Measured video bitrate (recent GOPs).",
           per["video_bps"])
    metric("tally_rtmp_stream_audio_bitrate_bps", "gauge", "Measured audio bitrate.", per["audio_bps"])
    metric("tally_rtmp_stream_keyframe_interval_seconds", "gauge", "Last keyframe interval.", per["kf"])
    issues: list[tuple[str, float]] = []
    statuses: list[tuple[str, float]] = []
    for rec in live:
        for name, view in rec.health.view().items():
            base = f'app="{_esc(rec.app)}",key="{_esc(rec.key)}",profile="{_esc(name)}"'
            statuses.append((f'{{{base},status="{_esc(view["status"])}"}}', 1))
            for issue in view["issues"]:
                issues.append((f'{{{base},issue="{_esc(issue["type"])}",severity="{issue["severity"]}"}}', 1))
    metric("tally_stream_health", "gauge", "1 for each platform-profile issue a live stream has now.", issues)
    metric("tally_stream_health_status", "gauge", "1 for each live stream's status on each profile.", statuses)
    return "\n".join(lines) + "\n"


def build_app(server: IngestServer) -> web.Application:
    app = web.Application()

    async def streams(request: web.Request) -> web.Response:
        try:
            return web.Response(text=streams_json(server, request.query), content_type="application/json")
        except BadQuery as exc:
            return web.json_response({"error": str(exc)}, status=400)

    async def metrics(_request: web.Request) -> web.Response:
        return web.Response(text=metrics_text(server), content_type="text/plain", charset="utf-8",
                            headers={"X-Content-Format": "prometheus-0.0.4"})

    app.router.add_get("/api/streams", streams)
    app.router.add_get("/metrics", metrics)
    return app


class ApiServer:
    """Runs the aiohttp app on host:port next to an IngestServer."""

    def __init__(self, server: IngestServer, host: str = "127.0.0.1", port: int = 8181) -> None:
        self.server = server
        self.host = host
        self.port = port
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        self._runner = web.AppRunner(build_app(self.server), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        sockets = getattr(site._server, "sockets", None)  # port 0 → the real one
        if sockets:
            self.port = sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
