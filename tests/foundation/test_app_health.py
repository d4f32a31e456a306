"""The real-app health gate (tests/app_health.py) on OBS log lines and ffmpeg progress as they print them."""

from __future__ import annotations

import pytest

from tests.app_health import (
    AppHealth,
    ObsWindow,
    RunQueueWindow,
    combined,
    ffmpeg_health,
    late_actions,
    late_by_machine,
    obs_health_from_log,
    obs_stop_health,
    retry_if_app_lagged,
    retry_if_app_lagged_async,
    runqueue_wait_s,
    starved_health,
    thread_runqueue_wait_s,
)

# lines as OBS 29 wrote them on this machine (loaded: a 1080p60 canvas under llvmpipe)
LAGGING_LOG = """22:46:37.860: Output 'adv_file_output': stopping
22:46:37.860: Output 'adv_file_output': Total frames output: 219
22:46:37.860: Output 'adv_file_output': Total drawn frames: 19 (285 attempted)
22:46:37.860: Output 'adv_file_output': Number of lagged frames due to rendering lag/stalls: 266 (93.3%)
"""
HEALTHY_LOG = """12:00:01.000: Output 'adv_file_output': Total frames output: 600
12:00:01.000: Output 'adv_file_output': Number of lagged frames due to rendering lag/stalls: 3 (0.5%)
12:00:01.000: Video stopped, number of skipped frames due to encoding lag: 0/600 (0.0%)
12:00:00.500: adding 21 milliseconds of audio buffering, total audio buffering is now 42 milliseconds (source: Mic)
"""


def test_obs_log_lag_encoder_skips_and_audio_buffering() -> None:
    assert obs_health_from_log(HEALTHY_LOG).kept_up
    lag = obs_health_from_log(LAGGING_LOG)
    assert not lag.kept_up and "266 frames" in lag.problems[0] and lag.facts["render_lag_pct"] == {
        "adv_file_output": 93.3}
    skipped = obs_health_from_log("Video stopped, number of skipped frames due to encoding lag: 5/41975 (0.1%)")
    assert not skipped.kept_up and "5/41975" in skipped.problems[0]
    late = obs_health_from_log("adding 300 milliseconds of audio buffering, total audio buffering is now 320 "
                               "milliseconds (source: Mic)")
    assert not late.kept_up and late.facts["audio_buffering_ms"] == 320
    assert not obs_health_from_log("Max audio buffering reached!").kept_up


def test_obs_stop_code_and_ffmpeg_speed() -> None:
    assert obs_stop_health(0).kept_up and not obs_stop_health(-9, "sigkill").kept_up
    both = combined(obs_health_from_log(HEALTHY_LOG), obs_stop_health(-9, "sigkill"))
    assert both.problems == ("OBS did not close cleanly (exit -9, stopped by sigkill)",)
    assert ffmpeg_health("speed=0.5x\nspeed=1.00x\nspeed=1.01x\n").kept_up  # start-up report ignored
    slow = ffmpeg_health("speed=1.0x\nspeed=0.71x\nspeed=0.99x\n")
    assert not slow.kept_up and slow.facts["speed_min"] == 0.71


def test_retry_only_when_the_app_lagged() -> None:
    lagged, fine = AppHealth("OBS", ("lagged",)), AppHealth("OBS")
    results = iter([(50, lagged), (100, fine)])
    assert retry_if_app_lagged(lambda: next(results), lambda r: r >= 99) == 100  # retried once
    results = iter([(50, fine), (100, fine)])
    assert retry_if_app_lagged(lambda: next(results), lambda r: r >= 99) == 50  # app fine: scorer's fault
    results = iter([(50, lagged), (40, lagged)])
    with pytest.raises(pytest.skip.Exception, match="could not keep up"):
        retry_if_app_lagged(lambda: next(results), lambda r: r >= 99)


async def test_async_retry_follows_the_same_rule() -> None:
    lagged, fine = AppHealth("OBS", ("lagged",)), AppHealth("OBS")

    def attempts(*tries: tuple[int, AppHealth]):  # type: ignore[no-untyped-def]
        it = iter(tries)

        async def attempt() -> tuple[int, AppHealth]:
            return next(it)
        return attempt

    assert await retry_if_app_lagged_async(attempts((50, lagged), (100, fine)), lambda r: r >= 99) == 100
    assert await retry_if_app_lagged_async(attempts((50, fine), (100, fine)), lambda r: r >= 99) == 50
    with pytest.raises(pytest.skip.Exception, match="could not keep up"):
        await retry_if_app_lagged_async(attempts((50, lagged), (40, lagged)), lambda r: r >= 99)


class _Stats:
    def __init__(self, skipped: int, total: int) -> None:
        self.render_skipped_frames, self.render_total_frames = skipped, total


class _StatsClient:
    """GetStats as obsws_python returns it: cumulative counters since OBS started."""

    def __init__(self, *stats: tuple[int, int]) -> None:
        self._stats = iter(stats)

    def get_stats(self) -> _Stats:
        return _Stats(*next(self._stats))


def test_obs_window_judges_render_lag_of_the_window_only() -> None:
    # 40 frames skipped before the window do not count; 1 of 100 in it is under the 5 % line
    window = ObsWindow(_StatsClient((40, 1000), (41, 1100)), pid=None)
    window.start()
    assert window.stop().kept_up
    window = ObsWindow(_StatsClient((40, 1000), (52, 1100)), pid=None)
    window.start()
    lag = window.stop()
    assert not lag.kept_up and "12/100" in lag.problems[0] and lag.facts["render_lag_pct"] == 12.0


def test_thread_waits_and_late_actions() -> None:
    import os

    waits = thread_runqueue_wait_s(os.getpid())
    assert waits and all(v >= 0 for v in waits.values())
    assert thread_runqueue_wait_s(2**22 + 1) == {}  # no such process
    actions = [{"step": "k1", "lateness_ms": 3.0}, {"step": "k2", "lateness_ms": 180.0},
               {"step": "gone", "lateness_ms": None}]
    late = late_actions(actions)
    assert not late.kept_up and late.problems == ("the scenario sent 'k2' 180 ms late",)
    assert late_actions(actions[:1]).kept_up


def test_a_late_latency_is_the_machines_only_when_the_wait_covers_it() -> None:
    assert late_by_machine("cut", -5.0, 900.0).kept_up  # within its bound: nothing to explain
    assert late_by_machine("cut", 30.0, 10.0).kept_up   # 30 ms late, 10 ms waited: the code's
    starved = late_by_machine("cut", 30.0, 45.0)
    assert not starved.kept_up and "30 ms past" in starved.problems[0]


def test_starvation_explains_a_shortfall_only_when_the_wait_covers_it() -> None:
    # a rate on the line needs no explanation; below it, a wait at least as long as the missing
    # share is the machine's doing; a shorter wait leaves the shortfall to the code measured
    assert starved_health(0.97, 0.95, {"ingest": 0.0}).kept_up
    starved = starved_health(0.90, 0.95, {"ingest": 0.06, "publisher": 0.01})
    assert not starved.kept_up and "ingest 6%" in starved.problems[0]
    assert starved_health(0.90, 0.95, {"ingest": 0.04, "publisher": 0.02}).kept_up
    assert starved_health(0.90, 0.95, {}).kept_up


def test_runqueue_wait_of_two_processes_sharing_one_cpu() -> None:
    # two busy loops pinned to one CPU: each runs at most about half the time and waits the rest
    # (other CPUs are not theirs to use); a sleeper is not runnable, so it never waits for a CPU
    import subprocess
    import sys
    busy = ("import os, time; os.sched_setaffinity(0, {0}); print('pinned', flush=True)\n"
            "t = time.monotonic() + 30\nwhile time.monotonic() < t: pass")
    hogs = [subprocess.Popen([sys.executable, "-c", busy], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; print('asleep', flush=True); time.sleep(30)"],
                               stdout=subprocess.PIPE, text=True)
    try:
        import time
        for hog in hogs:  # both started and pinned, however slowly Python starts on a busy machine
            assert hog.stdout is not None and hog.stdout.readline().strip() == "pinned"
        assert sleeper.stdout is not None and sleeper.stdout.readline().strip() == "asleep"  # past start-up
        window = RunQueueWindow({"a": hogs[0].pid, "b": hogs[1].pid, "sleeper": sleeper.pid})
        window.start()
        time.sleep(1.0)
        shares = window.stop()
    finally:
        for p in [*hogs, sleeper]:
            p.kill()
            p.wait()
    # each waits about half the window, more when other work of the machine also runs on that CPU;
    # one CPU serves the two one at a time, so together they wait at least about one window
    assert 0.3 <= shares["a"] <= 1.05 and 0.3 <= shares["b"] <= 1.05, shares
    assert shares["a"] + shares["b"] >= 0.8, shares
    assert shares["sleeper"] < 0.05, shares
    assert runqueue_wait_s(2**22 + 7) == 0.0  # above any pid_max: no such process, nothing explained


def test_torn_obs_log_lines_are_counted_and_a_failed_try_runs_once_more(tmp_path, capsys) -> None:
    """Torn lines: two writes on one line, or a line without its stamp; whole lines are not."""
    import asyncio
    from pathlib import Path

    from tests.app_health import obs_log_torn_lines, retry_once_on_torn_log

    log = "\n".join(["10:00:00.000: whole", "10:00:00.001:   \"op\": 110:00:00.001: }", "Data\": {", ""])
    assert obs_log_torn_lines(log) == 2
    tries: list[Path] = []

    def save(folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "obs-log.txt").write_text(log)

    async def flaky(folder: Path) -> None:
        save(folder)
        tries.append(folder)
        assert len(tries) > 1, "6 of 7 inputs"

    asyncio.run(retry_once_on_torn_log(flaky, tmp_path))
    assert [t.name for t in tries] == ["try1", "try2"]
    assert "6 of 7 inputs — OBS tore 2 lines of its log; trying once more" in capsys.readouterr().out

    async def broken(folder: Path) -> None:
        save(folder)
        raise AssertionError("the parser's own miss")

    with pytest.raises(AssertionError, match="parser's own miss"):   # the second failure is not forgiven
        asyncio.run(retry_once_on_torn_log(broken, tmp_path / "b"))
