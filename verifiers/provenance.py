"""Who wrote an output file, from the run's audit records: the seeds' "files written by other
processes are detected" gate, shared by every family.

Why here and not in a family: the sound family refuses a render bounced by ffmpeg instead of the
DAW, the short-form family an export rendered by ffmpeg instead of CapCut/Jianying; both read the
same audit events (docs/audit.md) the same way. Without audit evidence nothing is refused.
"""

from __future__ import annotations

from verifiers.base import AgentOutputError, ScoreContext

AUDIT_WRITE_KINDS = ("write", "file_written")  # docs/audit.md: `write`; `file_written` was its first name


def writer_name(payload: dict) -> str:
    """Program of an audit write record: `process` (docs/audit.md), else exe's basename, else comm."""
    for key in ("process", "exe", "comm"):
        v = payload.get(key)
        if v:
            return str(v).replace("\\", "/").rsplit("/", 1)[-1].lower()
    return ""


def outside_writes(ctx: ScoreContext, rel: str, forbidden: tuple[str, ...] | list[str]) -> list[dict]:
    """Audit records of `rel` written by a forbidden program (empty without audit evidence)."""
    bad = {f.lower() for f in forbidden}
    out = []
    for e in ctx.events or []:
        p = e.get("payload") or {}
        if e.get("source") == "audit" and e.get("kind") in AUDIT_WRITE_KINDS \
                and str(p.get("path", "")).lstrip("./") == rel and writer_name(p) in bad:
            out.append(p)
    return out


def refuse_outside_writes(ctx: ScoreContext, rel: str, app: str) -> None:
    """AgentOutputError when the audit saw one of the task's forbidden writers write `rel`."""
    bad = outside_writes(ctx, rel, ctx.task.forbidden_writers)
    if bad:
        raise AgentOutputError(f"{rel} was written by {writer_name(bad[-1])} outside {app} (audit)")
