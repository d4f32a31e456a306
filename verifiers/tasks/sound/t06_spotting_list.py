"""R06.07.01.03-T06: spotting list of every sound event in a silent clip (markers exported as CSV).

Work dir: fixtures/kitchen_clip.mov (25 fps, no audio; a placeholder here), notes/spotting_rules.md.
Output: output/spotting_list.csv with columns timecode, category, description.
Harness export (never written by the agent): state/resolve_markers.json = [{frame, name, note}],
the markers in Resolve's project DB; the audit records who wrote the project DB.
GT: gt/events.json {fps, sample_rate_hz, start_tc, categories, events[{frame, sample, label, category}]}
(`sample` unused here; `label` is the reference description).

Timecodes are the timeline's (GT `start_tc`, usually 01:00:00:00); a list whose timecodes all sit
below the start is read as zero-based. Checks: event_f1 (Hungarian matching within ±2 frames; rows
with invalid timecodes count as false positives; F1 >= 0.8 passes), categories (accuracy on matched
rows >= 85%), descriptions (share of rows that are matched to a GT event and have a description),
markers_in_project (GT events with a project marker within ±2 frames, over the GT events or the
markers, whichever are more; 0 when the project DB was written by anything but Resolve; error "no
audit evidence" when the run recorded no audit).

Issue 21, rule 3: a row (or marker) at every fifth frame, each described, matched every event at
±2 frames and earned the descriptions and markers shares (25) with F1 ≈ 0.04; a description pays
only on a row that spots an event, and spare markers dilute the marker share.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from verifiers.apps.edl import EDLError, frames_to_tc, tc_to_frames
from verifiers.base import AgentOutputError, NoLiveEvidence, ScoreContext
from verifiers.checks import CheckedTask, Result, check, check_names, loads, provides
from verifiers.curves import Curve
from verifiers.evidence import AuditStarted, AuditWrite
from verifiers.gtfiles import gt_field
from verifiers.params import NoParams
from verifiers.paramtypes.sound import CategoryAccuracy, EventF1
from verifiers.provenance import writer_name
from verifiers.synth import InstanceWriter
from verifiers.tasks.sound._shared.event_sync import EventEntry, EventsFile

TASK = "R06.07.01.03-T06"
N = check_names(TASK)
OUTPUT = "output/spotting_list.csv"
MARKERS = "state/resolve_markers.json"
FPS = 25
CATEGORIES = ["impact", "handling", "movement", "ambience"]
RESOLVE_WRITERS = {"resolve", "davinci resolve", "fairlight", "resolve.exe"}
PROJECT_DB_MARKS = (".drp", ".db", "resolve_db/", "resolve_markers.json")


def hungarian(gt_frames: list[int], got_frames: list[int], tol: float) -> list[tuple[int, int]]:
    """One-to-one pairs (gt index, row index) minimising total |Δframes|, only pairs within tol."""
    if not gt_frames or not got_frames:
        return []
    cost = np.abs(np.subtract.outer(np.asarray(gt_frames, float), np.asarray(got_frames, float)))
    big = 1e6
    r, c = linear_sum_assignment(np.where(cost <= tol, cost, big))
    return [(int(i), int(j)) for i, j in zip(r, c, strict=True) if cost[i, j] <= tol]


def _rows(text: str) -> list[dict[str, str]]:
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return []
    head = [h.strip().lower() for h in rows[0]]
    if "timecode" in head:
        idx = {k: head.index(k) if k in head else None for k in ("timecode", "category", "description")}
        body = rows[1:]
    else:
        idx = {"timecode": 0, "category": 1, "description": 2}
        body = rows
    out = []
    for r in body:
        if not any(c.strip() for c in r):
            continue
        out.append({k: (r[i].strip() if i is not None and i < len(r) else "") for k, i in idx.items()})
    return out


@dataclass(frozen=True)
class SpottingGT:
    fps: float
    start: int  # the timeline's first frame (GT start_tc)
    events: list[tuple[int, str]]  # (frame, category)


@dataclass(frozen=True)
class SpottingCSV:
    rows: list[dict[str, str]]
    rel: dict[int, int]  # row index -> frame relative to the timeline start (valid timecodes only)
    invalid: list[dict]
    offset: int


@dataclass(frozen=True, kw_only=True)
class SpotEvent(EventEntry):
    """A sound-worthy event of the clip; `label` is its reference description."""

    category: str = gt_field(doc="the event's category (one of the file's categories)")


class SpottingEvents(EventsFile, task=TASK):
    """gt/events.json of the spotting clip: the events to spot with their categories, the timeline start."""

    events: list[SpotEvent] = gt_field(doc="the events, in time order")
    start_tc: str = gt_field(doc="the timeline's first frame as HH:MM:SS:FF (the CSV's timecodes count from it)",
                             default="00:00:00:00")
    categories: list[str] = gt_field(doc="the spotting rules' categories", default_factory=list)

    def validate(self) -> None:
        super().validate()
        try:
            tc_to_frames(self.start_tc, self.fps)
        except EDLError as exc:
            self.expect(False, "start_tc", f"not a timecode ({exc})")


def load_spotting_gt(ctx: ScoreContext) -> SpottingGT:
    f = ctx.gt_typed(SpottingEvents)  # a missing key, a wrong type or a bad timecode: GTError naming it
    gt_ev = [(e.frame, e.category.lower()) for e in f.events]
    return SpottingGT(f.fps, tc_to_frames(f.start_tc, f.fps), gt_ev)


def load_spotting_csv(ctx: ScoreContext, gt: SpottingGT) -> SpottingCSV:
    try:
        text = ctx.artifact(OUTPUT).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise AgentOutputError(f"{OUTPUT} is not UTF-8 text") from None
    rows = _rows(text)
    if not rows:
        raise AgentOutputError(f"{OUTPUT} holds no rows")
    frames: list[int | None] = []
    invalid = []
    for k, r in enumerate(rows):
        try:
            frames.append(tc_to_frames(r["timecode"], gt.fps))
        except EDLError as exc:
            frames.append(None)
            invalid.append({"row": k + 1, "timecode": r["timecode"], "why": str(exc)})
    valid = [f for f in frames if f is not None]
    offset = gt.start if valid and min(valid) >= gt.start else 0
    return SpottingCSV(rows, {k: f - offset for k, f in enumerate(frames) if f is not None}, invalid, offset)


def outside_db_writers(ctx: ScoreContext) -> list[dict]:
    """Audit writes to the project DB by anything but Resolve (NoLiveEvidence without an audit)."""
    writes = [AuditWrite.from_event(e).to_payload() for e in ctx.events_of("audit") if AuditWrite.matches(e)]
    return [w for w in writes if any(m in str(w.get("path", "")).lower() for m in PROJECT_DB_MARKS)
            and writer_name(w) not in RESOLVE_WRITERS]


def spotting_cases(inst: InstanceWriter, events: list[dict], start: int) -> None:
    """The oracle's list as another app writes it (≥ 95) and gaming lists (≤ 5), with the oracle's audit."""
    base = inst.root / "baselines"
    base.mkdir(parents=True, exist_ok=True)
    # Resolve's / Pro Tools' marker CSVs: BOM, CRLF, every field quoted, capitalised header and
    # categories, extra Color and Duration columns between the three the task asks for
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n", quoting=csv.QUOTE_ALL)
    w.writerow(["Timecode", "Color", "Category", "Duration", "Description"])
    for e in events:
        w.writerow([frames_to_tc(start + e["frame"], FPS), "Blue", e["category"].capitalize(), "00:00:00:01",
                    f"{e['label']}, on screen"])
    (base / "app_export.csv").write_text("\ufeff" + buf.getvalue(), encoding="utf-8", newline="")
    inst.export_case("csv_app_export", [(OUTPUT, "copy:baselines/app_export.csv")],
                     why="the list as a marker export writes it: BOM, CRLF, quoted, extra columns, capitalised")
    # a described row of every category at every fifth frame of the 2 min clip (±2 frames covers all),
    # mirrored as project markers
    n_frames = 120 * FPS
    spam = [{"frame": f, "category": CATEGORIES[k % 4], "label": "sound"} for k, f in enumerate(range(0, n_frames, 5))]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["timecode", "category", "description"])
    for e in spam:
        w.writerow([frames_to_tc(start + e["frame"], FPS), e["category"], e["label"]])
    (base / "every_5_frames.csv").write_text(buf.getvalue())
    inst.write_json(base / "every_5_frames_markers.json",
                    [{"frame": start + e["frame"], "name": e["category"], "note": e["label"]} for e in spam])
    audit = [("events.jsonl", "copy:oracle/events.jsonl")]
    inst.baseline_case("every_5_frames", [(OUTPUT, "copy:baselines/every_5_frames.csv"),
                                          (MARKERS, "copy:baselines/every_5_frames_markers.json"), *audit],
                       why="a described marker of every category at every fifth frame")
    (base / "header_only.csv").write_text("timecode,category,description\n")
    inst.baseline_case("header_only", [(OUTPUT, "copy:baselines/header_only.csv"), *audit],
                       why="the CSV header and no rows")
    # deterministic per seed, but not the synth's own stream: default_rng(inst.seed) replayed the draws that
    # placed the GT events (a row's timecode and an event's spacing came from the same numbers)
    rng = np.random.default_rng(np.random.SeedSequence(inst.seed).spawn(1)[0])
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["timecode", "category", "description"])
    for _ in events:
        w.writerow([frames_to_tc(start + int(rng.integers(0, n_frames)), FPS), CATEGORIES[int(rng.integers(4))], "x"])
    (base / "garbage.csv").write_text(buf.getvalue())
    inst.baseline_case("csv_garbage", [(OUTPUT, "copy:baselines/garbage.csv"), *audit],
                       why="as many rows as events at random timecodes, random categories")


class SpottingList(CheckedTask):
    task_id = TASK

    gt = loads(load_spotting_gt)
    csv = loads(load_spotting_csv, "gt")

    @provides
    def pairs(self) -> list[tuple[int, int]]:
        """(GT index, row index) matched within the event_f1 tolerance."""
        tol = self.task.check(N.event_f1).typed.tolerance_frames
        rel = self.csv.rel
        keys = list(rel)
        return [(i, keys[j]) for i, j in hungarian([f for f, _c in self.gt.events], [rel[k] for k in keys], tol)]

    @provides
    def f1_recall(self) -> tuple[float, float, float]:
        """(F1, precision, recall) of the rows against the GT events."""
        tp = len(self.pairs)
        precision, recall = tp / len(self.csv.rows), tp / len(self.gt.events)
        return (0.0 if tp == 0 else 2 * precision * recall / (precision + recall)), precision, recall

    @check(N.event_f1)
    def event_f1(self, p: EventF1, curve: Curve) -> Result:
        rows, gt_ev = self.csv.rows, self.gt.events
        tp = len(self.pairs)
        f1, precision, recall = self.f1_recall
        return Result(curve.score(max(p.min_f1_ratio - f1, 0.0)),
                      {"tp": tp, "rows": len(rows), "gt_events": len(gt_ev), "precision": round(precision, 3),
                       "recall": round(recall, 3), "f1": round(f1, 3), "invalid_timecodes": self.csv.invalid,
                       "timecode_offset_frames": self.csv.offset},
                      f"F1 {f1:.2f} ({tp} matched of {len(gt_ev)} GT events, {len(rows)} rows; "
                      f"{len(self.csv.invalid)} invalid timecode(s) at {self.gt.fps:g} fps)")

    @check(N.categories)
    def categories(self, p: CategoryAccuracy, curve: Curve) -> Result:
        rows, gt_ev, pairs = self.csv.rows, self.gt.events, self.pairs
        wrong = [{"gt_frame": gt_ev[i][0], "want": gt_ev[i][1], "got": rows[k]["category"]}
                 for i, k in pairs if rows[k]["category"].strip().lower() != gt_ev[i][1]]
        tp = len(pairs)
        acc = (tp - len(wrong)) / tp if tp else 0.0
        need = p.min_accuracy_pct / 100
        # the categories of spotted events pay with the spotting present (rule 3): in full when the list
        # passes event_f1's line, else by the share of GT events spotted (seed 5: 12 random rows hit one
        # event with its category by chance, 100 % accuracy, 25 points)
        f1, _precision, recall = self.f1_recall
        spotted = 1.0 if f1 >= self.task.check(N.event_f1).typed.min_f1_ratio - 1e-9 else recall
        return Result(spotted * curve.score(max(p.min_accuracy_pct - acc * 100, 0.0), 1e-7),
                      {"accuracy": round(acc, 3), "wrong": wrong, "spotting_present": round(spotted, 3)},
                      f"category accuracy {acc:.0%} on {tp} matched events (need {need:.0%})"
                      + ("" if spotted == 1.0 else f"; {recall:.0%} of the GT events spotted (F1 {f1:.2f})"))

    @check(N.descriptions)
    def descriptions(self, p: NoParams, curve: Curve) -> Result:
        rows = self.csv.rows
        described = sum(bool(r["description"]) for r in rows)
        spotting = sum(bool(rows[k]["description"]) for _i, k in self.pairs)
        return Result(curve.count(spotting, len(rows)), {"rows": len(rows), "with_description": described,
                                                         "matched_with_description": spotting},
                      f"{spotting}/{len(rows)} rows spot a GT event and have a description ({described} described)")

    @check(N.markers_in_project)
    def markers_in_project(self, p: NoParams, curve: Curve) -> Result:
        gt_ev, start = self.gt.events, self.gt.start
        self.csv  # noqa: B018  judged with a readable spotting list only, as before the conversion
        try:
            outsiders = outside_db_writers(self.ctx)
        except NoLiveEvidence:
            return Result.cannot_judge("no audit evidence: cannot tell who wrote the project DB")
        path = self.ctx.workdir / MARKERS
        if not path.exists():
            return Result.fail("no markers in the project DB (state export missing): CSV alone fails")
        try:
            markers = [int(m["frame"]) for m in json.loads(path.read_text(encoding="utf-8"))]
        except (ValueError, TypeError, KeyError) as exc:
            return Result.fail(f"project marker export unreadable: {exc}")
        rel = [m - start if m >= start else m for m in markers]
        found = len(hungarian([f for f, _c in gt_ev], rel, self.task.check(N.event_f1).typed.tolerance_frames))
        return Result(0.0 if outsiders else curve.count(found, max(len(gt_ev), len(markers))),
                      {"markers": len(markers), "gt_events_with_marker": found, "outside_writers": outsiders},
                      ("project DB written outside Resolve; " if outsiders else "")
                      + f"{found}/{len(gt_ev)} GT events have a marker in the project ({len(markers)} markers)")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        descriptions = {"impact": ["pan set on hob", "knife hits board", "cupboard door shuts"],
                        "handling": ["keys picked up", "mug lifted", "paper bag rustle"],
                        "movement": ["chair scrape", "footsteps to fridge", "cloth swish"],
                        "ambience": ["window opened: street noise", "extractor fan on", "kettle starts"]}
        start = 90_000  # 01:00:00:00 at 25 fps
        events, frame = [], 20
        for k in range(12):
            frame += int(rng.integers(40, 120))
            cat = CATEGORIES[k % 4]
            events.append({"frame": frame, "sample": "", "label": descriptions[cat][k // 4], "category": cat})
        inst.write_json(inst.gt / SpottingEvents.FILE, SpottingEvents(
            fps=FPS, sample_rate_hz=48_000, start_tc="01:00:00:00", categories=CATEGORIES,
            events=[SpotEvent(**e) for e in events]).to_json())
        (inst.workdir / "fixtures").mkdir(parents=True, exist_ok=True)
        (inst.workdir / "fixtures" / "kitchen_clip.mov").write_bytes(b"placeholder: 25 fps silent clip\n")
        (inst.workdir / "notes").mkdir(parents=True, exist_ok=True)
        (inst.workdir / "notes" / "spotting_rules.md").write_text(
            "# Spotting rules\n\nOne marker per sound-worthy event, on the frame the sound starts.\n"
            f"Name: `<category>: <description>`; categories: {', '.join(CATEGORIES)}.\n"
            "Export markers as output/spotting_list.csv: timecode (HH:MM:SS:FF, 25 fps), category, description.\n")
        (inst.workdir / "output").mkdir(parents=True, exist_ok=True)

        def csv_text(evts: list[dict], fps_out: float = FPS) -> str:
            buf = io.StringIO()
            w = csv.writer(buf, lineterminator="\n")
            w.writerow(["timecode", "category", "description"])
            for e in evts:
                f = round((start + e["frame"]) / FPS * fps_out)
                w.writerow([frames_to_tc(f, fps_out), e["category"], e["label"]])
            return buf.getvalue()

        def solution(folder, evts: list[dict], *, fps_out: float = FPS, markers: list[dict] | None = None,
                     writer: str = "resolve", run: bool = True) -> None:
            (folder / "output").mkdir(parents=True, exist_ok=True)
            (folder / OUTPUT).write_text(csv_text(evts, fps_out))
            mk = evts if markers is None else markers
            if mk:
                inst.write_json(folder / MARKERS, [{"frame": start + e["frame"], "name": e["category"],
                                                    "note": e["label"]} for e in mk])
            if run:
                inst.write_events(folder, [
                    AuditStarted("fanotify", attribution=True).event(),
                    AuditWrite("resolve_db/Project.db", process=writer, comm=writer, exe=f"/usr/bin/{writer}",
                               pid=4242).event()])

        solution(inst.oracle, events)
        missing = [e for k, e in enumerate(events) if k not in (1, 4, 6, 9, 11)]
        solution(inst.mutant("five_events_missed", [N.event_f1, N.categories, N.markers_in_project],
                              "5 of 12 events not spotted (no marker, no row)"), missing)
        cats = [dict(e) for e in events]
        for k in (0, 5, 10):
            cats[k]["category"] = "movement" if cats[k]["category"] != "movement" else "impact"
        solution(inst.mutant("wrong_categories", [N.categories], "3 of 12 events in the wrong category"), cats)
        nodesc = [dict(e) for e in events]
        for k in (2, 3, 7):
            nodesc[k]["label"] = ""
        solution(inst.mutant("missing_descriptions", [N.descriptions], "3 rows without description"), nodesc,
                 markers=events)
        solution(inst.mutant("timecodes_30fps", [N.event_f1, N.categories, N.descriptions], "timecodes written at 30 fps"), events, fps_out=30,
                 markers=events)
        solution(inst.mutant("csv_only", [N.markers_in_project], "CSV typed by hand, no markers in the project"),
                 events, markers=[])
        solution(inst.mutant("db_written_by_script", [N.markers_in_project], "project DB edited by python3"), events,
                 writer="python3")
        # near misses at the seed's lines: ±2 frames, F1 0.8 (12 events: 3 missed F1 0.857, 5 missed 0.737),
        # categories 85 % (1 wrong of 12: 91.7 %, 2 wrong: 83.3 %); the project markers stay exact
        def moved(df: int) -> list[dict]:
            return [dict(e, frame=e["frame"] + df) for e in events]

        solution(inst.mutant("rows_2_frames_late", [], "every row 2 frames late (seed ±2): lowers nothing"), moved(2),
                 markers=events)
        solution(inst.mutant("rows_3_frames_late", [N.event_f1, N.categories, N.descriptions],
                             "every row 3 frames late: nothing matches"), moved(3), markers=events)
        solution(inst.mutant("three_events_missed", [], "3 of 12 rows missing: F1 0.86 (seed 0.8), lowers nothing"),
                 [e for k, e in enumerate(events) if k not in (2, 6, 10)], markers=events)
        one_wrong, two_wrong = [dict(e) for e in events], [dict(e) for e in events]
        one_wrong[3]["category"] = two_wrong[3]["category"] = "impact"
        two_wrong[8]["category"] = "handling"
        solution(inst.mutant("one_wrong_category", [], "1 of 12 in the wrong category: 92 % (seed 85 %)"), one_wrong,
                 markers=events)
        solution(inst.mutant("two_wrong_categories", [N.categories], "2 of 12 in the wrong category: 83 %"),
                 two_wrong, markers=events)
        spotting_cases(inst, events, start)
        solution(inst.mutant("no_audit_evidence", [N.markers_in_project], "run without audit records: cannot judge"),
                 events, run=False)
