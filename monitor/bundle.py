"""Run bundles: the folder a run leaves behind, re-scorable anywhere.

Layout: `events.jsonl` (one Event a line), `manifest.json` (run facts and artifacts with size,
sha256 and writer), `captures/` (recordings, probe data), `report.json` (the score), and
`snapshot/objects/<sha256[:2]>/<sha256>`: the work dir's files as the run left them, stored once
per content, so the bundle can be re-scored on a machine that never saw the work dir (the GT is
never copied in; the manifest records its id and sha256 and a replay finds it with --gt-root).

Events are appended with one `os.write` per line on an O_APPEND descriptor, so a run killed
with SIGKILL loses at most a torn last line; the reader skips it and says so. JSON files are
written to a temporary name and renamed, so they are either old or new, never half.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from monitor.events import EVENT_SCHEMA_VERSION, Event, EventDecodeError

EVENTS_NAME = "events.jsonl"
MANIFEST_NAME = "manifest.json"
REPORT_NAME = "report.json"
CAPTURES_DIR = "captures"
SNAPSHOT_DIR = "snapshot"
#: A work dir file bigger than this is left out of the snapshot (with a note saying so).
SNAPSHOT_FILE_CAP_BYTES = int(os.environ.get("TALLY_SNAPSHOT_FILE_CAP_BYTES", 512 << 20))
#: Files beyond this total are left out too (declared artifacts are stored first).
SNAPSHOT_TOTAL_CAP_BYTES = int(os.environ.get("TALLY_SNAPSHOT_TOTAL_CAP_BYTES", 4 << 30))


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


# -- content of folders --------------------------------------------------------------------------


def tree_entries(root: Path) -> list[tuple[str, int, str]]:
    """(relative path, size, sha256) of every regular file under root, sorted; symlinks skipped."""
    root = Path(root)
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_symlink() or not path.is_file():
                continue
            out.append((path.relative_to(root).as_posix(), path.stat().st_size, sha256_file(path)))
    return sorted(out)


def tree_sha256(root: Path) -> str:
    """One digest of a folder's content (names and bytes, not times): 'the same GT', 'the same work dir'."""
    digest = hashlib.sha256(b"tally.tree/1\n")
    for rel, size, sha in tree_entries(root):
        digest.update(f"{rel}\0{size}\0{sha}\n".encode())
    return digest.hexdigest()


# -- the artifact snapshot -------------------------------------------------------------------------


def _object_path(root: Path, sha: str) -> Path:
    return Path(root) / SNAPSHOT_DIR / "objects" / sha[:2] / sha


def snapshot_workdir(root: Path, workdir: Path, first: Iterable[str] = (), exclude: Iterable[Path] = (),
                     file_cap_bytes: int | None = None, total_cap_bytes: int | None = None) -> dict[str, Any]:
    """Store every file of the work dir in the bundle, content-addressed; the manifest's `snapshot`.

    Why the whole work dir and not only the catalog's artifacts: scorers also read inputs and
    configs they find there (OBS's profile and scene collection), mostly through C libraries
    (libav, libsndfile, OpenCV) whose opens cannot be traced from Python; a snapshot missing one
    of them would re-score differently. Declared artifacts (`first`) are stored before the rest,
    so a total cap drops inputs before outputs. A file over a cap is not stored and is named,
    with the reason, under `skipped`.
    """
    file_cap = SNAPSHOT_FILE_CAP_BYTES if file_cap_bytes is None else file_cap_bytes
    total_cap = SNAPSHOT_TOTAL_CAP_BYTES if total_cap_bytes is None else total_cap_bytes
    workdir = Path(workdir)
    excluded = [Path(p).resolve() for p in exclude]
    paths: list[str] = []
    for dirpath, dirnames, filenames in os.walk(workdir):
        here = Path(dirpath).resolve()
        dirnames[:] = sorted(d for d in dirnames if (here / d).resolve() not in excluded)
        for name in filenames:
            path = Path(dirpath) / name
            if not path.is_symlink() and path.is_file():
                paths.append(path.relative_to(workdir).as_posix())
    declared = [p.rstrip("/") for p in first]
    def rank(rel: str) -> tuple[int, str]:
        hit = any(rel == d or rel.startswith(d + "/") for d in declared)
        return (0 if hit else 1, rel)
    files: dict[str, dict[str, Any]] = {}
    skipped: dict[str, str] = {}
    stored_bytes = 0
    for rel in sorted(paths, key=rank):
        src = workdir / rel
        size = src.stat().st_size
        if size > file_cap:
            skipped[rel] = f"{size} bytes exceeds the snapshot's per-file cap of {file_cap} bytes: not stored"
            continue
        if stored_bytes + size > total_cap:
            skipped[rel] = f"storing it would exceed the snapshot's total cap of {total_cap} bytes: not stored"
            continue
        sha = sha256_file(src)
        obj = _object_path(root, sha)
        if not obj.exists():
            obj.parent.mkdir(parents=True, exist_ok=True)
            tmp = obj.with_name(f".{sha}.tmp{os.getpid()}")
            shutil.copyfile(src, tmp)
            os.replace(tmp, obj)
            stored_bytes += size
        files[rel] = {"sha256": sha, "size_bytes": size}
    objects = len({f["sha256"] for f in files.values()})
    return {"version": 1, "files": dict(sorted(files.items())), "skipped": dict(sorted(skipped.items())),
            "complete": not skipped, "objects": objects, "stored_bytes": stored_bytes,
            "file_cap_bytes": file_cap, "total_cap_bytes": total_cap}


def materialize_snapshot(root: Path, snapshot: dict[str, Any], dest: Path) -> list[str]:
    """Lay the snapshot's files out under dest (hard links where possible); problems as lines."""
    problems = []
    dest = Path(dest)
    for rel, entry in sorted((snapshot.get("files") or {}).items()):
        if rel.startswith("/") or ".." in Path(rel).parts:
            problems.append(f"snapshot entry {rel!r} is not a relative path: skipped")
            continue
        obj = _object_path(root, str(entry.get("sha256", "")))
        if not obj.is_file():
            problems.append(f"snapshot object of {rel} is missing from the bundle")
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(obj, target)
        except OSError:
            shutil.copyfile(obj, target)
    for rel, why in sorted((snapshot.get("skipped") or {}).items()):
        problems.append(f"work dir file {rel} is not in the snapshot ({why})")
    return problems


# -- the hidden GT: recorded by id and hash, never copied --------------------------------------------


def gt_id_of(gt: Path) -> str:
    """A GT's id: its folder name, with the parent's when the name alone says nothing ('gt')."""
    gt = Path(gt)
    return f"{gt.parent.name}/{gt.name}" if gt.name in ("gt", "GT", "") and gt.parent.name else gt.name


def gt_record(gt: Path) -> dict[str, Any]:
    gt = Path(gt)
    return {"id": gt_id_of(gt), "sha256": tree_sha256(gt) if gt.is_dir() else None, "path": str(gt)}


def locate_gt(record: dict[str, Any], gt_root: Path | None) -> tuple[Path | None, str]:
    """Where the GT is on this machine: `gt_root/<id>`, a folder under gt_root (two levels)
    whose content hash matches, or the recorded path. Returns (path or None, how it was found)."""
    want = record.get("sha256")
    if gt_root is not None:
        gt_root = Path(gt_root)
        gid = str(record.get("id") or "")
        for cand in (gt_root / gid, gt_root / Path(gid).name) if gid else ():
            if cand.is_dir():
                return cand, "gt-root id"
        if want:
            level1 = sorted(p for p in gt_root.iterdir() if p.is_dir()) if gt_root.is_dir() else []
            for cand in [gt_root, *level1, *(q for p in level1 for q in sorted(p.iterdir()) if q.is_dir())]:
                if tree_sha256(cand) == want:
                    return cand, "gt-root sha256"
    recorded = record.get("path")
    if recorded and Path(recorded).is_dir():
        return Path(recorded), "recorded path"
    return None, "not found"


# -- what a re-score reads ---------------------------------------------------------------------------


@dataclass
class ScoringInputs:
    """The work dir and GT a re-score reads, and how to write paths back as recorded."""

    workdir: Path
    gt: Path
    scored_from: str  # snapshot | workdir
    notes: list[str] = field(default_factory=list)
    #: actual path -> recorded path, applied to every string of the report (same bytes anywhere)
    relocate: dict[str, str] = field(default_factory=dict)
    gt_info: dict[str, Any] = field(default_factory=dict)
    gt_found: str = ""  # how the GT was found (for the user, not the report: it differs by machine)


@contextlib.contextmanager
def scoring_inputs(bundle: Bundle, gt_root: Path | None = None) -> Iterator[ScoringInputs]:
    """Work dir from the snapshot when the bundle has a complete one (else the recorded work dir,
    else the partial snapshot); GT from --gt-root or the recorded path, checked against its sha256."""
    run = bundle.manifest.get("run") or {}
    rec_workdir, rec_gt = str(run.get("workdir", "")), str(run.get("gt", ""))
    snap = bundle.manifest.get("snapshot")
    gt_rec = bundle.manifest.get("gt") or {"id": gt_id_of(Path(rec_gt)), "sha256": None, "path": rec_gt}
    gt_path, gt_found = locate_gt(gt_rec, gt_root)
    notes: list[str] = []
    gt_info = {"id": gt_rec.get("id"), "sha256": gt_rec.get("sha256")}
    if gt_path is None:
        gt_path = Path(rec_gt)  # the scorer says "GT dir ... is not a readable directory"
    elif gt_rec.get("sha256"):
        found = tree_sha256(gt_path)
        gt_info["verified"] = found == gt_rec["sha256"]
        if found != gt_rec["sha256"]:
            notes.append(f"the GT found ({gt_rec.get('id')}) differs from the recorded one: sha256 {found[:12]} "
                         f"!= {str(gt_rec['sha256'])[:12]}")
    use_snapshot = bool(snap) and (snap.get("complete") or not Path(rec_workdir).is_dir())
    with contextlib.ExitStack() as stack:
        if use_snapshot:
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tally-snapshot-")))
            workdir = tmp / "workdir"
            workdir.mkdir()
            notes.extend(materialize_snapshot(bundle.root, snap, workdir))
            scored_from = "snapshot"
        else:
            workdir = Path(rec_workdir)
            scored_from = "workdir"
            if snap:
                notes.append("the snapshot is incomplete; scored from the recorded work dir")
        relocate = {}
        if str(workdir) != rec_workdir and rec_workdir:
            relocate[str(workdir)] = rec_workdir
        if str(gt_path) != rec_gt and rec_gt:
            relocate[str(gt_path)] = rec_gt
        yield ScoringInputs(workdir, gt_path, scored_from, notes, relocate, gt_info, gt_found)


def relocate_strings(obj: Any, mapping: dict[str, str]) -> Any:
    """obj with every occurrence of each key in its strings replaced by its value (longest first)."""
    if not mapping:
        return obj
    keys = sorted(mapping, key=len, reverse=True)

    def fix(value: Any) -> Any:
        if isinstance(value, str):
            for k in keys:
                if k in value:
                    value = value.replace(k, mapping[k])
            return value
        if isinstance(value, dict):
            return {fix(k): fix(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fix(v) for v in value]
        return value

    return fix(obj)


def bundle_sha256(root: Path) -> str:
    """Identity of a bundle for sweeps: its manifest and events (the snapshot is named by hash in
    the manifest); a bundle without a snapshot adds its recorded work dir's content."""
    root = Path(root)
    digest = hashlib.sha256(b"tally.bundle/1\n")
    manifest_bytes = b""
    for name in (MANIFEST_NAME, EVENTS_NAME):
        path = root / name
        data = path.read_bytes() if path.is_file() else b""
        if name == MANIFEST_NAME:
            manifest_bytes = data
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    try:
        manifest = json.loads(manifest_bytes or b"{}")
    except ValueError:
        manifest = {}
    if not manifest.get("snapshot"):
        wd = Path(str((manifest.get("run") or {}).get("workdir", "")))
        if str(wd) and wd.is_dir():
            digest.update(b"workdir\0" + tree_sha256(wd).encode())
    return digest.hexdigest()
