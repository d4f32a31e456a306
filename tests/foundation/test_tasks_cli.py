"""`tally tasks` piped: one tab-separated line per catalog task, the table's columns, without rich
(issue 17: the command must start fast; rich's import and layout were a third of it)."""

from __future__ import annotations

import subprocess
import sys

from verifiers.catalog import load_catalog
from verifiers.registry import scorer_index


def test_piped_output_is_one_line_per_task_and_imports_no_rich():
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "monitor.cli", "tasks"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert " rich" not in r.stderr  # -X importtime lists every module imported
    header, *lines = r.stdout.splitlines()
    assert header.split("\t") == ["id", "family", "impl", "live", "checks", "title"]
    cat, done = load_catalog(), set(scorer_index())
    rows = {ln.split("\t")[0]: ln.split("\t") for ln in lines}
    assert list(rows) == [t.id for t in cat]
    for t in cat:
        _id, family, impl, live, checks, title = rows[t.id]
        assert (family, title, live) == (t.family, t.title, ",".join(sorted(t.live)))
        assert impl == ("yes" if t.id in done else "-")
        assert checks.split() == [f"{c.name}:{c.weight:g}" for c in t.checks]
