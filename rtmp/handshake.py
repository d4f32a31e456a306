"""RTMP server handshake as a sans-IO state machine (bytes in, bytes out).

Only the simple handshake is needed: OBS sends zero version bytes in C1, and ffmpeg sends a
digest-signed C1 but never verifies the server's reply when publishing, so echoing C1 as S2 is
accepted by every publisher we target. Keeping it sans-IO makes it fuzzable without sockets;
the session applies the timeout.
"""

from __future__ import annotations

import os
import struct
import time
from dataclasses import dataclass, field

from rtmp.errors import HandshakeError

RTMP_VERSION = 3
HANDSHAKE_SIZE = 1536


@dataclass
class ServerHandshake:
    """Feed client bytes; collect what to send; `done` once C2 has arrived.

    Bytes past C2 (the client's first chunks, often in the same TCP segment) are kept in
    `leftover` for the chunk reader.
    """

    _buf: bytearray = field(default_factory=bytearray)
    _state: str = "c0c1"
    done: bool = False
    leftover: bytes = b""
    client_version: int | None = None
    client_epoch_ms: int | None = None

    def feed(self, data: bytes) -> bytes:
        """Consume client bytes; return bytes to send now (S0+S1+S2 once C0+C1 are complete)."""
        if self.done:
            raise HandshakeError("handshake already complete")
        self._buf += data
        out = b""
        if self._state == "c0c1":
            if self._buf and self._buf[0] != RTMP_VERSION:
                # 6 is RTMPE (encrypted); nothing else is a real client.
                raise HandshakeError(f"unsupported RTMP version {self._buf[0]}")
            if len(self._buf) < 1 + HANDSHAKE_SIZE:
                return out
            c1 = bytes(self._buf[1:1 + HANDSHAKE_SIZE])
            del self._buf[:1 + HANDSHAKE_SIZE]
            self.client_version = RTMP_VERSION
            self.client_epoch_ms = struct.unpack(">I", c1[:4])[0]
            s1 = struct.pack(">II", int(time.monotonic() * 1000) & 0xFFFFFFFF, 0) + os.urandom(HANDSHAKE_SIZE - 8)
            out = bytes([RTMP_VERSION]) + s1 + c1
            self._state = "c2"
        if self._state == "c2" and len(self._buf) >= HANDSHAKE_SIZE:
            # C2 should echo S1; publishers do not all get it right and it proves nothing, so skip it.
            self.leftover = bytes(self._buf[HANDSHAKE_SIZE:])
            self._buf.clear()
            self._state = "done"
            self.done = True
        return out


def client_handshake_bytes() -> bytes:
    """C0+C1 for test clients: version 3, zero epoch, zero version field, random fill."""
    return bytes([RTMP_VERSION]) + b"\x00" * 8 + os.urandom(HANDSHAKE_SIZE - 8)
