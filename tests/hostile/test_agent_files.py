"""Issue 20 item 4/5: hostile agent files are scored as the agent's `fail`, quickly, in bounded
memory, and nothing of a link's target reaches the report.

Each attack is laid over the oracle's work dir of a synthetic instance (which scores well), then
scored in a child interpreter (peak RSS is per process; the subprocess timeout is a hang guard
for the FIFO). Cost per attack is printed (`-s`) and kept in the issue note."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.hostile.attacks import deep_json, gzip_bomb, huge_png
from tests.hostile.conftest import score_in_child

SPOT = "R06.07.01.03-T06"  # sound: output/spotting_list.csv (csv), state/resolve_markers.json (json)
PHONE = "R06.04.02.02-T16"  # grading: input/ui_ref.png (cv2.imread)
GRASS = "R06.04.02.02-T08"  # grading: state/project.prproj (gzip XML)
MAX_RSS_MB = 500
PASSWD_FIRST_LINE = Path("/etc/passwd").read_text().splitlines()[0]


def _symlink(target: str):
    def make(path: Path) -> None:
        path.unlink(missing_ok=True)
        path.symlink_to(target)
    return make


def _fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def _deep(path: Path) -> None:
    deep_json(path)


def _png(path: Path) -> None:
    huge_png(path)


@pytest.fixture(scope="session")
def bomb(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bomb") / "project.prproj"
    gzip_bomb(path)
    return path


ATTACKS = {
    "csv_symlink_passwd": (SPOT, "output/spotting_list.csv", _symlink("/etc/passwd"), "symbolic link"),
    "json_symlink_shadow": (SPOT, "state/resolve_markers.json", _symlink("/etc/shadow"), "symbolic link"),
    "csv_fifo": (SPOT, "output/spotting_list.csv", _fifo, "FIFO"),
    "csv_symlink_dev_zero": (SPOT, "output/spotting_list.csv", _symlink("/dev/zero"), "symbolic link"),
    "json_100k_deep": (SPOT, "state/resolve_markers.json", _deep, "nested"),
    "png_30000x30000": (PHONE, "input/ui_ref.png", _png, "pixels"),
    "prproj_gzip_bomb": (GRASS, "state/project.prproj", None, "gzip"),
}


def _oracle_scores(oracle_workdir, task: str) -> dict:
    work, gt = oracle_workdir(task)
    return score_in_child(task, work, gt)["report"]


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_hostile_agent_file_is_the_agents_fail(name, oracle_workdir, bomb):
    task, rel, make, fragment = ATTACKS[name]
    work, gt = oracle_workdir(task)
    target = work / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    if make is None:
        target.unlink(missing_ok=True)
        os.link(bomb, target) if os.stat(bomb).st_dev == os.stat(target.parent).st_dev else target.write_bytes(bomb.read_bytes())
    else:
        make(target)
    out = score_in_child(task, work, gt)
    report = out["report"]
    print(f"\n{name}: {out['elapsed_s']:.2f} s, peak RSS {out['peak_rss_mb']:.0f} MB "
          f"(after imports {out['import_rss_mb']:.0f} MB)")
    checks = report["checks"]
    assert all(c["status"] == "fail" for c in checks), [(c["name"], c["status"], c["message"]) for c in checks]
    messages = " | ".join(c["message"] for c in checks)
    assert rel in messages and fragment in messages, messages
    text = json.dumps(report)
    assert PASSWD_FIRST_LINE not in text and "root:" not in text
    assert out["peak_rss_mb"] <= MAX_RSS_MB


def test_the_oracle_still_passes_the_pre_flight(oracle_workdir):
    """The checks above fail because of the attack, not because the pre-flight refuses good files."""
    for task in (SPOT, PHONE, GRASS):
        report = _oracle_scores(oracle_workdir, task)
        assert not any("refused" in c["message"] for c in report["checks"]), report["checks"]
        assert report["score"] > 0, (task, report["checks"])
