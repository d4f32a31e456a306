"""Run bundles: the folder a run leaves behind, re-scorable anywhere.

Layout: `events.jsonl` (one Event a line), `manifest.json` (run facts and artifacts with size,
sha256 and writer), `captures/` (recordings, probe data), `report.json` (the score).

Events are appended with one `os.write` per line on an O_APPEND descriptor, so a run killed
with SIGKILL loses at most a torn last line; the reader skips it and says so. JSON files are
written to a temporary name and renamed, so they are either old or new, never half.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from monitor.events import EVENT_SCHEMA_VERSION, Event, EventDecodeError

EVENTS_NAME = "events.jsonl"
MANIFEST_NAME = "manifest.json"
REPORT_NAME = "report.json"
CAPTURES_DIR = "captures"


class BundleError(Exception):
    """The folder is not a readable bundle (missing, not a directory, unreadable manifest)."""


def write_json_atomic(path: Path, obj: Any) -> None:
    """Write JSON so readers see the old file or the new one, never a torn one."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    data = json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def sha256_file(path: Path, chunk_bytes: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk_bytes):
            digest.update(block)
    return digest.hexdigest()


class BundleWriter:
    """Owns a bundle folder during a run. Used as the bus's synchronous sink."""

    def __init__(self, root: Path, manifest: dict[str, Any] | None = None, fsync_every: int = 200) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / CAPTURES_DIR).mkdir(exist_ok=True)
        self._fd = os.open(self.root / EVENTS_NAME, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._fsync_every = fsync_every
        self._since_sync = 0
        self.manifest: dict[str, Any] = {
            "bundle_version": 1,
            "event_schema_version": EVENT_SCHEMA_VERSION,
            "created_wall_time": time.time(),
            "artifacts": {},
            **(manifest or {}),
        }
        self.save_manifest()

    @property
    def captures(self) -> Path:
        return self.root / CAPTURES_DIR

    def __call__(self, event: Event) -> None:
        self.write_event(event)

    def write_event(self, event: Event) -> None:
        os.write(self._fd, (event.to_json() + "\n").encode("utf-8"))
        self._since_sync += 1
        if self._since_sync >= self._fsync_every:
            os.fsync(self._fd)
            self._since_sync = 0

    def add_artifact(self, rel_path: str, path: Path, writer: dict[str, Any] | None = None) -> dict[str, Any]:
        entry = {"size_bytes": path.stat().st_size, "sha256": sha256_file(path), "writer": writer}
        self.manifest["artifacts"][rel_path] = entry
        return entry

    def save_manifest(self) -> None:
        write_json_atomic(self.root / MANIFEST_NAME, self.manifest)

    def write_report(self, report: dict[str, Any]) -> None:
        write_json_atomic(self.root / REPORT_NAME, report)

    def close(self) -> None:
        if self._fd >= 0:
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = -1
        self.manifest["closed_wall_time"] = time.time()
        self.save_manifest()


@dataclass
class EventLog:
    """Events read back from a bundle, with what could not be read."""

    events: list[Event] = field(default_factory=list)
    torn_last_line: bool = False
    bad_lines: list[int] = field(default_factory=list)  # 1-based line numbers, torn tail excluded

    @property
    def problems(self) -> list[str]:
        out = []
        if self.torn_last_line:
            out.append("last line of events.jsonl is torn (run was killed mid-write); skipped")
        if self.bad_lines:
            out.append(f"{len(self.bad_lines)} unreadable event line(s) skipped: {self.bad_lines[:10]}")
        return out


def read_events(path: Path) -> EventLog:
    """Read an events.jsonl; a torn final line is expected after SIGKILL and is only reported."""
    log = EventLog()
    raw = Path(path).read_bytes()
    lines = raw.split(b"\n")
    ends_clean = raw.endswith(b"\n") or not raw
    if ends_clean:
        lines = lines[:-1]
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            log.events.append(Event.from_json(line))
        except EventDecodeError:
            if number == len(lines) and not ends_clean:
                log.torn_last_line = True
            else:
                log.bad_lines.append(number)
    return log


@dataclass
class Bundle:
    """A bundle opened for reading (replay, dashboard, tests)."""

    root: Path
    manifest: dict[str, Any]
    log: EventLog
    manifest_problem: str | None = None

    @property
    def events(self) -> list[Event]:
        return self.log.events

    @property
    def report(self) -> dict[str, Any] | None:
        path = self.root / REPORT_NAME
        if not path.exists():
            return None
        return json.loads(path.read_text(encoding="utf-8"))

    @classmethod
    def open(cls, root: Path) -> Bundle:
        root = Path(root)
        if not root.is_dir():
            raise BundleError(f"{root}: not a bundle directory")
        events_path = root / EVENTS_NAME
        log = read_events(events_path) if events_path.exists() else EventLog()
        manifest: dict[str, Any] = {}
        problem = None
        mpath = root / MANIFEST_NAME
        if mpath.exists():
            try:
                manifest = json.loads(mpath.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                problem = f"{mpath}: unreadable manifest ({exc})"
        else:
            problem = f"{mpath}: missing"
        if not events_path.exists() and not mpath.exists():
            raise BundleError(f"{root}: neither {EVENTS_NAME} nor {MANIFEST_NAME} is there")
        return cls(root, manifest, log, problem)
