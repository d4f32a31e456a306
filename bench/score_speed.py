"""Scoring speed of every task's oracle against its floor: decoding the media it reads.

For each task: a synthetic instance (cached under out/bench/score_speed/), the oracle laid over the
work dir, then
  1. discovery: the scorer runs once under `strace -f -e trace=openat` in a child process, which
     names every file it really opened (PyAV and libsndfile open files in C, where Python's audit
     hooks do not see them);
  2. floor: PyAV decodes every audio/video stream of those files, one thread, frames discarded;
  3. score: the same scoring call tally makes (verifiers.scoring.score_task), in this process.
Floor and score are interleaved A B A B over --rounds rounds, the best round of each is kept (the
least disturbed by other work on the machine), and CPU time counts every thread of the process.

The goal (issue 16) is score ≤ 2× floor. Tasks over it get a cProfile of one scoring with the
functions where the time goes. Tasks whose files hold no media (OBS JSON, project files) have no
floor: their absolute time is printed instead. Synthetic instances are seconds of small media, so
their floors are milliseconds and a scorer's fixed costs (imports aside: model load, font and
catalog caches are warmed first) weigh more than they would on a real run's minutes of 1080p.

    .venv/bin/python bench/score_speed.py                 # all 80 tasks
    .venv/bin/python bench/score_speed.py --family sound  # one family
    .venv/bin/python bench/score_speed.py --tasks R06.12.01.01-T05 --rounds 3
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import av
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from verifiers.catalog import load_catalog
from verifiers.measure.container import libav_logs_off
from verifiers.scoring import score_task
from verifiers.synth import load_solution_events, overlay, synth_instance

CACHE = Path("out/bench/score_speed")
GOAL_RATIO = 2.0
NO_MEDIA_FLOOR_S = 0.001  # below 1 ms of decoding the ratio would only measure the clock

SCORE_SNIPPET = """
import json, sys
from verifiers.scoring import score_task
from verifiers.synth import load_solution_events
from pathlib import Path
task, work, gt, sol = sys.argv[1:5]
score_task(task, Path(work), Path(gt), load_solution_events(Path(sol)))
"""


@dataclass
class TaskSpeed:
    task: str
    files_read: list[str] = field(default_factory=list)
    media_files: int = 0
    floor_wall_s: float = 0.0
    floor_cpu_s: float = 0.0
    score_wall_s: float = 0.0
    score_cpu_s: float = 0.0
    score: float | None = None
    ratio_cpu: float | None = None
    ratio_wall: float | None = None
    hot: list[str] = field(default_factory=list)
    problem: str = ""


def instance(task_id: str, fresh: bool) -> Path:
    inst = CACHE / task_id
    if fresh or not (inst / "oracle").is_dir():
        synth_instance(task_id, inst, seed=0)
    return inst


def work_dir(inst: Path, tmp: Path) -> Path:
    work = tmp / "work"
    if work.exists():
        shutil.rmtree(work)
    overlay(inst / "workdir", inst / "oracle", work)
    return work


def files_opened(task_id: str, work: Path, gt: Path, solution: Path, tmp: Path) -> list[Path]:
    """Regular files under the work or GT dir the scorer opened, in first-open order."""
    trace = tmp / "trace.txt"
    cmd = ["strace", "-f", "-qq", "-e", "trace=openat,open", "-o", str(trace), sys.executable, "-c", SCORE_SNIPPET,
           task_id, str(work), str(gt), str(solution)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=900, cwd=Path(__file__).resolve().parent.parent)
    seen: dict[Path, None] = {}
    roots = (str(work.resolve()), str(gt.resolve()))
    for line in trace.read_text(errors="replace").splitlines():
        m = re.search(r'open(?:at)?\((?:[^,]+, )?"([^"]+)".*\)\s+=\s+(\d+)', line)
        if not m:
            continue
        path = Path(m.group(1))
        if str(path).startswith(roots) and path.is_file():
            seen.setdefault(path, None)
    return list(seen)


def decode_all(paths: list[Path]) -> tuple[float, float, int]:
    """PyAV decode of every audio/video stream of the files, one thread: (wall s, cpu s, media files)."""
    libav_logs_off()
    media = 0
    w0, c0 = time.perf_counter(), time.process_time()
    for path in paths:
        try:
            container = av.open(str(path))
        except (av.error.FFmpegError, UnicodeDecodeError, ValueError):
            continue
        with container:
            streams = [s for s in container.streams if s.type in ("audio", "video")]
            if not streams:
                continue
            for s in streams:
                s.thread_type = "NONE"
                s.codec_context.thread_count = 1
            try:
                for packet in container.demux(*streams):
                    for _frame in packet.decode():
                        pass
                media += 1
            except av.error.FFmpegError:
                continue
    return time.perf_counter() - w0, time.process_time() - c0, media


def score_once(task_id: str, work: Path, gt: Path, solution: Path) -> tuple[float, float, float]:
    events = load_solution_events(solution)
    w0, c0 = time.perf_counter(), time.process_time()
    rep = score_task(task_id, work, gt, events)
    return time.perf_counter() - w0, time.process_time() - c0, rep.score


def hot_spots(task_id: str, work: Path, gt: Path, solution: Path, top: int = 6) -> list[str]:
    prof = cProfile.Profile()
    events = load_solution_events(solution)
    prof.enable()
    score_task(task_id, work, gt, events)
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime")
    rows: list[str] = []
    for (filename, line, func), (_cc, _nc, tt, ct, _callers) in sorted(
            stats.stats.items(), key=lambda kv: -kv[1][2])[:top]:  # type: ignore[attr-defined]
        where = f"{Path(filename).name}:{line}" if filename != "~" else "builtin"
        rows.append(f"{func} ({where}) self {tt:.2f} s, cumulative {ct:.2f} s")
    return rows


def measure(task_id: str, rounds: int, fresh: bool) -> TaskSpeed:
    res = TaskSpeed(task_id)
    inst = instance(task_id, fresh)
    gt, solution = inst / "gt", inst / "oracle"
    with tempfile.TemporaryDirectory(prefix="tally-speed-") as tmp_s:
        tmp = Path(tmp_s)
        work = work_dir(inst, tmp)
        paths = files_opened(task_id, work, gt, solution, tmp)
        res.files_read = [str(p.relative_to(tmp) if p.is_relative_to(tmp) else p.relative_to(inst)) for p in paths]
        score_once(task_id, work, gt, solution)  # warm: imports, OCR model load, font caches
        floors, scores = [], []
        for _ in range(rounds):  # interleaved A B A B
            fw, fc, res.media_files = decode_all(paths)
            floors.append((fw, fc))
            sw, sc, res.score = score_once(task_id, work, gt, solution)
            scores.append((sw, sc))
        res.floor_wall_s, res.floor_cpu_s = min(floors, key=lambda t: t[1])
        res.score_wall_s, res.score_cpu_s = min(scores, key=lambda t: t[1])
        if res.media_files and res.floor_cpu_s >= NO_MEDIA_FLOOR_S:
            res.ratio_cpu = res.score_cpu_s / res.floor_cpu_s
            res.ratio_wall = res.score_wall_s / max(res.floor_wall_s, 1e-9)
            if res.ratio_cpu > GOAL_RATIO:
                res.hot = hot_spots(task_id, work, gt, solution)
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", nargs="*", help="task ids (default: every task with a synthetic instance)")
    ap.add_argument("--family", help="only this family (streaming, sound, grading, shortform)")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved floor/score rounds per task")
    ap.add_argument("--fresh", action="store_true", help="rebuild the cached synthetic instances")
    ap.add_argument("--json", type=Path, default=Path("out/bench/score_speed.json"))
    args = ap.parse_args()
    if shutil.which("strace") is None:
        print("strace is needed to see which files a scorer opens (apt-get install strace)", file=sys.stderr)
        return 2
    cat = load_catalog()
    tasks = args.tasks or [t.id for t in cat if args.family in (None, t.family)]
    console = Console()
    results: list[TaskSpeed] = []
    with Progress(console=console, transient=True) as progress:
        bar = progress.add_task("scoring speed", total=len(tasks))
        for tid in tasks:
            progress.update(bar, description=f"{tid}")
            try:
                results.append(measure(tid, args.rounds, args.fresh))
            except Exception as exc:  # one task's failure is a row, not the end of the bench
                results.append(TaskSpeed(tid, problem=f"{type(exc).__name__}: {exc}"))
            progress.advance(bar)
    table = Table(title=f"scoring the oracle vs decode-only floor (best of {args.rounds} interleaved rounds, "
                        f"{os.cpu_count()} cores)")
    for col in ("task", "score", "media", "floor cpu s", "score cpu s", "score wall s", "cpu ×", "wall ×"):
        table.add_column(col, justify="right" if col != "task" else "left", no_wrap=True)
    for r in results:
        def fmt(x: float | None) -> str:
            return "—" if x is None else f"{x:.2f}"
        mark = " [red]>2×[/]" if r.ratio_cpu and r.ratio_cpu > GOAL_RATIO else ""
        table.add_row(r.task, r.problem[:40] or fmt(r.score), str(r.media_files), f"{r.floor_cpu_s:.3f}",
                      f"{r.score_cpu_s:.3f}", f"{r.score_wall_s:.3f}",
                      (fmt(r.ratio_cpu) + mark) if r.ratio_cpu else "no media", fmt(r.ratio_wall))
    console.print(table)
    over = [r for r in results if r.ratio_cpu and r.ratio_cpu > GOAL_RATIO]
    with_floor = [r for r in results if r.ratio_cpu]
    console.print(f"{len(with_floor)} tasks with a media floor; {len(over)} above {GOAL_RATIO}× "
                  f"(CPU); {len(results) - len(with_floor)} without media (absolute times above)")
    for r in over:
        console.print(f"[bold]{r.task}[/] {r.ratio_cpu:.1f}× — where the time goes:")
        for h in r.hot:
            console.print(f"    {h}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps([asdict(r) for r in results], indent=1))
    console.print(f"JSON: {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
