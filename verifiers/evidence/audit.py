"""Evidence the file audit (monitor/audit/component.py) records, source "audit".

A `write` is one file in the work dir closed after writing, with the writer process as far as the
kernel told (fanotify: pid and /proc facts; inotify: the keys are there and None). `write` was first
named `file_written`: `AUDIT_WRITE_KINDS` keeps both so old bundles still read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from verifiers.evidence.base import EvidenceEvent

#: the kinds a file write was recorded under (docs/audit.md: `write`; `file_written` its first name)
AUDIT_WRITE_KINDS = ("write", "file_written")


@dataclass(frozen=True)
class AuditStarted(EvidenceEvent, source="audit", kind="started"):
    """The audit began: how it sees writes (fanotify with attribution, or inotify without)."""

    mode: str
    attribution: bool = False
    root: str | None = None
    forbidden: list[str] = field(default_factory=list)
    fallback_reason: str | None = None
    exec_marks: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class AuditWrite(EvidenceEvent, source="audit", kind="write"):
    """One file of the work dir written (path relative to it) and who wrote it."""

    path: str
    process: str | None = None
    pid: int | None = None
    exe: str | None = None
    cmdline: list[str] | None = None
    comm: str | None = None
    ppid: int | None = None
    cwd: str | None = None
    identified_at: str | None = None  # close | open (read while the writer had it open)

    @classmethod
    def matches(cls, e: Any) -> bool:
        return e.get("source") == cls.SOURCE and e.get("kind") in AUDIT_WRITE_KINDS

    @classmethod
    def from_event(cls, e: Any) -> AuditWrite:  # type: ignore[override]
        if not cls.matches(e):
            raise ValueError(f"AuditWrite: event is {e.get('source')}/{e.get('kind')}")
        return cls.from_payload(e.get("payload"), f"audit/{e.get('kind')}")


def audit_writes(events: Any) -> list[tuple[float, AuditWrite]]:
    """(t_ms, write) of every recorded file write, in recorded order."""
    return [(float(e.get("mono_ns", 0)) / 1e6, AuditWrite.from_event(e)) for e in events or [] if AuditWrite.matches(e)]
