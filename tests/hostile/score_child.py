"""Score one work dir in a fresh interpreter and print the report with the child's cost.

Why a child: peak RSS (VmHWM) is per process, and a hostile file that hangs the scorer must
not hang the test run (the parent's subprocess timeout is the hang guard)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def peak_rss_kb() -> int:
    """This process's own high-water RSS (VmHWM). Not ru_maxrss: Linux keeps that across execve, so a
    child started by a 600 MB pytest worker would report the worker's peak as its own."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status")


def main() -> None:
    task, workdir, gt = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    from verifiers.scoring import score_task

    before_kb = peak_rss_kb()
    t0 = time.monotonic()
    report = score_task(task, workdir, gt).to_dict()
    elapsed_s = time.monotonic() - t0
    peak_kb = peak_rss_kb()
    print(json.dumps({"report": report, "elapsed_s": elapsed_s, "peak_rss_mb": peak_kb / 1024,
                      "import_rss_mb": before_kb / 1024}))


if __name__ == "__main__":
    main()
