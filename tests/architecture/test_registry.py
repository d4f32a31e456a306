"""The lazy registry: the source index finds the same scorers importing every module registers,
and `tally tasks` lists the catalog without importing any scorer."""

from __future__ import annotations

import json
import subprocess
import sys

from verifiers.catalog import load_catalog
from verifiers.registry import import_all, scorer_index


def test_index_equals_what_importing_registers() -> None:
    index = scorer_index()
    registered = import_all()
    assert set(index) == set(registered)
    for tid, cls in registered.items():
        assert (index[tid].module, index[tid].cls) == (cls.__module__, cls.__name__), tid


def test_tally_tasks_imports_no_scorer() -> None:
    """Run the command in a fresh interpreter and look at what it imported."""
    code = ("import sys, io, contextlib\n"
            "from monitor.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    main(['tasks', '--json'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('verifiers.tasks.')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_tasks_json_carries_curve_and_scorer(capsys) -> None:
    from monitor.cli import main

    assert main(["tasks", "--json", "--family", "streaming"]) == 0
    rows = json.loads(capsys.readouterr().out)
    t01 = next(r for r in rows if r["id"] == "R06.12.01.01-T01")
    assert t01["scorer"] == {"module": "verifiers.tasks.streaming.t01_weekly_gui", "class": "WeeklyStreamGui"}
    cam = next(c for c in t01["checks"] if c["name"] == "cam_geometry")
    assert cam["curve"] == {"kind": "threshold"}  # the seed's +-2 px is the pass line (issue 21)
    assert all("kind" in c["curve"] for r in rows for c in r["checks"])


def test_tasks_where_prints_module_class_and_file(capsys) -> None:
    from monitor.cli import main

    assert main(["tasks", "--where"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(load_catalog())
    t05 = next(line for line in lines if line.startswith("R06.12.01.01-T05"))
    assert "verifiers.tasks.streaming.t05_rtmp_stream:RtmpStream" in t05 and t05.endswith("t05_rtmp_stream.py")
