"""The one exception type the RTMP stack raises for bad input.

Every parser layer (handshake, chunk, AMF0, messages, codecs) raises a subclass of `RtmpError`
for malformed bytes, so a session can catch exactly this, report a protocol error and close,
while any *other* exception is a bug in tally (and the fuzz tests treat it as one).
"""

from __future__ import annotations


class RtmpError(Exception):
    """Malformed or unacceptable input from a peer; ends that session only."""


class HandshakeError(RtmpError):
    """C0/C1/C2 not acceptable (wrong version, truncated, timed out)."""


class ChunkError(RtmpError):
    """Chunk stream violates the protocol (unknown csid state, oversize message, bad chunk size).

    `messages` holds the complete messages parsed in the same `feed()` before the violation.
    """

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.messages: list = []  # type: ignore[type-arg]


class AmfError(RtmpError):
    """AMF0 bytes that cannot be decoded (truncated, unknown marker, nesting too deep)."""


class MessageError(RtmpError):
    """A message body too short or inconsistent for its declared type."""


class CodecError(RtmpError):
    """A codec configuration record (AVC/AAC/HEVC) that cannot be parsed."""
