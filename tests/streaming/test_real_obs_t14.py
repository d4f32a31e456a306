"""Real-OBS oracle for R06.12.01.01-T14: clap test, Mic sync offset +120 ms, sync_after.mkv, in OBS 29.

The stand-in for the harness's webcam + microphone is ONE media source ("Mic", ffmpeg_source) playing
an A+V file: the clapper picture, and claps 120 ms early (the GT's hidden delay: video late). OBS
records a "before" clip, the sync offset is set over obs-websocket (as the oracle does), OBS records
sync_after.mkv, and the T14 scorer judges OBS's files and OBS's own events (EventClient) in full.

Why one A+V source (libobs 29 obs-source.c, deps/media-playback): OBS ties an async source's audio
to its own video (each rendered frame sets `timing_adjust = video_time - frame.timestamp`, and audio
is placed with it), so the file's A/V relation survives into the recording. Two separate media
sources (picture, sound) each start their own clock and OBS shows an async source's first frame at
the next render tick, so their skew is 20-60 ms and new at every OBS start: with that stand-in a
correct +120 ms fix left 56 ms (the earlier version of this test could not assert residual_offset).
The file's audio starts 0.5 s after its video, so OBS places the first audio with a timing taken
from a rendered frame, not from the preloaded first frame (an A+V file whose audio starts with its
video showed 4-62 ms from one OBS start to the next in earlier runs). OBS keeps placed audio where
it is (it only appends while timestamps stay within 70 ms), so a new placement happens only on a
sync-offset change (the second one: obsproject/obs-studio#7912) or a jump; a render stall at such a
moment places the audio a frame or more off for good. Hence the main window's preview is off
(NoPreviewObs), and the oracle checks its own sync_after clip like a careful person and applies the
same offset again when a clap is half a frame or more off (run_in_obs); the test fails if every
attempt was off.

Single claps 20-30 ms early, seen in about one clip of three, were not OBS: the feed is digitally
silent between claps (like the harness's null-sink feed) and OBS records AAC, whose pre-echo rose
20 dB over the onset detector's -100 dB floor one AAC block before the clap at some positions
(reproduced with ffmpeg's AAC alone: 1 position in 28). The scorer now assumes a -60 dBFS floor.

Measured on this 2-core machine. Quiet (load 1.4-2.4, CI-like), with the scorer's -60 dBFS floor:
6 of 6 runs right at the first attempt, no skipped render frame, every clap within 3.6 ms,
residual 1.3-2.3 ms, score 100, ~29 s (before it, 6 of 6 at load < 2: residual 3.4-4.7 ms). Busy (~5 other jobs, load
4-11), when only OBS's skipped-render-frame count triggered a redo: 15 of 19 runs scored 100
(residual 3.2-9.4 ms; 7.8 and 8.4 had one clap ~20-27 ms off: the pre-echo above), 1 failed with
the audio a frame off (37 ms, no stall counted), 3 had every attempt stalled. With stall count and
claps both required: 2 of 3 passed (1-2 attempts), 1 failed after 5 attempts, two of which had every
clap right but a skipped render frame; so only the claps decide now. All of these were measured
before the scorer's -60 dBFS floor.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.app_health import AppHealth, obs_health
from tests.streaming.real_obs import EventLog, NoPreviewObs, record, save_obs_config
from verifiers.scoring import score_task
from verifiers.synth import InstanceWriter, load_solution_events, overlay, synth_instance
from verifiers.synthkit.streaming_media import write_media
from verifiers.tasks.streaming.t14_av_offset import FPS

obs = pytest.importorskip("obsws_python")
needs_obs = pytest.mark.skipif(shutil.which("obs") is None or shutil.which("Xvfb") is None
                               or shutil.which("ffmpeg") is None, reason="obs-studio, xvfb and ffmpeg needed")

TASK = "R06.12.01.01-T14"
RECORD_S = 9.6       # the 8.5 s clap cycle: five claps close inside any 9.6 s window
AUDIO_START_S = 0.5  # the feed's audio begins after its video (first clap at 0.88 s)
FEED_PERIODS = 10    # 85 s, never looping while the test runs (a loop is a timestamp jump)
FIX_ATTEMPTS = 5
#: the real-app near miss (issue 21): a fix 15 ms past the hidden 120 ms. offset_set's pass line is
#: +-15 ms (inside, on the line), the clip it records is 15 ms off: past residual_offset's 10 ms line
NEAR_MISS_MS = 135
PLACED_MS = 5.0


def write_feed(folder: Path, hidden_delay_ms: float) -> Path:
    """The clapper feed as one A+V Matroska: clap_test's pictures, claps hidden_delay_ms early."""
    import soundfile as sf

    from verifiers.tasks.streaming.t14_av_offset import clap_test

    vid, aud = clap_test(-hidden_delay_ms)
    video = write_media(folder / "feed_video.mkv", vid * FEED_PERIODS, FPS)
    rate = 48_000
    wav = folder / "feed_audio.wav"
    sf.write(str(wav), np.tile(aud, FEED_PERIODS)[int(AUDIO_START_S * rate):], rate)
    feed = folder / "feed.mkv"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(video), "-itsoffset", str(AUDIO_START_S), "-i", str(wav),
                    "-map", "0:v", "-map", "1:a", "-c:v", "copy", "-c:a", "pcm_s16le", str(feed)],
                   check=True, timeout=60)
    return feed


def _collection(feed: Path) -> dict[str, Any]:
    mic = {"id": "ffmpeg_source", "versioned_id": "ffmpeg_source", "name": "Mic",
           "settings": {"is_local_file": True, "local_file": str(feed), "looping": False,
                        "restart_on_activate": False, "close_when_inactive": False}}
    return {"name": "Stream", "current_scene": "Live", "current_program_scene": "Live",
            "scene_order": [{"name": "Live"}],
            "sources": [mic, {"id": "scene", "versioned_id": "scene", "name": "Live",
                              "settings": {"items": [{"name": "Mic", "id": 1, "visible": True}],
                                           "id_counter": 1, "custom_size": False}}]}


def run_in_obs(feed: Path, gt: dict[str, Any], real: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                                                  AppHealth, dict[str, Any]]:
    """Clap test, near-miss fix, fix, sync_after.mkv in OBS; OBS's config saved to real/. Returns
    (events, attempts, what OBS's log says about keeping up, the near-miss clip: file and OBS's stats).

    The near miss (NEAR_MISS_MS) is recorded in the same session between the clap test and the fix
    (~12 s, no second OBS): its clip lands beside real/, outside recordings/, and OBS's final save
    holds the right fix.

    Like a careful person, the oracle looks at its own sync_after clip and applies the same offset
    again (at most FIX_ATTEMPTS times) when a clap in it is half a frame or more off (OBS placed the
    audio a frame off, seen while the machine was busy). That is coarser than the scorer's mean <= 10 ms, which is not what is retried on; OBS's
    skipped render frames (GetStats) are recorded per attempt, as the likely cause."""
    rec_dir = real / "recordings"
    rec_dir.mkdir(parents=True)
    basic = {"Output": {"Mode": "Advanced"},
             "AdvOut": {"RecType": "Standard", "RecFilePath": str(rec_dir), "RecFormat": "mkv",
                        "RecEncoder": "obs_x264", "RecTracks": "1"},
             "Video": {"BaseCX": "160", "BaseCY": "90", "OutputCX": "160", "OutputCY": "90",
                       "FPSType": "1", "FPSInt": str(FPS)}}
    profile = {"basic.ini": basic, "recordEncoder.json": {"rate_control": "CRF", "crf": 18, "preset": "ultrafast"}}
    log = EventLog()
    attempts: list[dict[str, Any]] = []
    with NoPreviewObs(collection=_collection(feed), profile=profile, profile_name="Stream", ws_password="t14-pw") as o:
        c = obs.ReqClient(host="127.0.0.1", port=o.ws_port, password="t14-pw", timeout=10)
        ev = obs.EventClient(host="127.0.0.1", port=o.ws_port, password="t14-pw")
        ev.callback.register([log.on_record_state_changed, log.on_input_audio_sync_offset_changed])
        try:
            time.sleep(0.5)
            skipped0 = c.get_stats().render_skipped_frames
            record(c, RECORD_S)                                  # the clap test before the fix
            attempts.append({"file": "before", "render_skipped_frames": c.get_stats().render_skipped_frames - skipped0})
            skipped0 = c.get_stats().render_skipped_frames
            c.set_input_audio_sync_offset("Mic", NEAR_MISS_MS - 1)   # two values: obsproject/obs-studio#7912
            time.sleep(0.3)
            c.set_input_audio_sync_offset("Mic", NEAR_MISS_MS)
            time.sleep(2.0)
            near_path = record(c, RECORD_S).rename(real.parent / f"{real.name}-near_{NEAR_MISS_MS}ms.mkv")
            near = {"file": near_path, "render_skipped_frames": c.get_stats().render_skipped_frames - skipped0}
            for _ in range(FIX_ATTEMPTS):
                skipped0 = c.get_stats().render_skipped_frames
                # audio 120 ms later meets the late video. OBS 29 ignores a single programmatic change of a
                # running source's sync offset (obsproject/obs-studio#7912); a second, different value a
                # moment later takes effect (what touching the spin box in the GUI amounts to)
                c.set_input_audio_sync_offset("Mic", 119)
                time.sleep(0.3)
                c.set_input_audio_sync_offset("Mic", 120)
                time.sleep(2.0)
                after = record(c, RECORD_S)
                stalls = c.get_stats().render_skipped_frames - skipped0
                offsets = _offsets_ms(after, gt)
                worst_ms = max((abs(d) for d in offsets), default=float("inf"))
                attempts.append({"file": after.name, "render_skipped_frames": stalls, "claps": len(offsets),
                                 "worst_clap_ms": round(worst_ms, 1)})
                if _good(attempts[-1]):
                    break
                after.unlink()  # OBS misplaced audio: apply the same fix again
            time.sleep(0.5)
        finally:
            ev.disconnect()
            c.disconnect()
        assert o.stop() == 0
        save_obs_config(o, real)
        health = obs_health(o.config_dir / "logs")
    if len(attempts) > 1 and _good(attempts[-1]):
        after.rename(rec_dir / "sync_after.mkv")  # the task's file name; OBS names files by date
    return log.events, attempts, health, near


def _good(attempt: dict[str, Any]) -> bool:
    """Five claps or more, every one within half a frame of its picture."""
    return attempt["claps"] >= 5 and attempt["worst_clap_ms"] < 500 / FPS


def _offsets_ms(path: Path, gt: dict[str, Any]) -> list[float]:
    """(audio clap - visual close) per clap in ms, measured the scorer's way."""
    from verifiers.tasks.streaming.t14_av_offset import ClapperFile, audio_claps, visual_closes

    vis, aud = visual_closes(path, ClapperFile.parse(gt)), audio_claps(path)  # the scorer's typed GT
    pairs = [(a - min(vis, key=lambda v, a=a: abs(v - a))) * 1000 for a in aud]
    return [d for d in pairs if abs(d) < 400]


def _obs_session(feed: Path, gt: dict[str, Any], real: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                                                   list[float], dict[str, Any], str | None]:
    """One OBS session (clap test, near miss, fix, sync_after.mkv) and what went wrong on OBS's side,
    if anything: (events, attempts, the before clip's clap offsets, the near miss, problem or None). Not
    the scorer's business."""
    events, attempts, health, near = run_in_obs(feed, gt, real)
    if not _good(attempts[-1]):
        stalled = [a for a in attempts[1:] if a["render_skipped_frames"] > 0]
        return events, attempts, [], near, (f"OBS misplaced the audio in all {len(attempts) - 1} fix attempts "
                                      f"({len(stalled)} with skipped render frames; {health.describe()}): {attempts}")
    (before,) = [p for p in (real / "recordings").glob("*.mkv") if p.name != "sync_after.mkv"]
    before_ms = _offsets_ms(before, gt)
    if len(before_ms) < 5:
        return events, attempts, before_ms, near, f"OBS's clap-test clip shows {len(before_ms)} claps: {before_ms}"
    off_ms = float(np.median(before_ms)) + gt["injected_delay_ms"]
    if abs(off_ms) > 1000 / FPS:
        # OBS 29 places an async source's audio from the rendered frame it lands on; one placement
        # a frame late stays for the whole clip (module docstring). Seen once on an idle machine
        # with no skipped render frame: -155.7 ms for the feed's -120 ms.
        return events, attempts, before_ms, near, (f"OBS placed the clap-test clip's audio {off_ms:+.1f} ms off the "
                                             f"feed's delay (over a frame; {health.describe()})")
    return events, attempts, before_ms, near, None


@pytest.mark.obs
@pytest.mark.slow
@needs_obs
def test_t14_real_obs_clap_test_and_fix_scores_full(tmp_path: Path) -> None:
    inst = synth_instance(TASK, tmp_path / "inst", seed=1)
    gt = json.loads((inst / "gt" / "t14.json").read_text())
    assert gt["late"] == "video"
    feed = write_feed(tmp_path, float(gt["injected_delay_ms"]))
    # What OBS recorded is checked first: a clip OBS itself misrecorded (audio a frame off, every fix
    # attempt off) says nothing about the scorer, so it is recorded again once, then skipped with
    # OBS's numbers (tests/app_health.py's rule); the scorer's own verdicts below always assert.
    problems: list[str] = []
    for n in (1, 2):
        real = tmp_path / f"real{n}"
        events, attempts, before_ms, near, problem = _obs_session(feed, gt, real)
        if problem is None:
            break
        problems.append(problem)
        print(f"try {n}/2: {problem} — OBS's recording, not the scorer: recording again", flush=True)
    else:
        pytest.skip("OBS misrecorded the clap feed on both tries, the scorer was not judged: " + " | ".join(problems))
    kinds = [e["payload"]["type"] for e in events]  # the observer's wire shape: kind "event", payload type
    assert "InputAudioSyncOffsetChanged" in kinds and kinds.count("RecordStateChanged") >= 4, kinds
    InstanceWriter.write_events(real, events)
    work = tmp_path / "work"
    overlay(inst / "workdir", real, work)
    rep = score_task(TASK, work, inst / "gt", load_solution_events(real)).to_dict()
    checks = {c["name"]: c for c in rep["checks"]}
    detail = {n: (c["score"], c["message"], c["evidence"]) for n, c in checks.items()}
    assert checks["offset_set"]["status"] == "pass", detail       # from the collection OBS saved
    assert checks["before_test"]["status"] == "pass", detail      # from OBS's own events
    assert checks["residual_offset"]["status"] == "pass", detail  # mean |close - clap| <= 10 ms in OBS's file
    assert len(checks["residual_offset"]["evidence"]["offsets_ms"]) >= 5, detail
    assert rep["score"] >= 99, detail
    print(f"T14 real OBS: before median {np.median(before_ms):.1f} ms, residual "
          f"{checks['residual_offset']['evidence']['mean_abs_ms']:.1f} ms "
          f"{[round(x, 1) for x in checks['residual_offset']['evidence']['offsets_ms']]}, attempts {attempts}, score {rep['score']}")
    _judge_near_miss(inst, real, near, gt, tmp_path / "work_near")


def _judge_near_miss(inst: Path, real: Path, near: dict[str, Any], gt: dict[str, Any], work: Path) -> None:
    """OBS's near-miss clip (Mic offset NEAR_MISS_MS) as sync_after.mkv beside OBS's own files and
    events: residual_offset scores 0, nothing else moves. OBS's health first: when OBS placed this
    clip's audio off the offset it was given (a render stall), the clip says nothing about the scorer."""
    offsets = _offsets_ms(near["file"], gt)
    want_ms = NEAR_MISS_MS - gt["injected_delay_ms"]
    # OBS places audio within 1.3-3.6 ms of its offset on an idle machine (module docstring); 5 ms
    # keeps every clap of a rightly placed clip past the 10 ms line (15 - 5), so the clip is a near miss
    placed = len(offsets) >= 5 and all(abs(d - want_ms) <= PLACED_MS for d in offsets)
    print(f"T14 real OBS near miss {NEAR_MISS_MS} ms: claps {[round(d, 1) for d in offsets]} ms "
          f"(want {want_ms:+.0f}), skipped render frames {near['render_skipped_frames']}", flush=True)
    if not placed:
        pytest.skip(f"OBS placed the near-miss clip's audio off its {NEAR_MISS_MS} ms offset "
                    f"({near['render_skipped_frames']} skipped render frames): OBS, not the scorer; {offsets}")
    overlay(inst / "workdir", real, work)
    shutil.copy2(near["file"], work / "recordings" / "sync_after.mkv")
    rep = score_task(TASK, work, inst / "gt", load_solution_events(real)).to_dict()
    checks = {c["name"]: c for c in rep["checks"]}
    detail = {n: (c["score"], c["message"], c["evidence"]) for n, c in checks.items()}
    assert checks["residual_offset"]["score"] == 0, detail
    assert {n for n, c in checks.items() if c["status"] != "pass"} == {"residual_offset"}, detail
