"""Reassemble the multi-line JSON messages of OBS's log when several threads wrote them at once.

Why this exists: obs-websocket's debug log writes every message as `json.dump(2)`, one log line
per JSON line, and its request handlers, event broadcasts and replies run on a thread pool. OBS
29.0.2 writes the lines of a message one after another and does not hold a lock across a message
(nor, as seen here, always within a line): under load the lines of two or three messages
interleave, and a write can tear a line apart, so that a line carries the tail of one message
and the head of another (`...to scene 'Live'04:07:10.259:   },`), or a torn piece is repeated
without its time stamp. A parser that takes "the lines after the header" as the message lost or
doubled requests in about one run in two (tests/obs/test_ws_log.py, real OBS).

What this does instead: a physical line is cut at every embedded `HH:MM:SS.mmm: ` stamp into
segments; a segment without a stamp in front is a torn piece and is never used as JSON. Each
message header opens a `Block` that follows the exact shape nlohmann::json's `dump(2)` gives
(indent two spaces per level, one member per line, keys sorted, an opener ends its line, a
closer stands alone): a segment joins the open block whose next line it can be (right indent,
right kind of line, key after the previous key at that level), preferring a block with the same
time stamp (OBS stamps all lines of a message with one time), then the one written to last. A
block completes when its root closes; one that cannot complete (torn, or cut at OBS's 8 KiB
message limit) goes stale and is handed back for salvage.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

#: `HH:MM:SS.mmm: ` as OBS's do_log prefixes every line
STAMP = re.compile(r"(\d\d):(\d\d):(\d\d)\.(\d{3}): ")
#: an obs-websocket line glued behind another write whose own stamp was torn down to its tail
#: (`  "op": 1:03.034: [obs-websocket] [WebSocketServer::onOpen] New WebSocket client ...`)
GLUED_TAG = re.compile(r"(?<=\d: )\[obs-websocket\] ")
#: a block untouched for this long (log time) or this many segments is given up
STALE_MS = 1000
STALE_SEGMENTS = 400
#: OBS cuts one message at 8 KiB; a block far longer than that is not a message
MAX_BLOCK_CHARS = 64 * 1024
MAX_OPEN_BLOCKS = 32
_KEY = re.compile(r'^"((?:[^"\\]|\\.)*)": ')
#: how a complete dump(2) line can end (a bare number could be cut short, so it cannot)
_COMPLETE_ENDS = (",", "{", "[", "}", "]", '"', "true", "false", "null")


def stamp_ms(stamp: str) -> int | None:
    """`04:07:10.259` -> milliseconds since midnight (None when not a stamp)."""
    m = STAMP.fullmatch(stamp + ": ")
    if m is None:
        return None
    h, mi, s, ms = (int(g) for g in m.groups())
    return ((h * 60 + mi) * 60 + s) * 1000 + ms


def split_segments(raw: str) -> list[tuple[str | None, str]]:
    """A physical log line -> [(stamp or None, text)]: one segment per `HH:MM:SS.mmm: ` stamp.
    Text before the first stamp comes first with stamp None (a torn piece, or a line OBS did not
    stamp); an empty torn piece is dropped. An `[obs-websocket] ` line glued behind another write
    with the tail of a torn stamp in front (GLUED_TAG) is cut off as a segment of its own with the
    stamp of the text it was glued to (written the same moment; its own is torn): otherwise it
    rides inside a JSON line that a block takes, and a connect line or a message header is lost."""
    out: list[tuple[str | None, str]] = []
    marks = list(STAMP.finditer(raw))
    head = raw[: marks[0].start()] if marks else raw
    if head or not marks:
        out.extend(_cut_glued(None, head))
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(raw)
        out.extend(_cut_glued(m.group(0)[:-2], raw[m.end():end]))
    return out


def _cut_glued(stamp: str | None, text: str) -> list[tuple[str | None, str]]:
    """`text` cut before every GLUED_TAG after its first character: [(stamp, head), (stamp, tag line), ...]."""
    cuts = [m.start() for m in GLUED_TAG.finditer(text, 1)]
    if not cuts:
        return [(stamp, text)]
    return [(stamp, text[a:b]) for a, b in itertools.pairwise([0, *cuts, len(text)])]


def distance_ms(a: str | None, b: str | None) -> int:
    """Log-time distance of two stamps (wrapping at midnight); 0 when either is unknown."""
    return _apart_ms(stamp_ms(a) if a else None, stamp_ms(b) if b else None)


def _apart_ms(a_ms: int | None, b_ms: int | None) -> int:
    if a_ms is None or b_ms is None:
        return 0
    d = abs(a_ms - b_ms)
    return min(d, 86_400_000 - d)


@dataclass
class Block:
    """One message being reassembled. `kind` is the caller's label (which header opened it)."""

    kind: str
    stamp: str | None
    lines: list[str] = field(default_factory=list)
    #: open containers, "{" or "["; empty before the root
    stack: list[str] = field(default_factory=list)
    #: last key seen per open object level (keys come sorted)
    keys: list[str | None] = field(default_factory=list)
    #: "root" (awaiting `{`), "member" (a value or member at the current level), "close" (a closer)
    need: str = "root"
    chars: int = 0
    idle_segments: int = 0
    last_stamp: str | None = None
    #: last_stamp in ms since midnight: the stale check runs for every open block on every line
    last_ms: int | None = None
    done: bool = False

    def fits(self, text: str) -> bool:
        """Can `text` be this block's next line?"""
        body = text.lstrip(" ")
        indent = len(text) - len(body)
        if self.need == "root":
            return text == "{"
        if self.need == "close":
            want = "}" if self.stack[-1] == "{" else "]"
            return indent == 2 * (len(self.stack) - 1) and body in (want, want + ",")
        if indent != 2 * len(self.stack) or not body or body[0] in "}]":
            return False
        if self.stack[-1] == "[":
            return True
        m = _KEY.match(body)
        if m is None:
            return False
        last = self.keys[-1]
        return last is None or m.group(1) > last

    def take(self, text: str, stamp: str | None, stamp_in_ms: int | None) -> None:
        """Append a line that `fits` (its stamp, and that stamp in ms)."""
        self.lines.append(text)
        self.chars += len(text) + 1
        self.idle_segments = 0
        if stamp is not None:
            self.last_stamp, self.last_ms = stamp, stamp_in_ms
        body = text.lstrip(" ")
        if self.need == "root":
            self.stack, self.keys, self.need = ["{"], [None], "member"
            return
        if self.need == "close":
            self.stack.pop()
            self.keys.pop()
            if not self.stack:
                self.done = True
                return
            self.need = "member" if body.endswith(",") else "close"
            return
        if self.stack[-1] == "{":
            m = _KEY.match(body)
            self.keys[-1] = m.group(1) if m else self.keys[-1]
        if body.endswith(("{", "[")):
            self.stack.append(body[-1])
            self.keys.append(None)
            self.need = "member"
        else:
            self.need = "member" if body.endswith(",") else "close"

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


class BlockDemux:
    """Open blocks in, completed or stale blocks out. The caller opens a block on a header and
    offers every stamped segment; what no block takes is the caller's plain line."""

    def __init__(self) -> None:
        self.open: list[Block] = []

    def start(self, kind: str, stamp: str | None) -> list[Block]:
        """Open a block; returns blocks pushed out by the cap on open blocks (stale, unfinished)."""
        self.open.append(Block(kind, stamp, last_stamp=stamp, last_ms=stamp_ms(stamp) if stamp else None))
        evicted: list[Block] = []
        while len(self.open) > MAX_OPEN_BLOCKS:
            evicted.append(self.open.pop(0))
        return evicted

    def offer(self, stamp: str | None, text: str, *, torn: bool = False) -> tuple[bool, list[Block]]:
        """Offer one stamped segment. Returns (taken, finished) where finished holds the blocks
        this segment completed or that went stale meanwhile (check `Block.done`). `torn`: another
        write followed on the same physical line, so the text may be cut short; it is used only
        if it visibly ends where a JSON line ends (`"requestId": 30` torn from 303 must not be)."""
        finished: list[Block] = []
        taker: Block | None = None
        now_ms = stamp_ms(stamp) if stamp else None
        usable = not torn or text.endswith(_COMPLETE_ENDS)
        if usable and stamp is not None and text.startswith((" ", "{", "}", "]")):
            fitting = [b for b in self.open if b.fits(text)]
            same = [b for b in fitting if b.stamp == stamp]
            pool = same or fitting
            # the block written to most recently: a stuck block (a line of it was torn away) must
            # not take the lines of a newer message that happen to fit it too
            taker = min(pool, key=lambda b: b.idle_segments) if pool else None
        if taker is not None:
            taker.take(text, stamp, now_ms)
            if taker.done or taker.chars > MAX_BLOCK_CHARS:
                self.open.remove(taker)
                finished.append(taker)
        still: list[Block] = []
        for b in self.open:
            if b is not taker:
                b.idle_segments += 1
            if b is not taker and (b.idle_segments > STALE_SEGMENTS or _apart_ms(b.last_ms, now_ms) > STALE_MS):
                finished.append(b)
            else:
                still.append(b)
        self.open = still
        return taker is not None, finished

    def drain(self) -> list[Block]:
        """End of input: every open block, unfinished."""
        out, self.open = self.open, []
        return out
