"""`tally demo`: one real run of R06.12.01.01-T05 on embedded defaults, then a short self-test.

What it does, with nothing configured: an embedded MQTT broker, the RTMP ingest on a loopback
port, and a publisher at T05's settings (1920x1080, 30 fps, x264 CBR 6000 kbit/s, keyframe every
2 s, AAC 160 kbit/s 48 kHz) for 60 s: a real headless OBS Studio when it is installed (the
product's real use: OBS is driven over obs-websocket like an agent would, then closed so it saves
its profile, and every T05 check is judged), else a PyAV stand-in in its own process (then OBS's
profile does not exist, and `server_config` is reported as `error: not applicable`, never as the
agent's fail). The live figures are on screen (the dashboard on a terminal, plain lines otherwise),
the run is scored from its bundle, and a self-test table of a few verifiers follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from rich.console import Console

from monitor.bus import Subscription
from monitor.errors import UserError
from monitor.obs.launcher import ObsLaunchError
from monitor.render import print_report, print_selftest
from verifiers.catalog import load_catalog

T05 = "R06.12.01.01-T05"
#: what the PyAV stand-in cannot give T05 (its checks that read OBS's saved files)
NO_OBS_WHY = "the demo's PyAV publisher has no OBS profile to read (run `tally demo --obs` with OBS installed)"
SELFTEST_TASKS = ("R06.07.01.03-T14", "R06.12.01.01-T01", "R06.12.01.01-T05")


def _stats_line(p: dict[str, Any], t_s: float) -> str:
    v, a = p.get("video") or {}, p.get("audio") or {}
    ki = (v.get("keyframe_interval_s") or {}).get("last")
    br = v.get("bitrate_bps")
    return (f"{t_s:5.1f}s {v.get('width')}x{v.get('height')} {v.get('codec')} {v.get('fps') or 0:.2f}fps "
            f"{(br or 0) / 1e6:.2f}Mb/s GOP {ki if ki is not None else '-'}s | {a.get('codec')} "
            f"{a.get('sample_rate_hz')}Hz {a.get('channels')}ch {(a.get('bitrate_bps') or 0) / 1e3:.0f}kb/s")


async def _print_lines(sub: Subscription, console: Console) -> None:
    t0 = time.monotonic()
    while True:
        e = await sub.get()
        t = time.monotonic() - t0
        if e.source == "rtmp" and e.kind == "stats":
            console.print(_stats_line(e.payload, t))
        elif e.source == "rtmp" and e.kind in ("publish", "unpublish", "publish_rejected", "protocol_error"):
            console.print(f"{t:6.1f} s  rtmp {e.kind} {e.payload.get('app')}/{e.payload.get('key')} "
                          f"{e.payload.get('reason', '')}")
        elif e.source == "run":
            console.print(f"{t:6.1f} s  run {e.kind}")


def _sub_source(sub: Subscription):
    async def gen() -> AsyncIterator[dict[str, Any]]:
        while True:
            yield (await sub.get()).to_dict()

    return gen


async def _publish(url: str, seconds: float, console: Console, quiet: bool) -> int:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "monitor.publisher", url, "--seconds", str(seconds),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    _out, err = await proc.communicate()
    if proc.returncode != 0 and not quiet:
        console.print(f"[red]publisher failed ({proc.returncode}): {err.decode(errors='replace').strip()[-500:]}[/]")
    return proc.returncode or 0


def obs_profile(ingest_port: int) -> dict[str, Any]:
    """T05's settings as a user would set them in OBS: Advanced output, x264 CBR 6000, keyframe 2 s."""
    server = "rtmp://127.0.0.1/live" if ingest_port == 1935 else f"rtmp://127.0.0.1:{ingest_port}/live"
    return {
        "basic.ini": {"Output": {"Mode": "Advanced"},
                      "AdvOut": {"Encoder": "obs_x264", "TrackIndex": "1", "Track1Bitrate": "160"},
                      "Video": {"BaseCX": "1920", "BaseCY": "1080", "OutputCX": "1920", "OutputCY": "1080",
                                "FPSType": "1", "FPSInt": "30"},
                      "Audio": {"SampleRate": "48000", "ChannelSetup": "Stereo"}},
        "service.json": {"type": "rtmp_custom", "settings": {"server": server, "key": "test_key"}},
        "streamEncoder.json": {"rate_control": "CBR", "bitrate": 6000, "keyint_sec": 2, "preset": "ultrafast"},
    }


def drive_obs(ws_url: str, tone: Path, seconds: float) -> None:
    """The demo's 'agent': builds scene Live over obs-websocket, streams for `seconds`, stops."""
    import obsws_python as obsws

    host, port = ws_url.split("://", 1)[1].rsplit(":", 1)
    client = obsws.ReqClient(host=host, port=int(port), password="", timeout=10)
    client.create_scene("Live")
    client.create_input("Live", "Bars", "color_source_v3", {"color": 4278222848, "width": 1920, "height": 1080}, True)
    client.create_input("Live", "Music", "ffmpeg_source", {"local_file": str(tone), "looping": True}, True)
    client.set_current_program_scene("Live")
    time.sleep(1.0)
    client.start_stream()
    time.sleep(seconds)
    client.stop_stream()
    time.sleep(1.5)
    client.disconnect()


def _write_tone(path: Path) -> Path:
    import numpy as np
    import soundfile as sf

    t = np.arange(48_000 * 5) / 48_000
    rng = np.random.default_rng(0)
    mono = 0.1 * np.sin(2 * np.pi * 1000 * t) + 0.03 * rng.standard_normal(t.size)
    sf.write(str(path), np.stack([mono, mono], axis=1), 48_000, subtype="PCM_16")
    return path


async def run_demo(root: Path, seconds: float, tui: bool, hold_s: float, console: Console,
                   use_obs: bool = False) -> dict[str, Any]:
    from monitor.broker import free_port
    from monitor.run.serve_common import open_feed
    from monitor.run.session import RunConfig, RunSession
    from monitor.run.wiring import ingest_target
    task = load_catalog().get(T05)
    app_name, key = ingest_target(task)
    workdir, gt = root / "workdir", root / "gt"
    workdir.mkdir(parents=True, exist_ok=True)
    gt.mkdir(parents=True, exist_ok=True)
    port = free_port()
    if use_obs:
        with contextlib.suppress(OSError):
            import socket

            with socket.create_server(("127.0.0.1", 1935)):
                port = 1935  # T05's server is rtmp://127.0.0.1/live: use the default port when it is free
    obs = None
    if use_obs:
        from monitor.obs.launcher import ObsInstance

        obs = ObsInstance(profile=obs_profile(port), ws_password="")
        console.print("starting headless OBS Studio (Xvfb, software GL) ...")
        try:
            await obs.astart()
        except BaseException:
            obs.close()
            raise
    not_applicable = {} if obs else {c.name: NO_OBS_WHY for c in task.checks if "live" not in c.evidence}
    config = RunConfig(task_id=T05, workdir=workdir, gt=gt, bundle_dir=root / "bundle", ingest_port=port,
                       install_signals=False, obs_url=obs.ws_url if obs else None,
                       not_applicable=not_applicable)
    session = RunSession(config)
    sub = session.bus.subscribe("demo-view", maxsize=100_000)
    url = f"rtmp://127.0.0.1:{port}/{app_name}/{key or 'demo'}"
    async with contextlib.AsyncExitStack() as stack:
        session.feed = await open_feed(stack, None, config.node, session.bundle_dir / ".mqtt-outbox", session.on_command)
        console.print(f"embedded MQTT broker up; events on tally/{config.node}/run/{session.run_id}/#")
        console.print(f"ingest on rtmp://127.0.0.1:{port}; publishing {seconds:g} s of 1080p30 to {url}")
        run_task = asyncio.create_task(session.execute())
        await session.started.wait()
        app = None
        if tui:
            from monitor.dash.app import TallyDash

            app = TallyDash(_sub_source(sub), title=f"tally demo — {T05}")
            view = asyncio.create_task(app.run_async())
        else:
            view = asyncio.create_task(_print_lines(sub, console))
        if obs is None:
            await _publish(url, seconds, console, quiet=tui)
        else:
            try:
                tone = _write_tone(root / "tone.wav")
                await asyncio.to_thread(drive_obs, obs.ws_url, tone, seconds)
            finally:
                await obs.astop()  # closes OBS like a user would, so it saves its profile
                shutil.copytree(obs.config_dir, workdir / "obs-studio", dirs_exist_ok=True)
                obs.close()
        await asyncio.sleep(1.5)  # let the last stats tick and the unpublish land
        session.done.finish("demo: publisher finished")
        result = await run_task
        if app is not None:
            app.state.report = result.report
            app.state.phase = "scored"
            app.refresh_view()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(view), hold_s)
            app.exit()
        with contextlib.suppress(asyncio.CancelledError):
            view.cancel()
            await view
    return {"report": result.report, "bundle": str(result.bundle_dir), "run_id": result.run_id}


def obs_installed() -> bool:
    """OBS Studio and Xvfb on PATH: the demo then publishes with a real headless OBS."""
    return shutil.which("obs") is not None and shutil.which("Xvfb") is not None


def main(root: Path | None, seconds: float, tui: bool | None, hold_s: float, selftest: bool,
         use_obs: bool | None = None) -> int:
    """use_obs None: a real OBS when installed, falling back to the PyAV publisher if it cannot start."""
    console = Console()
    root = (root or Path("out") / time.strftime("demo-%Y%m%dT%H%M%SZ", time.gmtime())).resolve()
    use_tui = sys.stdout.isatty() and os.environ.get("TERM", "dumb") != "dumb" if tui is None else tui
    want_obs = obs_installed() if use_obs is None else use_obs
    try:
        res = asyncio.run(run_demo(root, seconds, use_tui, hold_s, console, want_obs))
    except ObsLaunchError as exc:
        if use_obs:  # asked for explicitly: say it failed
            raise UserError(f"OBS could not start: {exc}") from None
        console.print(f"[yellow]OBS could not start ({exc}); publishing with the PyAV stand-in instead[/]")
        want_obs = False
        res = asyncio.run(run_demo(root / "pyav", seconds, use_tui, hold_s, console, False))
    report = res["report"]
    if want_obs:
        console.rule(f"{T05}: OBS Studio's saved profile and what the ingest measured, scored")
    else:
        console.rule(f"{T05}: what the ingest measured, scored (PyAV publisher: OBS's profile not applicable)")
    print_report(report, console)
    console.print(f"bundle: {res['bundle']}\nreport: {res['bundle']}/report.json\n"
                  f"HTML report: {res['bundle']}/report.html")
    if selftest:
        from verifiers.registry import verifier_class
        from verifiers.synth import selftest_task

        console.rule("self-test of a few verifiers (oracle ≈ 100, nothing ≈ 0, each mutant lowers its checks)")
        results = []
        for tid in SELFTEST_TASKS:
            cls = verifier_class(tid)
            if cls is None:
                continue
            with console.status(f"self-testing {tid}"):
                results.append(selftest_task(tid).to_dict())
        print_selftest(results, console)
        if not all(r["ok"] for r in results):
            return 1
    return 0
