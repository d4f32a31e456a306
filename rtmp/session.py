"""One RTMP connection: handshake, chunk stream, commands, publishing, recording, measuring.

An `asyncio.Protocol`, so bytes go straight from `data_received` into the sans-IO parsers
without a reader task per connection. Every failure of a session is caught here and ends that
session only: `RtmpError` is the peer's fault (reported as `protocol_error`), anything else is
a bug in tally (reported as `internal_error`); neither propagates into the event loop.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtmp import amf0
from rtmp import messages as m
from rtmp.amf0 import UNDEFINED
from rtmp.budget import (
    DEFAULT_GLOBAL_PENDING_BYTES,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
    PendingBudget,
)
from rtmp.chunk import (
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_MAX_PENDING_BYTES,
    ChunkReader,
    ChunkWriter,
    RawMessage,
)
from rtmp.codecs import (
    parse_aac_config,
    parse_audio_tag,
    parse_avc_config,
    parse_hevc_config,
    parse_video_tag,
)
from rtmp.errors import ChunkError, CodecError, HandshakeError, RtmpError
from rtmp.flv import TAG_AUDIO, TAG_SCRIPT, TAG_VIDEO, FlvRecorder, recording_path, remove_recording
from rtmp.handshake import ServerHandshake
from rtmp.memory import TRIM_AFTER_HELD_BYTES, Trimmer
from rtmp.stats import CLAIM_KEYS
from rtmp.streams import PublishRefused, StreamRecord, StreamRegistry, name_problem
from verifiers.evidence.rtmp import RtmpConnect, RtmpDisconnect, RtmpMetadata, RtmpPublish, RtmpSequenceHeader

EventCallback = Callable[[str, dict[str, Any]], None]

SERVER_WINDOW_ACK_SIZE = 2_500_000
SERVER_CHUNK_SIZE = 4096


@dataclass
class SessionConfig:
    record_dir: Path | None = None
    handshake_timeout_s: float = 10.0
    #: Progress-based: a publisher that sends no media message for this long, or a connection
    #: that completes no message (or never starts publishing) for this long, is dropped. Bytes
    #: alone are not progress: 1 byte/s would otherwise hold a connection forever.
    idle_timeout_s: float = 30.0
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    #: Partial-message bytes one connection may hold (chunk.ChunkReader.held_bytes).
    max_pending_bytes: int = DEFAULT_MAX_PENDING_BYTES
    #: ... and all connections together (rtmp.budget.PendingBudget).
    global_pending_bytes: int = DEFAULT_GLOBAL_PENDING_BYTES
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    max_connections_per_address: int = DEFAULT_MAX_CONNECTIONS_PER_ADDRESS
    record_buffer_bytes: int = 256 * 1024
    #: While publishing, the socket's SO_RCVLOWAT is set to this much of the stream's measured
    #: bitrate, so the kernel wakes the loop about once per video frame instead of once per small
    #: audio message (publishers write one message at a time): 61 → 23 reads per stream-second
    #: at 6 Mbit/s, -24 % CPU. A byte count, not a timer: no syscall per read; EOF and resets
    #: still wake at once; when no byte has come for LOWAT_RESET_S (a publisher that stopped
    #: sending media, e.g. before deleteStream) the tick puts it back to 1 so nothing waits longer
    #: than one tick. 0 = off.
    read_lowat_s: float = 0.010
    #: the recording is also flushed once its buffer spans this much media time (live probes tail it)
    record_max_delay_ms: int | None = 250


@dataclass
class IngestMetrics:
    """Counters for /metrics; the delay histogram is message-complete → handled (events emitted)."""

    connections_total: int = 0
    connections_active: int = 0
    handshake_failures_total: int = 0
    protocol_errors_total: int = 0
    internal_errors_total: int = 0
    publishes_total: int = 0
    publish_rejected_total: int = 0
    bytes_received_total: int = 0
    reads_total: int = 0            # data_received calls: the event-loop wakeups spent on input
    callback_errors_total: int = 0  # exceptions raised by the on_event consumer (swallowed)
    connections_refused_total: int = 0   # over a connection cap with nobody to evict
    connections_evicted_total: int = 0   # non-publishing connections dropped to make room
    budget_drops_total: int = 0          # connections dropped for the server-wide byte budget
    media_messages_total: int = 0
    delay_buckets_s: tuple[float, ...] = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1)
    delay_counts: list[int] = field(default_factory=lambda: [0] * 11)
    delay_sum_s: float = 0.0
    #: Raw recent delays (ns) for percentiles in benchmarks; bounded.
    recent_delays_ns: list[int] = field(default_factory=list)
    keep_recent: int = 0

    def observe_delay(self, ns: int) -> None:
        s = ns / 1e9
        self.delay_sum_s += s
        self.delay_counts[bisect.bisect_left(self.delay_buckets_s, s)] += 1
        if self.keep_recent and len(self.recent_delays_ns) < self.keep_recent:
            self.recent_delays_ns.append(ns)


@dataclass
class SessionContext:
    """What every session shares: config, the registry, the event callback, metrics."""

    config: SessionConfig
    registry: StreamRegistry
    emit: EventCallback
    metrics: IngestMetrics = field(default_factory=IngestMetrics)
    sessions: set[RtmpSession] = field(default_factory=set)
    #: open sessions per peer address, oldest first (dicts keep insertion order)
    by_address: dict[str, dict[RtmpSession, None]] = field(default_factory=dict)
    budget: PendingBudget[RtmpSession] = field(init=False)
    trimmer: Trimmer = field(default_factory=Trimmer)

    def __post_init__(self) -> None:
        self.budget = PendingBudget(self.config.global_pending_bytes)

    def admit(self, session: RtmpSession, address: str) -> bool:
        """Apply the connection caps for a new session; False: refuse it.

        At a cap the oldest non-publishing session (of that address for the per-address cap)
        is evicted instead, so a thousand half-open handshakes cannot lock a publisher out.
        """
        cfg = self.config
        peers = self.by_address.get(address, {})
        if len(peers) >= cfg.max_connections_per_address and not self._evict(peers):
            return False
        if len(self.sessions) >= cfg.max_connections and not self._evict(dict.fromkeys(self.sessions_by_age())):
            return False
        self.sessions.add(session)
        self.by_address.setdefault(address, {})[session] = None
        return True

    def sessions_by_age(self) -> list[RtmpSession]:
        return sorted(self.sessions, key=lambda s: s.connected_mono)

    def _evict(self, candidates: dict[RtmpSession, None]) -> bool:
        for victim in candidates:
            if victim.stream is None and not victim.closed:
                self.metrics.connections_evicted_total += 1
                victim._fail("protocol_error", "evicted: connection cap reached and this connection "
                             "was not publishing", reason="evicted")
                self.forget(victim)
                return True
        return False

    def forget(self, session: RtmpSession) -> None:
        self.sessions.discard(session)
        peers = self.by_address.get(session.address)
        if peers is not None:
            peers.pop(session, None)
            if not peers:
                del self.by_address[session.address]
        self.budget.forget(session)
        if session.peak_held_bytes >= TRIM_AFTER_HELD_BYTES:
            self.trimmer.request()


def _public_url(url: str) -> str:
    """tcUrl without credentials (`user:pass@`) or query (tokens): safe for events and logs."""
    url = url[:500].split("?", 1)[0]
    scheme, sep, rest = url.partition("://")
    if sep and "@" in rest.split("/", 1)[0]:
        rest = rest.split("@", 1)[1]
    return f"{scheme}{sep}{rest}"


#: A publishing socket with nothing new for this long gets SO_RCVLOWAT 1 back on the next tick.
LOWAT_RESET_S = 0.2

#: Size of the per-connection receive buffer handed to the transport (recv_into, no allocation).
READ_BUFFER_BYTES = 64 * 1024


class RtmpSession(asyncio.BufferedProtocol):
    """A BufferedProtocol: the loop reads into one preallocated buffer per connection.

    With a plain Protocol, asyncio allocates a fresh 256 KiB bytes object for every recv; at
    tens of reads per second per stream that allocation (and its page faults) cost more CPU
    than parsing the RTMP itself.
    """

    def __init__(self, ctx: SessionContext) -> None:
        self.ctx = ctx
        self._rbuf = memoryview(bytearray(READ_BUFFER_BYTES))
        self.transport: asyncio.Transport | None = None
        self.client = "?"
        self.handshake = ServerHandshake()
        self.reader = ChunkReader(max_message_bytes=ctx.config.max_message_bytes,
                                  max_pending_bytes=ctx.config.max_pending_bytes)
        self.writer = ChunkWriter()
        self.app: str | None = None
        self.stream: StreamRecord | None = None
        self.publish_stream_id: int | None = None
        self.recorder: FlvRecorder | None = None
        self._next_stream_id = 1
        self._ack_window = SERVER_WINDOW_ACK_SIZE
        self._last_ack = 0
        self._hs_timer: asyncio.TimerHandle | None = None
        self.last_data_mono = time.monotonic()
        self.connected_mono = self.last_data_mono
        #: last *progress* (a complete message; once publishing, a media message): idle check
        self.last_progress_mono = self.last_data_mono
        self.address = "?"
        self.peak_held_bytes = 0
        self._charged = 0  # what the budget was last told this session holds
        self._lowat = 1  # the socket's SO_RCVLOWAT (1 = the kernel default)
        self.closed = False
        self._close_reason: str | None = None
        self._media_warnings = 0

    # --- asyncio.Protocol ----------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        peer = transport.get_extra_info("peername")
        self.client = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        self.address = str(peer[0]) if isinstance(peer, tuple) else str(peer)
        self.ctx.metrics.connections_total += 1
        if not self.ctx.admit(self, self.address):
            self.ctx.metrics.connections_refused_total += 1
            self.closed = True
            self._close_reason = "refused"
            self.ctx.emit("connection_refused", {"client": self.client, "reason": "connection cap reached",
                                                 "active": len(self.ctx.sessions)})
            transport.abort()
            return
        self.ctx.metrics.connections_active += 1
        loop = asyncio.get_running_loop()
        self._hs_timer = loop.call_later(self.ctx.config.handshake_timeout_s, self._handshake_timeout)

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._rbuf

    def buffer_updated(self, nbytes: int) -> None:
        self.data_received(self._rbuf[:nbytes])

    def data_received(self, data: bytes | memoryview) -> None:
        t0 = time.perf_counter_ns()
        self.last_data_mono = time.monotonic()
        metrics = self.ctx.metrics
        metrics.bytes_received_total += len(data)
        metrics.reads_total += 1
        try:
            if not self.handshake.done:
                reply = self.handshake.feed(bytes(data))
                if reply:
                    self._write(reply)
                if not self.handshake.done:
                    return
                if self._hs_timer:
                    self._hs_timer.cancel()
                data = self.handshake.leftover
            try:
                msgs = self.reader.feed(data)
            except ChunkError as exc:
                for msg in exc.messages:  # what arrived intact before the violation still counts
                    self._dispatch(msg, t0)
                    if self.closed:
                        return
                raise
            for msg in msgs:
                self._dispatch(msg, t0)
                if self.closed:
                    return
            if msgs and self.stream is None:
                self.last_progress_mono = self.last_data_mono
            self._charge_budget()
            self._maybe_ack()
        except HandshakeError as exc:
            self.ctx.metrics.handshake_failures_total += 1
            self._fail("protocol_error", f"handshake: {exc}")
        except RtmpError as exc:
            self._fail("protocol_error", str(exc))
        except Exception as exc:  # a bug in tally must not leak into other sessions
            self._fail("internal_error", f"{type(exc).__name__}: {exc}")

    def _charge_budget(self) -> None:
        """Report what the reader holds to the server-wide budget; over it, drop the biggest holder."""
        held = self.reader.held_bytes
        if not held and not self._charged:
            return  # nothing held before or now: the common case between messages
        self._charged = held
        if held > self.peak_held_bytes:
            self.peak_held_bytes = held
        victim = self.ctx.budget.update(self, held)
        if victim is None:
            return
        self.ctx.metrics.budget_drops_total += 1
        error = (f"server-wide budget of {self.ctx.budget.limit_bytes} bytes for partial messages exceeded; "
                 f"this connection held {self.ctx.budget.held_by(victim)}")
        if victim is self:
            raise ChunkError(error)
        victim._fail("protocol_error", error, reason="budget_exceeded")
        # Its buffers go now, not when the transport reports the close on a later iteration.
        victim.reader.release()
        self.ctx.forget(victim)

    def eof_received(self) -> bool | None:
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        if self._hs_timer:
            self._hs_timer.cancel()
        if self._close_reason == "refused":
            return  # never admitted: nothing was counted as active
        reason = self._close_reason or ("closed" if exc is None else "reset")
        self._end_publish(reason)
        if not self.closed:
            self.closed = True
        self.reader.release()
        self.ctx.forget(self)
        self.ctx.metrics.connections_active -= 1
        self.ctx.emit("disconnect", RtmpDisconnect(self.client, self.app, reason, self.reader.bytes_received).to_payload())

    # --- lifecycle helpers ------------------------------------------------------------------------
    def _handshake_timeout(self) -> None:
        if not self.handshake.done and not self.closed:
            self.ctx.metrics.handshake_failures_total += 1
            self._fail("protocol_error", f"handshake not completed within {self.ctx.config.handshake_timeout_s} s",
                       reason="handshake_timeout")

    def tune_read_lowat(self, now_mono: float) -> None:
        """Set SO_RCVLOWAT from the stream's measured bitrate (server tick, publishing only)."""
        share_s = self.ctx.config.read_lowat_s
        rec = self.stream
        if not share_s or self.transport is None or self.closed:
            return
        if rec is None or now_mono - self.last_data_mono > LOWAT_RESET_S:
            want = 1  # not publishing, or quiet: whatever is queued must be read now
        else:
            bps = (rec.stats.video.window_bps() or 0) + (rec.stats.audio.window_bps() or 0)
            want = max(1, min(65536, int(bps / 8 * share_s)))
        if want == self._lowat or (want > 1 and abs(want - self._lowat) <= self._lowat // 4):
            return
        sock = self.transport.get_extra_info("socket")
        if sock is None:
            return
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, want)
        except OSError:
            self.ctx.config.read_lowat_s = 0.0  # not supported here: stop trying
            return
        self._lowat = want

    def check_idle(self, now_mono: float) -> None:
        """Called by the server's 1 Hz tick: drop connections that make no progress.

        Progress is a complete message (once publishing: a media message), not a byte, so a peer
        trickling 1 byte/s, or pinging without ever publishing, is dropped like a silent one.
        """
        if not self.handshake.done or self.closed:
            return
        limit_s = self.ctx.config.idle_timeout_s
        if now_mono - self.last_progress_mono > limit_s:
            what = "media message" if self.stream is not None else "complete message"
            self._fail("protocol_error", f"no {what} for {limit_s} s", reason="idle_timeout")
        elif self.stream is None and now_mono - self.connected_mono > 2 * limit_s:
            self._fail("protocol_error", f"connected {2 * limit_s:g} s without publishing", reason="idle_timeout")

    def _fail(self, kind: str, error: str, reason: str | None = None) -> None:
        if self.closed:
            return
        if kind == "internal_error":
            self.ctx.metrics.internal_errors_total += 1
        else:
            self.ctx.metrics.protocol_errors_total += 1
        stage = "handshake" if not self.handshake.done else ("publishing" if self.stream else "connected")
        self.ctx.emit(kind, {"client": self.client, "app": self.app, "stage": stage, "error": error[:500]})
        self.close(reason or kind, abort=True)

    def close(self, reason: str, abort: bool = False) -> None:
        """End this session: finish the recording first, then drop the connection."""
        if self.closed:
            return
        self.closed = True
        self._close_reason = reason
        self._end_publish(reason)
        if self.transport is not None:
            if abort:
                self.transport.abort()
            else:
                self.transport.close()

    def drop(self, reason: str) -> None:
        """Used by a newer publisher of the same key to push this one out."""
        self.close(reason, abort=True)

    def _end_publish(self, reason: str) -> None:
        rec = self.stream
        if rec is None:
            return
        self.stream = None
        self.publish_stream_id = None
        recording: dict[str, Any] | None = None
        if self.recorder is not None:
            try:
                recording = self.recorder.close()
                if not self.recorder.media_tags:
                    # Header-only FLVs (a replaced or aborted publish) are files ffprobe rejects.
                    recording = {**recording, "removed": "no media"}
                    remove_recording(self.recorder.path, self.ctx.config.record_dir)
                    rec.recording = None
            except OSError as exc:
                self.ctx.emit("recording_error", {"app": rec.app, "key": rec.key, "error": str(exc)})
            self.recorder = None
        if self.ctx.registry.end(rec, reason):
            self.ctx.emit("unpublish", {"app": rec.app, "key": rec.key, "client": self.client, "reason": reason,
                                        "recording": recording, "stats": rec.final_snapshot()})

    def _write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def _send(self, msg: RawMessage) -> None:
        self._write(self.writer.write(msg))

    def _maybe_ack(self) -> None:
        received = self.reader.bytes_received
        if received - self._last_ack >= self._ack_window:
            self._last_ack = received
            self._send(m.control(m.ACKNOWLEDGEMENT, received & 0xFFFFFFFF))

    # --- messages ---------------------------------------------------------------------------------
    def _dispatch(self, msg: RawMessage, t0_ns: int) -> None:
        t = msg.type_id
        if t == m.VIDEO or t == m.AUDIO:
            if self.stream is not None:
                self.last_progress_mono = self.last_data_mono
            try:
                self._on_media(msg)
            except CodecError as exc:
                self._on_bad_media(msg, exc)
            self.ctx.metrics.media_messages_total += 1
            self.ctx.metrics.observe_delay(time.perf_counter_ns() - t0_ns)
        elif t in (m.COMMAND_AMF0, m.COMMAND_AMF3):
            self._on_command(m.decode_command(msg))
        elif t in (m.DATA_AMF0, m.DATA_AMF3):
            self._on_data(msg)
        elif t == m.WINDOW_ACK_SIZE:
            size = m.decode_control(msg).values[0]
            if size > 0:
                self._ack_window = size
        elif t == m.USER_CONTROL:
            ctl = m.decode_control(msg)
            if ctl.values[0] == m.USER_PING_REQUEST and len(ctl.values) > 1:
                self._send(m.user_control(m.USER_PING_RESPONSE, ctl.values[1]))
        elif t == m.AGGREGATE:
            for sub in m.split_aggregate(msg):
                self._dispatch(sub, t0_ns)
        # SetChunkSize/Abort act inside the reader; Acknowledgement, SetPeerBandwidth and shared
        # objects need nothing from an ingest.

    def _on_command(self, cmd: m.Command) -> None:
        name = cmd.name
        if name == "connect":
            self._on_connect(cmd)
        elif name == "createStream":
            sid = self._next_stream_id
            self._next_stream_id += 1
            self._send(m.command("_result", cmd.transaction_id, None, float(sid)))
        elif name == "publish":
            self._on_publish(cmd)
        elif name in ("deleteStream", "closeStream"):
            self._end_publish("deleteStream")
        elif name == "FCUnpublish":
            if cmd.transaction_id:
                self._send(m.command("_result", cmd.transaction_id, None, UNDEFINED))
            self._end_publish("FCUnpublish")
        elif name == "play":
            self._send(m.status("NetStream.Play.Failed", "this server only ingests", level="error",
                                stream_id=cmd.stream_id))
        elif cmd.transaction_id:
            # releaseStream, FCPublish, _checkbw, getStreamLength...: publishers wait for an answer.
            self._send(m.command("_result", cmd.transaction_id, None, UNDEFINED))

    def _on_connect(self, cmd: m.Command) -> None:
        obj = cmd.command_object if isinstance(cmd.command_object, dict) else {}
        app = str(obj.get("app", "")).split("?", 1)[0].strip("/")
        problem = name_problem(app)
        if problem:
            self._send(m.command("_error", cmd.transaction_id, None,
                                 {"level": "error", "code": "NetConnection.Connect.Rejected",
                                  "description": f"bad app name: {problem}"}))
            self.ctx.emit("connect_rejected", {"client": self.client, "app": app[:200], "reason": problem})
            self.close("connect_rejected")
            return
        self.app = app
        self._send(m.control(m.WINDOW_ACK_SIZE, SERVER_WINDOW_ACK_SIZE))
        self._send(m.control(m.SET_PEER_BANDWIDTH, SERVER_WINDOW_ACK_SIZE, 2))
        self._send(m.control(m.SET_CHUNK_SIZE, SERVER_CHUNK_SIZE))
        self.writer.chunk_size = SERVER_CHUNK_SIZE
        encoding = obj.get("objectEncoding", 0.0)
        self._send(m.command("_result", cmd.transaction_id,
                             {"fmsVer": "FMS/3,5,7,7009", "capabilities": 31.0, "mode": 1.0},
                             {"level": "status", "code": "NetConnection.Connect.Success",
                              "description": "Connection succeeded.", "objectEncoding": encoding}))
        self.ctx.emit("connect", RtmpConnect(self.client, app, _public_url(str(obj.get("tcUrl", ""))),
                                             str(obj.get("flashVer", ""))[:200], str(obj.get("type", ""))[:50]).to_payload())

    def _on_publish(self, cmd: m.Command) -> None:
        raw_key = cmd.args[0] if cmd.args and isinstance(cmd.args[0], str) else ""
        sid = cmd.stream_id
        if self.app is None:
            self._refuse(sid, "NetStream.Publish.BadName", "publish before connect", raw_key)
            return
        if self.stream is not None:
            self._refuse(sid, "NetStream.Publish.BadName", "already publishing on this connection", raw_key)
            return
        try:
            key = self.ctx.registry.check(self.app, raw_key)
        except PublishRefused as exc:
            self._refuse(sid, exc.code, exc.reason, raw_key)
            return
        stale = self.ctx.registry.live.get((self.app, key))
        if stale is not None:
            self.ctx.emit("publish_replaced", {"app": self.app, "key": key, "old_client": stale.client,
                                               "new_client": self.client})
            if stale.drop is not None:
                stale.drop("replaced")
        rec = self.ctx.registry.start(self.app, key, self.client)
        rec.drop = self.drop
        self.stream = rec
        self.publish_stream_id = sid
        self.ctx.metrics.publishes_total += 1
        if self.ctx.config.record_dir is not None:
            try:
                path = recording_path(self.ctx.config.record_dir, self.app, key, rec.started_at)
                self.recorder = FlvRecorder(path, self.ctx.config.record_buffer_bytes,
                                            self.ctx.config.record_max_delay_ms)
                rec.recording = str(path)
            except (OSError, ValueError) as exc:
                self.ctx.emit("recording_error", {"app": self.app, "key": key, "error": str(exc)})
        self._send(m.user_control(m.USER_STREAM_BEGIN, sid))
        self._send(m.status("NetStream.Publish.Start", f"{key} is now published.", stream_id=sid,
                            details=key))
        self.ctx.emit("publish", RtmpPublish(self.app, key, self.client,
                                             str(cmd.args[1])[:20] if len(cmd.args) > 1 else None,
                                             sid, rec.recording).to_payload())

    def _refuse(self, sid: int, code: str, reason: str, raw_key: str) -> None:
        self.ctx.metrics.publish_rejected_total += 1
        self._send(m.status(code, reason, level="error", stream_id=sid))
        self.ctx.emit("publish_rejected", {"client": self.client, "app": self.app, "key": raw_key.split("?", 1)[0][:200],
                                           "code": code, "reason": reason})
        self.close("publish_rejected")

    def _on_data(self, msg: RawMessage) -> None:
        rec = self.stream
        if rec is None:
            return
        try:
            data = m.decode_data(msg)
        except RtmpError as exc:
            # Junk in one data message does not justify dropping a live stream.
            self.ctx.emit("protocol_warning", {"client": self.client, "app": rec.app, "key": rec.key,
                                               "error": str(exc)})
            return
        values = data.values
        if values and values[0] == "@setDataFrame":
            values = values[1:]
        if len(values) >= 2 and values[0] == "onMetaData" and isinstance(values[1], dict):
            meta = values[1]
            rec.stats.metadata_claimed = {k: m.to_jsonable(meta[k]) for k in CLAIM_KEYS if k in meta}
            if self.recorder is not None:
                self._record(lambda r: r.write_metadata(dict(meta), msg.timestamp_ms))
            rec.tap_tag(TAG_SCRIPT, 0, amf0.encode("onMetaData", amf0.EcmaArray(meta)), "meta")
            self.ctx.emit("metadata", RtmpMetadata(rec.app, rec.key, m.to_jsonable(meta)).to_payload())
        elif self.recorder is not None:
            body = msg.body[1:] if msg.type_id == m.DATA_AMF3 else msg.body
            self._record(lambda r: r.write_data(msg.timestamp_ms, body))

    def _record(self, action: Callable[[FlvRecorder], None]) -> None:
        rec_file = self.recorder
        if rec_file is None:
            return
        try:
            action(rec_file)
        except OSError as exc:
            self._recording_failed(rec_file, exc)

    def _recording_failed(self, rec_file: FlvRecorder, exc: OSError) -> None:
        """A write failed (disk full, ...): stop recording this stream, keep measuring it."""
        self.recorder = None
        with contextlib.suppress(OSError):
            rec_file.close()
        rec = self.stream
        self.ctx.emit("recording_error", {"app": rec.app if rec else None, "key": rec.key if rec else None,
                                          "error": str(exc)})

    def _on_media(self, msg: RawMessage) -> None:
        rec = self.stream
        if rec is None or msg.stream_id != self.publish_stream_id:
            return
        body = msg.body
        stats = rec.stats
        stats.add_bytes(len(body))
        if not body:
            return
        ts = msg.timestamp_ms
        if msg.type_id == m.VIDEO:
            vt = parse_video_tag(body)
            stats.video_codec = vt.codec
            if vt.sequence_header:
                info: dict[str, Any] = {}
                if vt.codec in ("h264", "hevc"):
                    record = body[vt.payload_offset:]
                    cfg = parse_avc_config(record) if vt.codec == "h264" else parse_hevc_config(record)
                    info = {"profile": cfg.profile, "level": cfg.level, "width": cfg.width_px,
                            "height": cfg.height_px}
                stats.video_config = info
                self.ctx.emit("sequence_header", RtmpSequenceHeader(rec.app, rec.key, "video", vt.codec,
                                                                    enhanced=vt.enhanced, **info).to_payload())
            elif not vt.end_of_sequence:
                stats.on_video_frame(ts, len(body) - vt.payload_offset, vt.keyframe)
            tag_type = TAG_VIDEO
            seq_init = "video" if vt.sequence_header else None
        else:
            at = parse_audio_tag(body)
            stats.audio_codec = at.codec
            if at.sequence_header:
                ainfo: dict[str, Any] = {}
                if at.codec == "aac":
                    acfg = parse_aac_config(body[at.payload_offset:])
                    ainfo = {"object_type": acfg.object_type, "profile": acfg.object_name,
                             "sample_rate_hz": acfg.sample_rate_hz, "channels": acfg.channels, "sbr": acfg.sbr}
                stats.audio_config = ainfo
                self.ctx.emit("sequence_header", RtmpSequenceHeader(rec.app, rec.key, "audio", at.codec,
                                                                    **ainfo).to_payload())
            else:
                if not stats.audio_config and at.codec != "aac":
                    stats.audio_config = {"sample_rate_hz": at.flv_rate_hz, "channels": at.flv_channels}
                stats.on_audio_frame(ts, len(body) - at.payload_offset)
            tag_type = TAG_AUDIO
            seq_init = "audio" if at.sequence_header else None
        recorder = self.recorder
        if recorder is not None:
            # Inline (not _record with a lambda): this runs for every media message.
            try:
                recorder.write_media(tag_type, ts, body)
            except OSError as exc:
                self._recording_failed(recorder, exc)
        if rec.taps or seq_init is not None:
            rec.tap_tag(tag_type, ts, body, seq_init)

    def _on_bad_media(self, msg: RawMessage, exc: CodecError) -> None:
        """A media message whose header/config does not parse: warn (a few times), still record it."""
        rec = self.stream
        if rec is None:
            return
        self._media_warnings += 1
        if self._media_warnings <= 5:
            self.ctx.emit("protocol_warning", {"client": self.client, "app": rec.app, "key": rec.key,
                                               "error": f"media message at {msg.timestamp_ms} ms: {exc}"})
        if self.recorder is not None and msg.body:
            self._record(lambda r: r.write_media(msg.type_id, msg.timestamp_ms, msg.body))
