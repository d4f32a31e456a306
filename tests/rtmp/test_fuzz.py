"""Property-based fuzzing of the byte-level layers: only the protocol's own error may escape.

Three targets (handshake, chunk reader, AMF0). Hypothesis draws FUZZ_EXAMPLES seeds per
target (random bytes or a mutated valid stream, so parsers get past their first byte); each
example then runs FUZZ_PER_EXAMPLE inputs: the drawn one plus byte-level mutations of it made by
a generator seeded from the example (Hypothesis's own overhead per example is what limits
throughput here). Defaults: 1 700 × 20 × 3 = 102 000 inputs, counted and checked at the end.
The chunk reader is also checked differentially: any split of the same bytes gives the same
messages.
"""

from __future__ import annotations

import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rtmp import amf0
from rtmp.chunk import ChunkReader, ChunkWriter, RawMessage
from rtmp.codecs import (
    parse_aac_config,
    parse_audio_tag,
    parse_avc_config,
    parse_hevc_config,
    parse_video_tag,
)
from rtmp.errors import ChunkError, CodecError, HandshakeError, RtmpError
from rtmp.handshake import ServerHandshake, client_handshake_bytes

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "1700"))
PER_EXAMPLE = int(os.environ.get("FUZZ_PER_EXAMPLE", "20"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

_COUNTS = {"handshake": 0, "chunk": 0, "amf0": 0}


@pytest.fixture(scope="module")
def fuzz_counts() -> dict[str, int]:
    """The three targets' input counts, for test_fuzz_total_inputs.

    Module-scoped on purpose: tests/conftest.py's xdist scheduler sends a module that builds a module
    fixture to one worker whole, in file order, so the total always runs in the process that ran the
    three targets. Handed out one test at a time, it met none, some or all of their counts and
    skipped in some runs (phase 1 showed 2 or 3 skips from run to run)."""
    return _COUNTS


def _valid_chunk_stream() -> bytes:
    w = ChunkWriter(chunk_size=64)
    msgs = [RawMessage(2, 1, 0, 0, (64).to_bytes(4, "big")),
            RawMessage(3, 20, 0, 0, amf0.encode("connect", 1, {"app": "live"})),
            *[RawMessage(4, 8, 1, 0xFFFFF0 + 23 * i, b"\xaf\x01" + bytes(90)) for i in range(4)],
            RawMessage(330, 9, 1, 5, b"\x17\x01" + bytes(200)), RawMessage(2, 2, 0, 0, (4).to_bytes(4, "big"))]
    return b"".join(w.write(x) for x in msgs)


VALID_CHUNKS = _valid_chunk_stream()
VALID_AMF = amf0.encode("onMetaData", amf0.EcmaArray(width=1920.0, tags=["a", None, True],
                                                     nested={"d": amf0.AmfDate(1.0, 0)}, u=amf0.UNDEFINED),
                        "z" * 300, amf0.TypedObject("T", {"x": 1.0}))


@st.composite
def mutated(draw: st.DrawFn, base: bytes) -> bytes:
    data = bytearray(base[:draw(st.integers(0, len(base)))])
    for _ in range(draw(st.integers(0, 8))):
        if not data:
            break
        i = draw(st.integers(0, len(data) - 1))
        op = draw(st.integers(0, 2))
        if op == 0:
            data[i] = draw(st.integers(0, 255))
        elif op == 1:
            del data[i]
        else:
            data[i:i] = draw(st.binary(max_size=8))
    return bytes(data)


def _inputs(first: bytes, seed: int) -> list[bytes]:
    """The drawn input plus PER_EXAMPLE-1 random byte-level mutations of it."""
    rng = random.Random(seed)
    out = [first]
    for _ in range(PER_EXAMPLE - 1):
        data = bytearray(first)
        for _ in range(rng.randint(1, 6)):
            op = rng.randint(0, 4)
            i = rng.randint(0, len(data)) if data else 0
            if op == 0 and data:
                data[min(i, len(data) - 1)] = rng.randint(0, 255)
            elif op == 1 and data:
                del data[i:i + rng.randint(1, 16)]
            elif op == 2:
                data[i:i] = rng.randbytes(rng.randint(1, 16))
            elif op == 3:
                del data[i:]
            else:
                data[i:i] = data[i:i + rng.randint(1, 64)]
        out.append(bytes(data))
    return out


def _splits(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    parts, last = [], 0
    for p in points:
        parts.append(data[last:p])
        last = p
    parts.append(data[last:])
    return parts


@FUZZ
@given(first=st.one_of(st.binary(max_size=3500), mutated(client_handshake_bytes() + bytes(1536) + b"\x02\x00")),
       cuts=st.lists(st.integers(0, 4000), max_size=4), seed=st.integers(0, 2**32 - 1))
def test_fuzz_handshake(first: bytes, cuts: list[int], seed: int) -> None:
    for data in _inputs(first, seed):
        _COUNTS["handshake"] += 1
        hs = ServerHandshake()
        try:
            for part in _splits(data, cuts):
                if hs.done:
                    break
                hs.feed(part)
        except HandshakeError:
            continue


def _read_all(parts: list[bytes]) -> tuple[list[RawMessage], bool]:
    r = ChunkReader(max_message_bytes=1 << 16, max_chunk_streams=64)
    out: list[RawMessage] = []
    try:
        for p in parts:
            out += r.feed(p)
    except ChunkError as exc:
        return out + exc.messages, True
    return out, False


@FUZZ
@given(first=st.one_of(st.binary(max_size=2000), mutated(VALID_CHUNKS)),
       cuts=st.lists(st.integers(0, 3000), max_size=5), seed=st.integers(0, 2**32 - 1))
def test_fuzz_chunk_reader(first: bytes, cuts: list[int], seed: int) -> None:
    for data in _inputs(first, seed):
        _COUNTS["chunk"] += 1
        whole, whole_err = _read_all([data])
        split, split_err = _read_all(_splits(data, cuts))
        # Splitting must not change what is parsed before an error (nor whether one happens).
        assert whole_err == split_err, data
        assert whole == split, data


@FUZZ
@given(first=st.one_of(st.binary(max_size=600), mutated(VALID_AMF)), seed=st.integers(0, 2**32 - 1))
def test_fuzz_amf0(first: bytes, seed: int) -> None:
    for data in _inputs(first, seed):
        _COUNTS["amf0"] += 1
        try:
            amf0.decode_all(data)
        except RtmpError:
            continue


_AVCC = bytes.fromhex("0164001fffe1001967640028acd940780227e5c04400000fa40003a9803c60c658"
                      "01000668ebe3cb22c0")


@settings(max_examples=max(1, EXAMPLES // 4), deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(first=st.one_of(st.binary(max_size=300), mutated(_AVCC), mutated(b"\x12\x10\x56\xe5\x00")),
       seed=st.integers(0, 2**32 - 1))
def test_fuzz_codec_configs(first: bytes, seed: int) -> None:
    """Not counted in the 100 000: codec configs come from peers too and may only raise CodecError."""
    for data in _inputs(first, seed):
        for parse in (parse_avc_config, parse_hevc_config, parse_aac_config, parse_video_tag, parse_audio_tag):
            try:
                parse(data)
            except CodecError:
                continue


def test_fuzz_total_inputs(fuzz_counts: dict[str, int]) -> None:
    """Runs after the three targets in file order: proves the input count claimed above (skipped
    only when a selection such as -k left the targets out)."""
    if any(v == 0 for v in fuzz_counts.values()):
        pytest.skip("run together with the fuzz targets to count inputs")
    assert sum(fuzz_counts.values()) >= 3 * EXAMPLES * PER_EXAMPLE
    print(f"fuzz inputs: {fuzz_counts} total {sum(fuzz_counts.values())}")
