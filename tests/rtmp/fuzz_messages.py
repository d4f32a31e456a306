"""Fuzz target for the messages/chunk layer: whole RTMP sessions (after the handshake) built from
a committed corpus and mutated by a seeded loop, as gortmplib keeps its corpora.

One input is the byte stream a publisher sends after the handshake. It is fed to a real
`RtmpSession` (fake transport, no recording) in random splits, so the chunk reader, message
decoding (commands, data, control, aggregate), codec headers, stats and the stream registry all
see it. The session catches everything by design, so a bug shows as an `internal_error` event;
the target also checks the invariants a hostile peer must not break: the reader's held bytes
stay under the connection limit and drop to zero when the session ends, the server-wide budget
returns to zero, every publish has exactly one unpublish.

    .venv/bin/python -m tests.rtmp.fuzz_messages --inputs 100000 [--seed 1]   # the long run
    .venv/bin/python -m tests.rtmp.fuzz_messages --write-corpus               # regenerate seeds

The corpus lives in tests/fuzz/corpus/rtmp_messages/ (one file per seed, raw bytes); inputs
that end a session with an internal error are saved next to it as crash-*.bin.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtmp import amf0
from rtmp import messages as m
from rtmp.chunk import ChunkWriter, RawMessage
from rtmp.handshake import HANDSHAKE_SIZE, client_handshake_bytes
from rtmp.session import RtmpSession, SessionConfig, SessionContext
from rtmp.streams import StreamRegistry

CORPUS_DIR = Path(__file__).resolve().parents[1] / "fuzz" / "corpus" / "rtmp_messages"
MAX_INPUT_BYTES = 64 * 1024
#: Limits small enough that mutated lengths reach them.
FUZZ_MAX_MESSAGE_BYTES = 256 * 1024
FUZZ_MAX_PENDING_BYTES = 512 * 1024
_INTERESTING = [0, 1, 2, 0x3F, 0x40, 0x7F, 0x80, 0xC0, 0xFE, 0xFF]
_INTERESTING_WORDS = [b"\xff\xff\xff", b"\x00\x00\x00", b"\x7f\xff\xff\xff", b"\x00\x00\x00\x01",
                      b"\xff\xff\xff\xff", b"\x00\x00\x10\x00"]


# --- seeds ---------------------------------------------------------------------------------------

def _publish_prefix(w: ChunkWriter, app: str = "live", key: str = "fuzz") -> list[RawMessage]:
    return [
        RawMessage(3, m.COMMAND_AMF0, 0, 0, amf0.encode("connect", 1.0, {"app": app, "type": "nonprivate",
                                                                         "tcUrl": f"rtmp://h/{app}"})),
        RawMessage(3, m.COMMAND_AMF0, 0, 0, amf0.encode("releaseStream", 2.0, None, key)),
        RawMessage(3, m.COMMAND_AMF0, 0, 0, amf0.encode("FCPublish", 3.0, None, key)),
        RawMessage(3, m.COMMAND_AMF0, 0, 0, amf0.encode("createStream", 4.0, None)),
        RawMessage(8, m.COMMAND_AMF0, 1, 0, amf0.encode("publish", 5.0, None, key, "live")),
    ]


_AVC_RECORD = bytes.fromhex("0164001fffe1001967640028acd940780227e5c05a808080a0000003002000000781e30632c001000468ebecb2")
_AAC_ASC = bytes.fromhex("1190")


def _media(n: int, base_ts: int = 0) -> list[RawMessage]:
    out = [RawMessage(6, m.VIDEO, 1, base_ts, b"\x17\x00\x00\x00\x00" + _AVC_RECORD),
           RawMessage(4, m.AUDIO, 1, base_ts, b"\xaf\x00" + _AAC_ASC)]
    for i in range(n):
        kf = i % 10 == 0
        out.append(RawMessage(6, m.VIDEO, 1, base_ts + 33 * i, (b"\x17" if kf else b"\x27") + b"\x01\x00\x00\x00"
                              + bytes(range(40 + i % 50))))
        out.append(RawMessage(4, m.AUDIO, 1, base_ts + 21 * i, b"\xaf\x01" + bytes(12 + i % 7)))
    return out


def _metadata() -> RawMessage:
    return RawMessage(4, m.DATA_AMF0, 1, 0, amf0.encode("@setDataFrame", "onMetaData", amf0.EcmaArray(
        width=640.0, height=360.0, framerate=30.0, videodatarate=1000.0, audiosamplerate=48000.0,
        stereo=True, encoder="fuzz", tags=["a", 1.0, None])))


def _aggregate(base_ts: int) -> RawMessage:
    body = b""
    for i, (tag, payload) in enumerate([(8, b"\xaf\x01" + bytes(10)), (9, b"\x27\x01\x00\x00\x00" + bytes(30))]):
        ts = base_ts + 10 * i
        body += (bytes([tag]) + len(payload).to_bytes(3, "big") + (ts & 0xFFFFFF).to_bytes(3, "big")
                 + bytes([ts >> 24]) + b"\0\0\0" + payload + (11 + len(payload)).to_bytes(4, "big"))
    return RawMessage(5, m.AGGREGATE, 1, base_ts, body)


def seeds() -> dict[str, bytes]:
    """Named valid (or deliberately odd) post-handshake byte streams."""
    out: dict[str, bytes] = {}

    def build(name: str, chunk_size: int, msgs: list[RawMessage], ext: bool = True) -> None:
        w = ChunkWriter(128, ext_on_continuation=ext)
        parts = []
        for msg in msgs:
            parts.append(w.write(msg))
            if msg.type_id == m.SET_CHUNK_SIZE:
                w.chunk_size = int.from_bytes(msg.body, "big")
        out[name] = b"".join(parts)

    def setcs(size: int) -> RawMessage:
        return RawMessage(2, m.SET_CHUNK_SIZE, 0, 0, size.to_bytes(4, "big"))

    w = ChunkWriter()
    build("publish-4096", 4096, [setcs(4096), *_publish_prefix(w), _metadata(), *_media(30)])
    build("publish-128", 128, [*_publish_prefix(w), _metadata(), *_media(20)])
    build("chunk-size-2", 2, [setcs(2), *_publish_prefix(w), *_media(6)])
    build("chunk-size-1", 1, [setcs(1), *_publish_prefix(w), *_media(3)])
    # Chunk size above the bulk-slicing limit with messages of several chunks (the tight loop).
    build("chunk-size-300", 300, [setcs(300), *_publish_prefix(w),
                                  *[RawMessage(6, m.VIDEO, 1, 33 * i, b"\x27\x01\x00\x00\x00" + bytes(range(256)) * 8)
                                    for i in range(4)]])
    build("extended-ts", 128, [*_publish_prefix(w), *_media(8, base_ts=0xFFFFF0)])
    build("extended-ts-omitted", 128, [*_publish_prefix(w), *_media(8, base_ts=0x1FFFFF0)], ext=False)
    build("aggregate", 4096, [setcs(4096), *_publish_prefix(w), _aggregate(100), _aggregate(0xFFFFFF)])
    build("controls", 128, [
        RawMessage(2, m.WINDOW_ACK_SIZE, 0, 0, (5000).to_bytes(4, "big")),
        RawMessage(2, m.SET_PEER_BANDWIDTH, 0, 0, (5000).to_bytes(4, "big") + b"\x02"),
        RawMessage(2, m.USER_CONTROL, 0, 0, b"\x00\x06" + (1234).to_bytes(4, "big")),
        RawMessage(2, m.ACKNOWLEDGEMENT, 0, 0, (1).to_bytes(4, "big")),
        *_publish_prefix(w), RawMessage(2, m.ABORT, 0, 0, (6).to_bytes(4, "big")), *_media(3),
        RawMessage(3, m.COMMAND_AMF0, 1, 0, amf0.encode("FCUnpublish", 6.0, None, "fuzz")),
        RawMessage(3, m.COMMAND_AMF0, 1, 0, amf0.encode("deleteStream", 7.0, None, 1.0))])
    build("amf3-commands", 128, [RawMessage(3, m.COMMAND_AMF3, 0, 0, b"\x00" + amf0.encode(
        "connect", 1.0, {"app": "live"})), RawMessage(3, m.COMMAND_AMF3, 0, 0, b"\x00" + amf0.encode(
            "createStream", 2.0, None)), RawMessage(3, m.COMMAND_AMF3, 1, 0, b"\x00" + amf0.encode(
                "publish", 3.0, None, "k3", "live")),
        RawMessage(4, m.DATA_AMF3, 1, 0, b"\x00" + amf0.encode("onMetaData", {"width": 1.0}))])
    build("enhanced-hevc", 4096, [setcs(4096), *_publish_prefix(w),
                                  RawMessage(6, m.VIDEO, 1, 0, b"\x90hvc1" + bytes(30)),
                                  RawMessage(6, m.VIDEO, 1, 33, b"\x91hvc1\x00\x00\x00" + bytes(50)),
                                  RawMessage(6, m.VIDEO, 1, 66, b"\x96hvc1" + bytes(10))])
    build("tiny-flood", 128, [*_publish_prefix(w), RawMessage(4, m.AUDIO, 1, 0, b"\xaf\x01")])
    out["tiny-flood"] += b"\xc4\xaf\x01" * 300
    build("play-and-junk", 128, [RawMessage(3, m.COMMAND_AMF0, 0, 0, amf0.encode("connect", 1.0, {"app": "a"})),
                                 RawMessage(3, m.COMMAND_AMF0, 0, 0, amf0.encode("play", 2.0, None, "x")),
                                 RawMessage(3, 99, 0, 0, b"\x01\x02"), RawMessage(3, m.SHARED_OBJECT_AMF0, 0, 0, b"")])
    return out


def write_corpus(directory: Path = CORPUS_DIR) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, data in seeds().items():
        path = directory / f"{name}.bin"
        path.write_bytes(data)
        paths.append(path)
    return paths


def load_corpus(directory: Path = CORPUS_DIR) -> list[bytes]:
    files = sorted(p for p in directory.glob("*.bin") if not p.name.startswith("crash-"))
    return [p.read_bytes() for p in files] if files else list(seeds().values())


# --- mutation ------------------------------------------------------------------------------------

def mutate(rng: random.Random, data: bytes, corpus: list[bytes]) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        n = len(out)
        i = rng.randrange(n + 1)
        op = rng.randrange(9)
        if op == 0 and n:
            out[min(i, n - 1)] ^= 1 << rng.randrange(8)
        elif op == 1 and n:
            out[min(i, n - 1)] = rng.choice(_INTERESTING)
        elif op == 2:
            out[i:i] = rng.randbytes(rng.randint(1, 16))
        elif op == 3 and n:
            del out[i:i + rng.randint(1, 64)]
        elif op == 4:
            out[i:i] = out[i:i + rng.randint(1, 256)]  # duplicate a range
        elif op == 5:
            other = rng.choice(corpus)
            j = rng.randrange(len(other) + 1)
            out[i:] = other[j:j + rng.randint(1, 4096)]  # splice
        elif op == 6 and n >= 3:
            word = rng.choice(_INTERESTING_WORDS)
            j = min(i, n - len(word))
            out[j:j + len(word)] = word
        elif op == 7:
            del out[i:]
        elif n:
            out[min(i, n - 1)] = rng.randrange(256)
    return bytes(out[:MAX_INPUT_BYTES])


# --- target --------------------------------------------------------------------------------------

class _Transport:
    def __init__(self) -> None:
        self.closing = False
        self.written = 0
        self.session: RtmpSession | None = None

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 40000) if name == "peername" else default

    def write(self, data: bytes) -> None:
        self.written += len(data)

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def abort(self) -> None:
        self.closing = True


@dataclass
class FuzzStats:
    inputs: int = 0
    internal_errors: int = 0
    protocol_errors: int = 0
    publishes: int = 0
    crashes: list[tuple[bytes, str]] = field(default_factory=list)


_HANDSHAKE = client_handshake_bytes()


def run_one(data: bytes, rng: random.Random, stats: FuzzStats) -> None:
    """One session over `data`; record invariant violations in `stats.crashes`."""
    events: list[tuple[str, dict[str, Any]]] = []
    ctx = SessionContext(SessionConfig(record_dir=None, max_message_bytes=FUZZ_MAX_MESSAGE_BYTES,
                                       max_pending_bytes=FUZZ_MAX_PENDING_BYTES),
                         StreamRegistry(allow_any=True), lambda k, p: events.append((k, p)))
    session = RtmpSession(ctx)
    transport = _Transport()
    session.connection_made(transport)  # type: ignore[arg-type]
    # Handshake: C0C1, then C2 (= anything of the right size), then the fuzzed bytes in splits.
    session.data_received(_HANDSHAKE)
    session.data_received(bytes(HANDSHAKE_SIZE))
    pos = 0
    while pos < len(data) and not session.closed:
        step = rng.choice((1, 7, 128, 1500, 65536))
        session.data_received(data[pos:pos + step])
        held = session.reader.held_bytes
        if held > FUZZ_MAX_PENDING_BYTES + 65536:
            stats.crashes.append((data, f"reader holds {held} bytes"))
            break
        pos += step
    if not session.closed:
        session.close("fuzz_end")
    session.connection_lost(None)
    kinds = [k for k, _ in events]
    stats.inputs += 1
    stats.protocol_errors += kinds.count("protocol_error")
    stats.publishes += kinds.count("publish")
    for kind, payload in events:
        if kind == "internal_error":
            stats.internal_errors += 1
            stats.crashes.append((data, str(payload.get("error"))))
    if kinds.count("publish") != kinds.count("unpublish"):
        stats.crashes.append((data, f"{kinds.count('publish')} publish vs {kinds.count('unpublish')} unpublish"))
    if session.reader.held_bytes or ctx.budget.used_bytes or ctx.sessions:
        stats.crashes.append((data, "memory or session not released at the end"))


def fuzz(inputs: int, seed: int = 0, corpus: list[bytes] | None = None) -> FuzzStats:
    """`inputs` sessions: every corpus entry once, then seeded mutations of random entries."""
    corpus = corpus if corpus is not None else load_corpus()
    rng = random.Random(seed)
    stats = FuzzStats()

    async def main() -> None:
        for i in range(inputs):
            data = corpus[i] if i < len(corpus) else mutate(rng, rng.choice(corpus), corpus)
            run_one(data, rng, stats)
            if i % 256 == 0:
                await asyncio.sleep(0)  # let cancelled handshake timers go

    asyncio.run(main())
    return stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--write-corpus", action="store_true")
    args = ap.parse_args(argv)
    if args.write_corpus:
        for p in write_corpus():
            print(p, p.stat().st_size)
        return 0
    t0 = time.perf_counter()
    stats = fuzz(args.inputs, args.seed)
    dt = time.perf_counter() - t0
    for n, (data, why) in enumerate(stats.crashes[:20]):
        (CORPUS_DIR / f"crash-{args.seed}-{n}.bin").write_bytes(data)
        print("CRASH:", why)
    print(f"inputs {stats.inputs} in {dt:.1f} s ({stats.inputs / dt:.0f}/s), publishes {stats.publishes}, "
          f"protocol errors {stats.protocol_errors}, internal errors {stats.internal_errors}, "
          f"invariant violations {len(stats.crashes)}")
    return 1 if stats.crashes else 0


if __name__ == "__main__":
    sys.exit(main())
