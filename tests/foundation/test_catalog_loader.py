"""The catalog as loaded by the product: 80 tasks, weights sum to 100, registry is consistent."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from verifiers.catalog import FAMILIES, load_catalog
from verifiers.registry import implemented_ids


def test_catalog_has_80_tasks_20_per_family():
    cat = load_catalog()
    assert len(cat) == 80
    for fam in FAMILIES:
        assert len(cat.family(fam)) == 20, fam
    for t in cat:
        assert abs(sum(c.weight for c in t.checks) - 100) < 1e-9, t.id


def test_every_registered_verifier_matches_a_catalog_task_and_its_checks():
    cat = load_catalog()
    for tid in implemented_ids():
        assert tid in cat.tasks, f"verifier registered for unknown task {tid}"


def test_tasks_json_cli_lists_implemented_column():
    r = subprocess.run([sys.executable, "-m", "monitor.cli", "tasks", "--json"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    assert len(rows) == 80
    by_id = {r["id"]: r for r in rows}
    assert by_id["R06.07.01.03-T14"]["implemented"] is True
    assert all(r["weight_total"] == 100 for r in rows)


def test_short_task_ids_resolve_within_a_family_and_ambiguity_is_refused():
    """`tally selftest --family sound --task T11` must mean sound's T11; bare `T11` names four tasks."""
    cat = load_catalog()
    full = cat.family("sound")[10].id
    assert cat.resolve(full) == full
    assert cat.resolve("T11", "sound") == full
    assert cat.resolve("t11", "sound") == full
    with pytest.raises(KeyError, match="ambiguous"):
        cat.resolve("T11")
    with pytest.raises(KeyError, match="unknown task"):
        cat.resolve("T99", "sound")
