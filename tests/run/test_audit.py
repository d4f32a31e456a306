"""File audit: fanotify names the writer (cp, a test app with a distinctive argv); inotify does not."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys

import pytest

from monitor.audit.component import AuditComponent
from monitor.audit.procinfo import matches_forbidden
from monitor.bus import EventBus

APP = "import sys, time; open(sys.argv[1], 'w').write('made by the app'); time.sleep(0.05)"


def _write_with_cp(src, dst) -> int:
    return subprocess.run(["cp", str(src), str(dst)], check=True).returncode


async def _audited(tmp_path, mode: str, forbidden=()):
    work = tmp_path / "work"
    (work / "output").mkdir(parents=True)
    bus = EventBus()
    events = []
    bus.add_sink(events.append)
    audit = AuditComponent(work, forbidden=forbidden, mode=mode)
    await audit.start(bus)
    return work, bus, events, audit


async def test_fanotify_attributes_cp_and_the_app(tmp_path):
    work, _bus, events, audit = await _audited(tmp_path, "fanotify")
    assert audit.mode == "fanotify"
    src = tmp_path / "source.txt"
    src.write_text("copied")
    await asyncio.to_thread(_write_with_cp, src, work / "output" / "copied.txt")
    app_argv = [sys.executable, "-c", APP, str(work / "output" / "app.txt"), "--tally-test-app-7f3a"]
    await asyncio.to_thread(subprocess.run, app_argv, check=True)
    await asyncio.sleep(0.2)
    await audit.stop()

    written = {e.payload["path"]: e.payload for e in events if e.source == "audit" and e.kind == "write"}
    cp_rec = written["output/copied.txt"]
    assert (cp_rec["exe"] or "").endswith("/cp") and cp_rec["process"] == "cp", cp_rec
    assert cp_rec["cmdline"][0] == "cp" and cp_rec["cmdline"][-1].endswith("copied.txt")
    app_rec = written["output/app.txt"]
    assert app_rec["cmdline"] is not None and "--tally-test-app-7f3a" in app_rec["cmdline"], app_rec
    assert "python" in (app_rec["exe"] or app_rec["comm"])
    assert app_rec["pid"] != cp_rec["pid"]
    # The manifest's writer map holds the same attribution.
    assert audit.writers["output/app.txt"]["pid"] == app_rec["pid"]
    assert audit.summary()["attribution"] is True
    # Files outside the work dir are not reported.
    assert all(not p.startswith("..") for p in written)


async def test_every_short_lived_cp_is_named(tmp_path):
    """cp exits microseconds after close(); the open-time snapshot must still name it every time."""
    work, _bus, events, audit = await _audited(tmp_path, "fanotify")
    (work / "output" / "late").mkdir()  # created after start: marked by the rescan
    await asyncio.sleep(0.8)
    src = tmp_path / "s.bin"
    src.write_bytes(b"x" * 100)
    n = 25
    for i in range(n):
        await asyncio.to_thread(_write_with_cp, src, work / "output" / "late" / f"c{i}.bin")
    await asyncio.sleep(0.3)
    await audit.stop()
    recs = [e.payload for e in events if e.kind == "write"]
    assert len(recs) == n
    named = [r for r in recs if (r["exe"] or "").endswith("/cp")]
    assert len(named) == n, [r for r in recs if r not in named][:3]


async def test_inotify_fallback_sees_files_but_not_writers(tmp_path):
    work, _bus, events, audit = await _audited(tmp_path, "inotify")
    assert audit.mode == "inotify"
    (work / "output" / "nested").mkdir()
    await asyncio.sleep(0.1)  # the new directory gets its watch
    src = tmp_path / "s.txt"
    src.write_text("x")
    await asyncio.to_thread(_write_with_cp, src, work / "output" / "nested" / "a.txt")
    await asyncio.sleep(0.2)
    await audit.stop()
    written = [e.payload for e in events if e.kind == "write"]
    assert [w["path"] for w in written] == ["output/nested/a.txt"]
    assert written[0]["pid"] is None and written[0]["exe"] is None
    assert audit.summary()["attribution"] is False


@pytest.mark.skipif(shutil.which("ffprobe") is None, reason="ffprobe not installed")
async def test_forbidden_program_is_recorded_with_its_argv(tmp_path):
    work, _bus, events, audit = await _audited(tmp_path, "fanotify", forbidden=("ffprobe",))
    await asyncio.to_thread(subprocess.run, ["ffprobe", "-hide_banner", "-version"], cwd=work,
                            stdout=subprocess.DEVNULL, check=True)
    await asyncio.sleep(0.4)
    await audit.stop()
    hits = [e.payload for e in events if e.kind == "forbidden_exec" and e.payload["near_workdir"]]
    assert hits, [e.payload for e in events if e.kind == "forbidden_exec"]
    assert hits[0]["forbidden"] == "ffprobe" and hits[0]["exe"].endswith("ffprobe")


def test_forbidden_name_matching():
    assert matches_forbidden("python3.11", ("python",)) == "python"
    assert matches_forbidden("ffmpeg", ("ffmpeg", "sox")) == "ffmpeg"
    assert matches_forbidden("ffmpegthumbnailer", ("ffmpeg",)) is None
    assert matches_forbidden("bash", ("sh",)) is None
