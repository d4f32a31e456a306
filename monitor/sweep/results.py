"""results.jsonl: one row per scored item, appended by the sweep's one writer.

Rows are written with one `os.write` on an O_APPEND descriptor, so a sweep killed with SIGKILL
leaves whole rows and at most a torn last line, which the next open cuts off. An item is done
when a row with status `scored` carries its key (bundle hash, scorer hash, catalog hash); a
`failed` row is tried again on the next run (the newest row of a key wins in reports).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

RESULTS_NAME = "results.jsonl"
REPORTS_DIR = "reports"
ROW_SCHEMA = "tally.sweep.row/1"
#: Row fields that say where and how fast a row was made, not what it says (left out of equality).
VOLATILE = ("exec",)


def key_id(key: dict[str, str]) -> str:
    return hashlib.sha256(f"{key['bundle']}\0{key['scorer']}\0{key['catalog']}".encode()).hexdigest()[:32]


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Every whole row of a results file (a torn last line is skipped)."""
    path = Path(path)
    if not path.is_file():
        return []
    rows = []
    for line in path.read_bytes().split(b"\n"):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue
    return rows


def latest_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The newest row of each key, in first-seen order."""
    by_key: dict[str, dict[str, Any]] = {}
    for row in rows:
        by_key[row["key_id"]] = row
    return list(by_key.values())


def stable(row: dict[str, Any]) -> dict[str, Any]:
    """A row without its volatile fields: what must match between two sweeps of the same items."""
    return {k: v for k, v in row.items() if k not in VOLATILE}


class ResultsLog:
    """The append side. Opening cuts a torn tail so the next row starts on its own line."""

    def __init__(self, sweep_dir: Path) -> None:
        self.dir = Path(sweep_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / REPORTS_DIR).mkdir(exist_ok=True)
        self.path = self.dir / RESULTS_NAME
        self._cut_torn_tail()
        self.rows = read_rows(self.path)
        self.done = {r["key_id"] for r in self.rows if r.get("status") == "scored"}
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def _cut_torn_tail(self) -> None:
        if not self.path.is_file():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            with open(self.path, "r+b") as fh:
                fh.truncate(data.rfind(b"\n") + 1)

    def append(self, row: dict[str, Any], report: dict[str, Any] | None = None) -> None:
        if report is not None:
            rpath = self.dir / REPORTS_DIR / f"{row['key_id']}.json"
            tmp = rpath.with_name(f".{rpath.name}.tmp")
            tmp.write_text(json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
            os.replace(tmp, rpath)
        os.write(self._fd, (json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8"))
        self.rows.append(row)
        if row.get("status") == "scored":
            self.done.add(row["key_id"])

    def close(self) -> None:
        if self._fd >= 0:
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = -1
