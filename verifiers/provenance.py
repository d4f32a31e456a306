"""Who wrote an output file, from the run's audit records: the seeds' "files written by other
processes are detected" gate, shared by every family.

Why here and not in a family: the sound family refuses a render bounced by ffmpeg instead of the
DAW, the short-form family an export rendered by ffmpeg instead of CapCut/Jianying, the grading
family a LUT/DRX/CDL/BLG/project written by anything but the grading app; all read the same audit
events (docs/audit.md) the same way, with one rule for naming the writer (`writer_name`). The
policy is catalog data: a deny-list (`forbidden_writers`: these programs must not write the
artifact) or an allow-list (`app_files` suffixes that only `app_writers` may write). Without audit
evidence nothing is refused.
"""

from __future__ import annotations

from verifiers.base import AgentOutputError, ScoreContext
from verifiers.evidence import EvidenceError
from verifiers.evidence.audit import AUDIT_WRITE_KINDS, AuditWrite

__all__ = ["AUDIT_WRITE_KINDS", "audit_writes", "outside_app_writes", "outside_writes", "refuse_outside_writes",
           "writer_name"]


def writer_name(payload: dict) -> str:
    """Program of an audit write record: `process` (docs/audit.md), else exe's basename, else comm."""
    for key in ("process", "exe", "comm"):
        v = payload.get(key)
        if v:
            return str(v).replace("\\", "/").rsplit("/", 1)[-1].lower()
    return ""


def audit_writes(ctx: ScoreContext) -> list[dict]:
    """Payloads of the run's audit write records (empty without audit evidence), each read through
    the producer's own type (verifiers.evidence.audit.AuditWrite), so a renamed key fails the
    contract tests instead of silently attributing nothing. A record that does not fit the type is
    skipped: it names no writer, and refusing an agent's file needs a named one."""
    out = []
    for e in ctx.events or []:
        if AuditWrite.matches(e):
            try:
                out.append(AuditWrite.from_event(e).to_payload())
            except (EvidenceError, ValueError, TypeError):
                continue
    return out


def _rel(path: object) -> str:
    """A recorded path relative to the work dir ("./output/x.wav" and "output/x.wav" alike)."""
    p = str(path)
    while p.startswith("./"):
        p = p[2:]
    return p.lstrip("/")


def outside_writes(ctx: ScoreContext, rel: str, forbidden: tuple[str, ...] | list[str]) -> list[dict]:
    """Audit records of `rel` written by a forbidden program (empty without audit evidence)."""
    bad = {f.lower() for f in forbidden}
    return [p for p in audit_writes(ctx) if _rel(p.get("path", "")) == rel and writer_name(p) in bad]


def outside_app_writes(ctx: ScoreContext) -> list[str]:
    """The allow-list rule: files ending in one of the task's `app_files` suffixes that the audit saw
    written by a program whose name contains none of its `app_writers` ("Resolve", "Adobe Premiere
    Pro.exe" and "resolve" all name the app: program names vary by platform), each as "<path> by
    <program>"; empty without audit evidence or without `app_files` in the catalog."""
    suffixes = tuple(s.lower() for s in ctx.task.app_files)
    apps = tuple(a.lower() for a in ctx.task.app_writers)
    if not suffixes:
        return []
    bad = []
    for p in audit_writes(ctx):
        path, who = str(p.get("path", "")), writer_name(p)
        if path.lower().endswith(suffixes) and not any(a in who for a in apps):
            bad.append(f"{path} by {who or 'unknown'}")
    return bad


def refuse_outside_writes(ctx: ScoreContext, rel: str, app: str) -> None:
    """AgentOutputError when the audit saw one of the task's forbidden writers write `rel`."""
    bad = outside_writes(ctx, rel, ctx.task.forbidden_writers)
    if bad:
        raise AgentOutputError(f"{rel} was written by {writer_name(bad[-1])} outside {app} (audit)")
