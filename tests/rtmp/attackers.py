"""Hostile RTMP publishers (issue 20), shared by the abuse tests and bench/rtmp_abuse.py.

Each is a RawClient that gets as far as `publish` and then sends what a real encoder never does.
The wire bytes are built with byte-string repetition, so the attacker costs the test process
almost nothing and the server's cost is what gets measured.
"""

from __future__ import annotations

import asyncio
import contextlib
import os

import psutil

from rtmp import messages as m
from tests.rtmp.helpers import RawClient

MIB = 1024 * 1024
#: RTMP's 24-bit length field: the biggest message a peer can declare.
MAX_DECLARED = 16 * MIB - 1


def _type0(csid: int, type_id: int, length: int, ts_ms: int = 0, stream_id: int = 1) -> bytes:
    assert 2 <= csid < 64
    return (bytes([csid]) + ts_ms.to_bytes(3, "big") + length.to_bytes(3, "big") + bytes([type_id])
            + stream_id.to_bytes(4, "little"))


def tiny_chunk_message(csid: int, length: int = MAX_DECLARED, chunk_size: int = 2, hold_back: int = 1) -> tuple[bytes, bytes]:
    """A video message of `length` bytes cut into `chunk_size` chunks: (all but the last
    `hold_back` chunks, the rest). Sending only the first part leaves it pending on the server."""
    first = b"\x17\x01"[:chunk_size] + bytes(max(0, chunk_size - 2))
    nchunks = -(-length // chunk_size)
    head = _type0(csid, m.VIDEO, length) + first
    cont = bytes([0xC0 | csid]) + bytes(chunk_size)
    full = nchunks - 1 - hold_back
    tail_len = length - chunk_size * (nchunks - 1)
    rest = cont * (hold_back - 1) + bytes([0xC0 | csid]) + bytes(tail_len)
    return head + cont * full, rest


class TinyChunkAttacker:
    """Chunk size 2 and two 16 MiB messages on two chunk streams, held one chunk short."""

    def __init__(self, port: int, key: str) -> None:
        self.port, self.key = port, key
        self.client: RawClient | None = None
        self.cut = False

    async def hold(self) -> None:
        c = self.client = await RawClient.connect(self.port)
        await c.start_publishing("live", self.key)
        c.set_chunk_size(2)
        self._rests = []
        for csid in (6, 7):
            body, rest = tiny_chunk_message(csid)
            self._rests.append(rest)
            c.send_raw(body)
            try:
                await c.w.drain()
            except ConnectionError:
                self.cut = True
                return

    async def complete(self) -> None:
        if self.client is None or self.cut:
            return
        for rest in self._rests:
            self.client.send_raw(rest)
        with contextlib.suppress(ConnectionError):
            await self.client.w.drain()

    async def leave(self) -> None:
        if self.client is not None:
            self.client.w.transport.abort()


class TinyAudioFlood:
    """2-byte AAC messages sharing one timestamp (type-3 headers repeating a delta of 0),
    paced in writes of `per_write` messages so a per-read limit alone does not stop it."""

    def __init__(self, port: int, key: str, per_write: int = 900) -> None:
        self.port, self.key, self.per_write = port, key, per_write
        self.client: RawClient | None = None
        self.sent = 0
        self.cut = False

    async def run(self, seconds: float) -> None:
        c = self.client = await RawClient.connect(self.port)
        await c.start_publishing("live", self.key)
        c.send_raw(_type0(8, m.AUDIO, 2, ts_ms=0) + b"\xaf\x01")
        burst = b"\xc8\xaf\x01" * self.per_write
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        try:
            while loop.time() < end:
                c.send_raw(burst)
                await c.w.drain()
                self.sent += self.per_write
                await asyncio.sleep(0.002)
                if c.r.at_eof() or c.w.transport.is_closing():
                    self.cut = True
                    return
        except ConnectionError:
            self.cut = True

    async def leave(self) -> None:
        if self.client is not None:
            self.client.w.transport.abort()


def rss_bytes(pid: int | None = None) -> int:
    return int(psutil.Process(pid or os.getpid()).memory_info().rss)
