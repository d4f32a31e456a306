"""The scorer's choke points in isolation: ScoreContext.artifact()/input(), the typed readers,
and scoring's net for hostile files a scorer reads without them (RecursionError → fail)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.hostile.attacks import deep_json, gzip_bomb, huge_png
from verifiers import scoring
from verifiers.base import AgentOutputError, GTError, ScoreContext
from verifiers.catalog import load_catalog
from verifiers.measure import safe_io

SPOT = "R06.07.01.03-T06"


@pytest.fixture
def ctx(tmp_path) -> ScoreContext:
    work = tmp_path / "work"
    (work / "output").mkdir(parents=True)
    (work / "state").mkdir()
    return ScoreContext(load_catalog().get(SPOT), work, tmp_path / "gt")


def test_regular_files_pass_and_links_specials_and_escapes_do_not(ctx, tmp_path):
    (ctx.workdir / "output" / "spotting_list.csv").write_text("a,b\n")
    assert ctx.artifact("output/spotting_list.csv").read_text() == "a,b\n"
    assert ctx.read_text("output/spotting_list.csv") == "a,b\n"
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    cases = {
        "output/link.csv": lambda p: p.symlink_to(outside),
        "output/zero.csv": lambda p: p.symlink_to("/dev/zero"),
        "output/fifo.csv": lambda p: os.mkfifo(p),
    }
    for rel, make in cases.items():
        make(ctx.workdir / rel)
        with pytest.raises(AgentOutputError, match="refused"):
            ctx.artifact(rel)
        with pytest.raises(AgentOutputError):
            ctx.read_bytes(rel)
    (ctx.workdir / "linked_dir").symlink_to(tmp_path)  # a symlinked component on the way
    with pytest.raises(AgentOutputError, match="component linked_dir"):
        ctx.artifact("linked_dir/secret.txt")
    for rel in ("../secret.txt", "/etc/passwd"):
        with pytest.raises(AgentOutputError, match="not a path inside"):
            ctx.artifact(rel)
    with pytest.raises(AgentOutputError, match="missing"):
        ctx.artifact("output/absent.csv")
    with pytest.raises(GTError):
        ctx.input("absent/input.txt")
    (ctx.workdir / "input.txt").symlink_to("/etc/passwd")
    with pytest.raises(AgentOutputError, match="task input refused"):
        ctx.input("input.txt")


def test_size_caps_per_kind(ctx):
    path = ctx.workdir / "output" / "spotting_list.csv"  # kind csv: 16 MiB
    with open(path, "wb") as fh:
        fh.truncate(safe_io.KIND_CAP_BYTES["csv"] + 1)  # sparse: no disk used
    with pytest.raises(AgentOutputError, match="byte limit for a csv"):
        ctx.artifact("output/spotting_list.csv")


def test_typed_readers(ctx, tmp_path):
    deep_json(ctx.workdir / "state" / "resolve_markers.json")
    with pytest.raises(AgentOutputError, match="nested 100000 levels"):
        ctx.json("state/resolve_markers.json")
    (ctx.workdir / "state" / "deep.xml").write_text("<a>" * 1000 + "</a>" * 1000)
    with pytest.raises(AgentOutputError, match="XML nested deeper"):
        ctx.xml("state/deep.xml")
    gzip_bomb(ctx.workdir / "state" / "p.prproj", inflated_bytes=safe_io.MAX_INFLATE_BYTES + (16 << 20))
    with pytest.raises(AgentOutputError, match="inflates past"):
        ctx.xml("state/p.prproj", gzip_ok=True)
    huge_png(ctx.workdir / "output" / "big.png", 10000, 10000)
    with pytest.raises(AgentOutputError, match="pixel"):
        ctx.image("output/big.png")


def test_recursion_in_an_unrouted_reader_is_the_agents_fail(tmp_path, monkeypatch):
    """T06 reads its JSON with json.loads itself; without the pre-flight, the RecursionError must
    still come out as `fail` (it used to be `error`, so the report said incomplete and the score of
    the judged checks rose from 90 to 100)."""
    from verifiers.synth import overlay, synth_instance

    inst = synth_instance(SPOT, tmp_path / "inst")
    work = tmp_path / "work"
    overlay(inst / "workdir", inst / "oracle", work)
    deep_json(work / "state" / "resolve_markers.json")
    monkeypatch.setattr(scoring, "refused_files", lambda task, workdir: [])
    audit = [{"seq": 0, "source": "audit", "kind": "started", "payload": {"mode": "fanotify"}}]
    report = scoring.score_task(SPOT, work, inst / "gt", events=audit).to_dict()
    statuses = {c["name"]: c["status"] for c in report["checks"]}
    assert "error" not in statuses.values(), report["checks"]
    assert statuses["markers_in_project"] == "fail"
    msg = next(c["message"] for c in report["checks"] if c["name"] == "markers_in_project")
    assert "nested too deeply" in msg or "nested" in msg


def test_inspect_passes_ordinary_files(tmp_path):
    (tmp_path / "a.json").write_text('{"x": [1, {"y": [2]}]}')
    (tmp_path / "img.png").write_bytes(b"not really a png")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.txt").write_text("x")
    assert safe_io.inspect(tmp_path, "a.json", "json") is None
    assert safe_io.inspect(tmp_path, "img.png", "image") is None  # unreadable images: the scorer's call
    assert safe_io.inspect(tmp_path, "d", "dir") is None
    assert safe_io.inspect(tmp_path, "absent", "any") is None
    (tmp_path / "d" / "evil").symlink_to("/etc")
    assert "symbolic link" in safe_io.inspect(tmp_path, "d", "dir")
    assert Path(tmp_path / "d" / "evil").is_symlink()
