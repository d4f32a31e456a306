"""A bundle is self-contained: copied elsewhere with its work dir and GT moved away, `tally replay
--gt-root` re-scores it from its snapshot to the same report bytes the run wrote."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from monitor.bundle import gt_id_of, locate_gt, snapshot_workdir, tree_sha256
from monitor.cli import main
from monitor.run.session import RunConfig, RunSession
from monitor.sweep.results import read_rows
from tests.sweep.conftest import materialize

TASK = "R06.12.01.01-T01"


def _record(tmp_path, instances):
    inst = instances[TASK]
    work, _ = materialize(inst, inst / "oracle", tmp_path / "machine1" / "work")
    gt = tmp_path / "machine1" / "inst" / "gt"
    shutil.copytree(inst / "gt", gt)
    cfg = RunConfig(task_id=TASK, workdir=work, gt=gt, bundle_dir=tmp_path / "machine1" / "bundle",
                    timeout_s=0.3, install_signals=False)
    result = asyncio.run(RunSession(cfg).execute())
    return result.bundle_dir, work, gt


def test_moved_bundle_replays_to_the_same_bytes(tmp_path, instances, capsys):
    bundle, _work, gt = _record(tmp_path, instances)
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["snapshot"]["complete"] and manifest["snapshot"]["files"]
    assert manifest["gt"] == {"id": gt_id_of(gt), "sha256": tree_sha256(gt), "path": str(gt)}
    assert manifest["scorer"]["sha256"] and manifest["catalog_sha256"] and manifest["tally_version"]
    objects = [p for p in (bundle / "snapshot" / "objects").rglob("*") if p.is_file()]
    assert objects and all(len(p.name) == 64 and p.parent.name == p.name[:2] for p in objects)
    recorded = (bundle / "report.json").read_bytes()
    assert json.loads(recorded)["run"]["scored_from"] == "snapshot"

    # machine 2: the bundle only; the GT sits somewhere else under another parent
    copy = tmp_path / "machine2" / "bundles" / "b1"
    shutil.copytree(bundle, copy)
    hidden = tmp_path / "machine2" / "hidden"
    (hidden / "inst").parent.mkdir(parents=True)
    shutil.move(gt.parent, hidden / "inst")
    shutil.rmtree(tmp_path / "machine1")
    out = tmp_path / "replayed.json"
    assert main(["replay", str(copy), "--gt-root", str(hidden), "--out", str(out)]) == 0
    assert "scored from the snapshot" in capsys.readouterr().out
    assert out.read_bytes() == recorded

    # without the GT the checks that need it cannot be judged (never an agent's 0)
    shutil.rmtree(hidden)
    assert main(["replay", str(copy), "--out", str(out)]) == 2


def test_snapshot_dedups_and_caps(tmp_path):
    work = tmp_path / "work"
    (work / "a").mkdir(parents=True)
    (work / "a" / "one.txt").write_text("same")
    (work / "two.txt").write_text("same")
    (work / "big.bin").write_bytes(b"x" * 5000)
    snap = snapshot_workdir(tmp_path / "bundle", work, first=["two.txt"], file_cap_bytes=4096)
    assert snap["objects"] == 1 and set(snap["files"]) == {"a/one.txt", "two.txt"}
    assert "per-file cap" in snap["skipped"]["big.bin"] and not snap["complete"]


def test_gt_found_by_hash_when_the_id_does_not_match(tmp_path):
    gt = tmp_path / "x" / "gt"
    gt.mkdir(parents=True)
    (gt / "truth.json").write_text("{}")
    record = {"id": "other/gt", "sha256": tree_sha256(gt), "path": "/nowhere"}
    assert locate_gt(record, tmp_path) == (gt, "gt-root sha256")
    assert locate_gt({**record, "sha256": "0" * 64}, tmp_path) == (None, "not found")


def test_sweep_over_a_folder_of_bundles_scores_from_snapshots(tmp_path, instances):
    """Bundles moved to a folder with their GT under --gt-root; a broken bundle is a failed row."""
    bundle, _work, gt = _record(tmp_path, instances)
    recorded = json.loads((bundle / "report.json").read_text())
    folder = tmp_path / "bundles"
    shutil.copytree(bundle, folder / "good")
    (folder / "broken").mkdir()
    (folder / "broken" / "manifest.json").write_text("{not json")
    hidden = tmp_path / "hidden"
    shutil.move(gt.parent, hidden)
    shutil.rmtree(tmp_path / "machine1")
    out = tmp_path / "sweep"
    assert main(["sweep", "score", str(folder), "--out", str(out), "--workers", "1", "--gt-root", str(tmp_path),
                 "--label", "agent=oracle"]) == 0
    rows = {Path(r["item"]).name: r for r in read_rows(out / "results.jsonl")}
    assert rows["broken"]["status"] == "failed" and "unreadable manifest" in rows["broken"]["error"]
    good = rows["good"]
    assert good["status"] == "scored" and good["scored_from"] == "snapshot" and good["labels"] == {"agent": "oracle"}
    assert good["score"] == recorded["score"]
    assert json.loads((out / "reports" / f"{good['key_id']}.json").read_text()) == recorded
