"""A seeded mutation fuzzer for the control parser (monitor.mqtt.control.parse_control).

Why our own loop and not a coverage-guided engine: the parser is small and pure Python; what
matters is that arbitrary bytes -- including the shapes that once broke it (a 1.2 MB key, 100 k
levels of nesting, NaN) -- end as a ControlMessage or a one-line, short ControlError, never as
another exception. The corpus (tests/fuzz/corpus/control/) holds valid and hostile seeds; @W@ and
@G@ are replaced with a real work dir and GT dir so mutations reach the path checks.

    python -m tests.fuzz.control_fuzz 100000      # the long run (prints inputs/s and outcomes)
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from monitor.mqtt.control import MAX_PAYLOAD_BYTES, ControlError, ControlMessage, parse_control

CORPUS = Path(__file__).resolve().parent / "corpus" / "control"
#: The longest rejection a reply may carry (the daemon clips again at 1000).
MAX_MESSAGE_CHARS = 600
_TOKENS = [b"{", b"}", b"[", b"]", b'"', b":", b",", b"\\", b"NaN", b"Infinity", b"-Infinity", b"1e999", b"null",
           b"true", b"\x00", b"\xff", b"\\u0000", b'"cmd"', b'"start"', b'"workdir"', b'"gt"', b'"timeout_s"',
           b"/", b"/..", b"/etc", b"-1", b"0", b"1e-320"]


_CATEGORIES = ("byte limit", "nested deeper", "malformed JSON", "JSON object", "unknown cmd", "unknown key",
               "timeout_s", "absolute", "usable path", "not a directory", "is /", "system directory",
               "top-level", "gt is the work dir", "inside the work dir", "inside gt", "must be", "NUL")


def load_corpus(workdir: Path, gt: Path) -> list[bytes]:
    seeds = []
    for path in sorted(CORPUS.iterdir()):
        data = path.read_bytes().replace(b"@W@", str(workdir).encode()).replace(b"@G@", str(gt).encode())
        seeds.append(data)
    return seeds


def mutate(rng: random.Random, data: bytes, seeds: list[bytes]) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(9)
        pos = rng.randint(0, len(buf))
        if op == 0 and buf:  # flip a bit
            i = rng.randrange(len(buf))
            buf[i] ^= 1 << rng.randrange(8)
        elif op == 1:  # insert a token
            buf[pos:pos] = rng.choice(_TOKENS)
        elif op == 2 and buf:  # delete a span
            del buf[pos:pos + rng.randint(1, 8)]
        elif op == 3:  # splice with another seed
            other = rng.choice(seeds)
            cut = rng.randint(0, len(other))
            buf = buf[:pos] + bytearray(other[cut:])
        elif op == 4:  # deep nesting
            n = rng.choice((9, 50, 1000, 30_000))
            buf[pos:pos] = b"[" * n + b"]" * rng.choice((0, n))
        elif op == 5:  # a long string or key
            buf[pos:pos] = b'"' + b"k" * rng.choice((100, 5000, 70_000)) + b'"'
        elif op == 6 and buf:  # duplicate a span
            span = buf[pos:pos + rng.randint(1, 32)]
            buf[pos:pos] = span * rng.randint(1, 16)
        elif op == 7:  # random bytes
            buf[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        else:  # replace a number-ish value
            buf[pos:pos] = rng.choice((b"NaN", b"1e999", b"-0", b"9" * 400))
    return bytes(buf)


def check_one(data: bytes) -> str:
    """The property: a ControlMessage, or a ControlError of one short line. Returns the outcome."""
    try:
        msg = parse_control(data)
    except ControlError as exc:
        text = str(exc)
        assert "\n" not in text and len(text) <= MAX_MESSAGE_CHARS, (len(text), text[:200])
        return "rejected: " + next((c for c in _CATEGORIES if c in text), "other")
    assert isinstance(msg, ControlMessage)
    assert len(data) <= MAX_PAYLOAD_BYTES
    if msg.cmd == "start":
        assert msg.workdir != msg.gt and msg.workdir is not None and msg.gt is not None
        assert msg.workdir not in msg.gt.parents and msg.gt not in msg.workdir.parents
        assert msg.timeout_s is None or 0 < msg.timeout_s < float("inf")
    return "accepted:" + msg.cmd


def run(n: int, seed: int = 20) -> tuple[Counter, float]:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="tally-fuzz-") as tmp:
        work, gt = Path(tmp) / "work", Path(tmp) / "gt"
        work.mkdir()
        gt.mkdir()
        seeds = load_corpus(work, gt)
        outcomes: Counter = Counter()
        t0 = time.perf_counter()
        for i in range(n):
            data = seeds[i % len(seeds)] if i < len(seeds) else mutate(rng, rng.choice(seeds), seeds)
            try:
                outcomes[check_one(data)] += 1
            except AssertionError:
                raise
            except Exception as exc:
                raise AssertionError(f"input #{i} ({data[:120]!r}...) raised {type(exc).__name__}: "
                                     f"{str(exc)[:200]}") from None
        return outcomes, time.perf_counter() - t0


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    outcomes, elapsed_s = run(n)
    print(f"{n} inputs in {elapsed_s:.1f} s ({n / elapsed_s:.0f}/s), no property violated")
    for outcome, count in outcomes.most_common():
        print(f"  {count:7d}  {outcome}")


if __name__ == "__main__":
    main()
