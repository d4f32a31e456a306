"""Score a bundle: the one function both `tally run` (at the end) and `tally replay` call.

Because the run writes its report.json by calling exactly this on the bundle it just closed, a
replay of the same bundle (same work dir contents) gives the same bytes. Nothing here may read a
clock or anything outside the bundle, the work dir and the GT dir.

It also says what a bundle lacks: a run killed with SIGKILL has no end record, maybe a torn last
event line, components that never reported stopping, and no artifact hashes; those are listed
under `run.missing` and in the notes, and the checks that needed absent evidence come out as
"could not judge" (error) from the scorer itself.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from monitor.bundle import Bundle, relocate_strings, scoring_inputs, sha256_file
from monitor.sweep.hashes import scoring_provenance
from verifiers.model import CheckResult, Report
from verifiers.scoring import UnusableInput, score_task


class ReplayError(Exception):
    """The bundle cannot be scored at all (no task recorded, work dir gone): one line for the user."""


def _component_story(events: list[dict[str, Any]]) -> dict[str, Any]:
    started, stopped, failed, unavailable, shared = [], [], {}, {}, []
    for e in events:
        if e["source"] != "run":
            continue
        p = e["payload"]
        if e["kind"] == "component_started":
            started.append(p.get("component"))
        elif e["kind"] == "component_stopped":
            stopped.append(p.get("component"))
        elif e["kind"] == "component_failed":
            failed[p.get("component")] = p.get("error")
        elif e["kind"] == "component_unavailable":
            unavailable[p.get("need")] = p.get("reason")
        elif e["kind"] == "component_shared":
            shared.append(p.get("need"))
    return {"started": started, "stopped": stopped, "failed": failed, "unavailable": unavailable, "shared": shared,
            "never_stopped": [c for c in started if c not in stopped]}


def _seq_gaps(events: list[dict[str, Any]]) -> list[list[int]]:
    """Ranges of sequence numbers absent from the log (lost lines); [first, last] inclusive.

    A run numbers its events from 0, so a log starting later lost its first lines (once: a
    `run/started` event that could not be encoded); that is a gap too."""
    gaps = []
    seqs = sorted(e["seq"] for e in events)
    if seqs and seqs[0] > 0:
        gaps.append([0, seqs[0] - 1])
    for a, b in itertools.pairwise(seqs):
        if b > a + 1:
            gaps.append([a + 1, b - 1])
    return gaps


def _artifacts(manifest: dict[str, Any], workdir: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Compare the manifest's artifact hashes with the work dir as it is now."""
    out, notes = [], []
    recorded = manifest.get("artifacts") or {}
    for rel in sorted(recorded):
        entry = recorded[rel] or {}
        path = workdir / rel
        now = sha256_file(path) if path.is_file() else None
        writer = entry.get("writer") or {}
        row = {"path": rel, "sha256": entry.get("sha256"), "size_bytes": entry.get("size_bytes"),
               "writer_exe": writer.get("exe"), "writer_pid": writer.get("pid"),
               "unchanged": now == entry.get("sha256")}
        if now is None:
            notes.append(f"artifact {rel} recorded in the manifest is gone from the work dir")
        elif now != entry.get("sha256"):
            notes.append(f"artifact {rel} changed since the run recorded it (sha256 differs)")
        out.append(row)
    return out, notes


def mark_not_applicable(report: Report, why_by_check: dict[str, str]) -> Report:
    """Checks the run could not judge by design become `error` (unjudged, never the agent's 0)."""
    if not why_by_check:
        return report
    checks = [CheckResult(c.name, c.weight, 0.0, "error", {}, f"not applicable in this run: {why_by_check[c.name]}")
              if c.name in why_by_check else c for c in report.checks]
    return replace(report, checks=checks)


def score_bundle(root: Path, gt_root: Path | None = None) -> dict[str, Any]:
    """The report dict for a bundle (what report.json holds), deterministic for the same inputs.

    The work dir comes from the bundle's snapshot when it has a complete one, the GT from
    `gt_root` (by id or content hash) or the recorded path; paths in the report are written as
    recorded, so the same bundle gives the same bytes on any machine."""
    bundle = Bundle.open(Path(root))
    with scoring_inputs(bundle, gt_root) as inputs:
        report = _score_opened(bundle, root, inputs.workdir, inputs.gt)
    report["notes"] = list(report.get("notes", [])) + inputs.notes
    report["run"]["scored_from"] = inputs.scored_from
    report["run"]["gt"] = inputs.gt_info
    report["run"]["provenance"] = scoring_provenance(report["task"])
    return relocate_strings(report, inputs.relocate)


def _score_opened(bundle: Bundle, root: Path, workdir: Path, gt: Path) -> dict[str, Any]:
    manifest = bundle.manifest
    run = manifest.get("run") or {}
    task_id = run.get("task")
    if not task_id:
        raise ReplayError(f"{root}: the manifest records no task ({bundle.manifest_problem or 'no run section'})")
    events = [e.to_dict() for e in bundle.events]
    try:
        scored = score_task(task_id, workdir, gt, events=events, manifest=manifest)
    except UnusableInput as exc:
        raise ReplayError(str(exc)) from None
    report = mark_not_applicable(scored, run.get("not_applicable") or {}).to_dict()

    missing: list[str] = []
    notes: list[str] = list(bundle.log.problems)
    if bundle.manifest_problem:
        missing.append("manifest")
        notes.append(bundle.manifest_problem)
    end = manifest.get("end")
    if not end:
        missing.append("end record (the run was killed or is still running; events end at the last line)")
    story = _component_story(events)
    for name in story["never_stopped"]:
        missing.append(f"stop record of component {name}")
    for name, err in sorted(story["failed"].items()):
        notes.append(f"component {name} failed to start: {err}")
    for need, why in sorted(story["unavailable"].items()):
        notes.append(f"live need {need} was not served: {why}")
    gaps = _seq_gaps(events)
    if gaps:
        notes.append(f"event sequence has {len(gaps)} gap(s): {gaps[:5]}")
        missing.append(f"event lines with seq {', '.join(f'{a}..{b}' for a, b in gaps[:5])} (lost)")
    if not manifest.get("artifacts") and end:
        notes.append("the manifest lists no artifacts (nothing was written under the work dir)")
    elif not manifest.get("artifacts"):
        missing.append("artifact hashes and writers (recorded only at the end of a run)")
    artifacts, art_notes = _artifacts(manifest, workdir)
    notes.extend(art_notes)
    audit = manifest.get("audit") or {"mode": "off"}
    if audit.get("mode") == "inotify":
        notes.append("file audit ran on inotify: who wrote each file is unknown (weaker evidence than fanotify)")
    elif audit.get("mode") == "off" and "audit" in (run.get("live_needs") or []):
        notes.append("file audit was requested but did not run: writers are unknown")
    drops = [e for e in events if e["source"] == "bus" and e["kind"] == "drops"]
    if drops:
        notes.append(f"bus subscribers dropped events: {drops[-1]['payload'].get('total_drops')}")

    report["notes"] = list(report.get("notes", [])) + notes
    report["run"] = {
        "run_id": run.get("run_id"),
        "task": task_id,
        "node": run.get("node"),
        "ended": (end or {}).get("reason"),
        "clean": bool(end) and not bundle.log.torn_last_line and not missing,
        "event_count": len(events),
        "last_seq": max((e["seq"] for e in events), default=None),
        "torn_last_line": bundle.log.torn_last_line,
        "bad_lines": bundle.log.bad_lines,
        "missing": missing,
        "components": story,
        "audit": audit,
        "artifacts": artifacts,
    }
    return report


def report_bytes(report: dict[str, Any]) -> bytes:
    """The exact bytes of report.json (same encoding as bundle.write_json_atomic)."""
    return (json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def write_bundle_html(root: Path, report: dict[str, Any]) -> Path | None:
    """report.html beside report.json, with the recorded live evidence plotted. A failure to draw
    is reported in the log of the caller, never allowed to lose the JSON report already written."""
    from monitor.html_report import write_html_report

    try:
        events = [e.to_dict() for e in Bundle.open(root).events]
        return write_html_report(report, root / "report.html", events)
    except Exception as exc:  # a plotting bug must not cost the run its report
        (root / "report.html.error").write_text(f"{type(exc).__name__}: {exc}\n")
        return None
