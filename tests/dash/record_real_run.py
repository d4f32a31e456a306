"""Record the dashboard's test bundle from a real run: headless OBS streams to tally's ingest
while `RunSession` observes OBS and the ingest. Run by hand to refresh the fixture:

    .venv/bin/python tests/dash/record_real_run.py tests/dash/fixtures/real_t05_run

What happens: OBS (Xvfb, llvmpipe) starts with a profile streaming 1280x720@30 x264 CBR 2500k
(keyframe 2 s, AAC 160k) to rtmp://127.0.0.1:<port>/live/test_key; a test-only websocket client
builds scenes Live/BRB (colour source, a looping tone as "Music"), starts the stream, mutes and
unmutes, switches scenes, and stops after ~12 s. The bundle (events, manifest, report) is copied
out with absolute temp paths left as they were.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import obsws_python as obsws

from monitor.broker import free_port
from monitor.obs.launcher import ObsInstance
from monitor.run.session import RunConfig, RunSession

T05 = "R06.12.01.01-T05"


def profile(port: int) -> dict:
    return {
        "basic.ini": {"Output": {"Mode": "Simple"},
                      "SimpleOutput": {"VBitrate": "2500", "ABitrate": "160", "Preset": "ultrafast",
                                       "StreamEncoder": "x264"},
                      "Video": {"BaseCX": "1280", "BaseCY": "720", "OutputCX": "1280", "OutputCY": "720",
                                "FPSType": "1", "FPSInt": "30"},
                      "Audio": {"SampleRate": "48000", "ChannelSetup": "Stereo"}},
        "service.json": {"type": "rtmp_custom", "settings": {"server": f"rtmp://127.0.0.1:{port}/live",
                                                             "key": "test_key"}},
        "streamEncoder.json": {"rate_control": "CBR", "bitrate": 2500, "keyint_sec": 2, "preset": "ultrafast"},
    }


def drive(ws_url: str, tone: Path) -> None:
    host, port = ws_url.split("://")[1].split(":")
    c = obsws.ReqClient(host=host, port=int(port), password="", timeout=10)
    for scene in ("Live", "BRB"):
        c.create_scene(scene)
    c.create_input("Live", "Bars", "color_source_v3", {"color": 4278222848, "width": 1280, "height": 720}, True)
    c.create_input("Live", "Music", "ffmpeg_source", {"local_file": str(tone), "looping": True}, True)
    c.set_current_program_scene("Live")
    time.sleep(1.0)
    c.start_stream()
    time.sleep(4)
    c.set_input_mute("Music", True)
    time.sleep(1)
    c.set_input_mute("Music", False)
    c.set_current_program_scene("BRB")
    time.sleep(3)
    c.set_current_program_scene("Live")
    time.sleep(4)
    c.stop_stream()
    time.sleep(2)


def prepare() -> tuple[Path, Path]:
    tmp = Path(tempfile.mkdtemp(prefix="tally-real-run-"))
    tone = tmp / "tone.wav"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=f=1000:d=5:sample_rate=48000",
                    "-ac", "2", str(tone)], check=True)
    (tmp / "work").mkdir()
    (tmp / "gt").mkdir()
    return tmp, tone


def export(bundle: Path, out: Path, tmp: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    for name in ("events.jsonl", "manifest.json", "report.json"):
        shutil.copy2(bundle / name, out / name)
    shutil.rmtree(tmp, ignore_errors=True)
    return len((out / "events.jsonl").read_text().splitlines())


async def record(out: Path) -> None:
    tmp, tone = prepare()
    port = free_port()
    with ObsInstance(profile=profile(port), ws_password="") as obs:
        cfg = RunConfig(task_id=T05, workdir=tmp / "work", gt=tmp / "gt", bundle_dir=tmp / "bundle",
                        obs_url=obs.ws_url, ingest_port=port, install_signals=False, run_id="real-t05-run")
        session = RunSession(cfg)
        run = asyncio.create_task(session.execute())
        await session.started.wait()
        await asyncio.sleep(2)
        await asyncio.to_thread(drive, obs.ws_url, tone)
        session.done.finish("recording script done")
        result = await run
    count = export(result.bundle_dir, out, tmp)
    print(f"recorded {count} events into {out}; score {result.report['score']}")


if __name__ == "__main__":
    asyncio.run(record(Path(sys.argv[1])))
