"""A disk outbox: messages for the MQTT broker wait on disk until the broker has acknowledged them.

Why on disk and not in memory: the broker can be away for minutes (restart, network), and the
daemon itself can be killed; events must still arrive, in order, when it returns. The outbox is
one append-only file of JSON lines (`queue.jsonl`) and a small cursor file (`cursor`) holding the
byte offset of the first record not yet acknowledged. Appending is one `os.write` on an O_APPEND
descriptor (a SIGKILL tears at most the last line, which the reader skips). The cursor is saved
every few records rather than fsynced per message, so after a crash a few messages are sent
again: delivery is at-least-once, and subscribers deduplicate by the event's `seq`.

When the reader has caught up and the file has grown, both are truncated to zero, so a
long-running daemon does not grow the file forever.

A record the broker can never take (over 1 MiB; an older version could write one) must not stop
the queue behind it: `append` refuses such a line, and `peek` hands an oversized or unreadable line
back as a record with a `problem`, which the reader acknowledges without sending (and reports).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

QUEUE_NAME = "queue.jsonl"
MAX_RECORD_BYTES = 1 << 20
CURSOR_NAME = "cursor"


@dataclass(frozen=True, slots=True)
class OutboxRecord:
    """One message waiting for the broker; `end` is the byte offset just past its line."""

    topic: str
    payload: str
    retain: bool
    end: int
    #: why this record cannot be sent ("" for a good one): acknowledged in order, never sent
    problem: str = ""


class Outbox:
    """Append-only on-disk queue with a persistent read cursor (single process, single reader)."""

    def __init__(self, folder: Path, compact_after_bytes: int = 4 << 20, cursor_every: int = 50) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._queue_path = self.folder / QUEUE_NAME
        self._cursor_path = self.folder / CURSOR_NAME
        self._fd = os.open(self._queue_path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        self._seal_torn_tail()
        self._compact_after_bytes = compact_after_bytes
        self._cursor_every = cursor_every
        self._since_cursor_save = 0
        self.cursor = self._load_cursor()
        self.appended = 0
        self.acked = 0
        self.torn_skipped = 0
        self.refused = 0

    def _seal_torn_tail(self) -> None:
        """End a torn last line (killed writer) so the next append starts a fresh line."""
        size = os.fstat(self._fd).st_size
        if size and os.pread(self._fd, 1, size - 1) != b"\n":
            os.write(self._fd, b"\n")

    def _load_cursor(self) -> int:
        try:
            value = int(self._cursor_path.read_text(encoding="ascii").strip() or "0")
        except (FileNotFoundError, ValueError):
            return 0
        size = os.fstat(self._fd).st_size
        return value if 0 <= value <= size else 0

    def append(self, topic: str, payload: str, retain: bool = False) -> bool:
        """Queue one message; False (and nothing written) when its line would be over the limit."""
        line = json.dumps({"t": topic, "p": payload, "r": retain}, separators=(",", ":"), ensure_ascii=False)
        data = (line + "\n").encode("utf-8")
        if len(data) > MAX_RECORD_BYTES:
            self.refused += 1
            return False
        os.write(self._fd, data)
        self.appended += 1
        return True

    @property
    def size_bytes(self) -> int:
        if self._fd < 0:  # closed: the file as it was left
            return self._queue_path.stat().st_size if self._queue_path.exists() else 0
        return os.fstat(self._fd).st_size

    @property
    def pending_bytes(self) -> int:
        return self.size_bytes - self.cursor

    def peek(self, max_records: int = 64, start: int | None = None) -> list[OutboxRecord]:
        """Complete records from `start` (default: the cursor) on, without consuming them.

        An unparsable line (torn by a killed writer, then followed by newer lines) comes back as a
        record with an empty topic: the reader acknowledges it in order without sending it, so the
        cursor never jumps over records still in flight.
        """
        pos = self.cursor if start is None else start
        size = self.size_bytes
        if pos >= size:
            return []
        data = os.pread(self._fd, min(size - pos, 64 << 10), pos)
        if b"\n" not in data and size - pos > len(data):
            data = os.pread(self._fd, min(size - pos, MAX_RECORD_BYTES + 1), pos)
            if b"\n" not in data and len(data) > MAX_RECORD_BYTES:
                return self._oversized(pos, size)
        out: list[OutboxRecord] = []
        for raw in data.split(b"\n")[:-1]:  # the last piece is incomplete (or empty)
            pos += len(raw) + 1
            try:
                obj = json.loads(raw)
                out.append(OutboxRecord(str(obj["t"]), str(obj["p"]), bool(obj.get("r", False)), pos))
            except (ValueError, KeyError, TypeError, RecursionError):
                out.append(OutboxRecord("", "", False, pos, problem=f"unreadable line of {len(raw)} bytes"))
            if len(out) >= max_records:
                break
        return out

    def _oversized(self, pos: int, size: int) -> list[OutboxRecord]:
        """The line at `pos` is over the limit: one problem record ending past its newline (none
        yet if the line is still incomplete), found by scanning without holding it in memory."""
        scan = pos
        while scan < size:
            block = os.pread(self._fd, min(size - scan, 1 << 20), scan)
            if not block:
                break
            newline = block.find(b"\n")
            if newline >= 0:
                end = scan + newline + 1
                return [OutboxRecord("", "", False, end,
                                     problem=f"record of {end - pos} bytes is over the {MAX_RECORD_BYTES} byte limit")]
            scan += len(block)
        return []

    def ack(self, record: OutboxRecord) -> None:
        """The broker has the record (or it was unreadable): move the cursor past it."""
        self.cursor = record.end
        if record.topic and not record.problem:
            self.acked += 1
        else:
            self.torn_skipped += 1
        self._since_cursor_save += 1
        if self.cursor >= self.size_bytes and self.cursor >= self._compact_after_bytes:
            os.ftruncate(self._fd, 0)
            self.cursor = 0
            self.save_cursor()
        elif self._since_cursor_save >= self._cursor_every:
            self.save_cursor()

    def save_cursor(self) -> None:
        tmp = self._cursor_path.with_suffix(".tmp")
        tmp.write_text(str(self.cursor), encoding="ascii")
        os.replace(tmp, self._cursor_path)
        self._since_cursor_save = 0

    def close(self) -> None:
        if self._fd >= 0:
            self.save_cursor()
            os.close(self._fd)
            self._fd = -1
