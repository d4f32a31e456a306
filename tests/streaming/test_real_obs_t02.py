"""Real-OBS oracle for R06.12.01.01-T02: a multitrack 1080p60 MKV recorded by OBS 29, remuxed to MP4.

The synthetic oracle's files come from our own writer; here OBS 29 records them. Profile: Advanced
output, 1920x1080 at 60 fps, x264 CBR 12000 kbps keyint 2 s (preset ultrafast so llvmpipe on two
cores keeps up), MKV, tracks 1-3. "Mic" and "Desktop Audio" are ffmpeg_source inputs playing the
instance's gt/mic_ref.wav and gt/desktop_ref.wav (the harness's known signals) routed to tracks 1+2
and 1+3, so the scorer's routing projection applies. OBS 29's remux is a GUI-only function, so the
MP4 is made with `ffmpeg -c copy` from OBS's MKV (the check is about the file being a remux).

Real-app near miss (issue 21), in the same OBS session: after the oracle's recording has stopped
(RecordStateChanged OUTPUT_STOPPED), Mic is ticked on track 3 as well (one checkbox of the Advanced
Audio Properties wrong) and OBS records again; the routing is put back before OBS closes, so OBS
saves the oracle's settings. That recording, remuxed, loses exactly three_tracks' "track 3 =
desktop only" item; every other check scores as the oracle's.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from monitor.obs import ObsInstance
from tests.app_health import AppHealth, combined, obs_health, obs_stop_health, retry_if_app_lagged
from tests.streaming.real_obs import EventLog, record, save_obs_config, wait_record_stopped
from verifiers.scoring import score_task
from verifiers.synth import overlay, synth_instance

obs = pytest.importorskip("obsws_python")
needs_obs = pytest.mark.skipif(shutil.which("obs") is None or shutil.which("Xvfb") is None
                               or shutil.which("ffmpeg") is None, reason="obs-studio, xvfb and ffmpeg needed")

TASK = "R06.12.01.01-T02"
RECORD_S = 10.4  # the check wants about 10 s (within 1.5 s)


def _media(name: str, wav: Path, mixers: int) -> dict:
    return {"id": "ffmpeg_source", "versioned_id": "ffmpeg_source", "name": name, "mixers": mixers,
            "settings": {"is_local_file": True, "local_file": str(wav), "looping": True,
                         "restart_on_activate": False, "close_when_inactive": False}}


def _remux(mkv: Path, mp4: Path) -> None:
    """OBS 29 remuxes only from its GUI (File > Remux Recordings); this is the same stream copy."""
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(mkv), "-map", "0", "-c", "copy", str(mp4)],
                   check=True, timeout=60)


def record_in_obs(gt: Path, real: Path, near: Path) -> tuple[Path, AppHealth]:
    """Record ~10 s with OBS 29; lay its profile, collection and recording into `real`, and the
    near miss (Mic on track 3 too, recorded next in the same session) with the same config into
    `near`. Returns the MKV and what OBS's own log says about keeping up (both recordings)."""
    rec_dir = real / "recordings"
    rec_dir.mkdir(parents=True)
    basic = {"Output": {"Mode": "Advanced"},
             "AdvOut": {"RecType": "Standard", "RecFilePath": str(rec_dir), "RecFormat": "mkv",
                        "RecEncoder": "obs_x264", "RecTracks": "7"},
             "Video": {"BaseCX": "1920", "BaseCY": "1080", "OutputCX": "1920", "OutputCY": "1080",
                       "FPSType": "1", "FPSInt": "60"}}
    profile = {"basic.ini": basic,
               "recordEncoder.json": {"rate_control": "CBR", "bitrate": 12000, "keyint_sec": 2,
                                      "preset": "ultrafast"}}
    coll = {"name": "Stream", "current_scene": "Live", "current_program_scene": "Live",
            "scene_order": [{"name": "Live"}],
            "sources": [{"id": "color_source", "versioned_id": "color_source_v3", "name": "Game",
                         "settings": {"width": 1920, "height": 1080, "color": 4282400832}},
                        _media("Mic", gt / "mic_ref.wav", 0b011),
                        _media("Desktop Audio", gt / "desktop_ref.wav", 0b101),
                        {"id": "scene", "versioned_id": "scene", "name": "Live",
                         "settings": {"items": [{"name": "Game", "id": 1, "visible": True},
                                                {"name": "Mic", "id": 2, "visible": True},
                                                {"name": "Desktop Audio", "id": 3, "visible": True}],
                                      "id_counter": 3, "custom_size": False}}]}
    with ObsInstance(collection=coll, profile=profile, profile_name="Stream", ws_password="t02-pw") as o:
        c = obs.ReqClient(host="127.0.0.1", port=o.ws_port, password="t02-pw", timeout=10)
        log = EventLog()
        ev = obs.EventClient(host="127.0.0.1", port=o.ws_port, password="t02-pw")
        ev.callback.register([log.on_record_state_changed])
        try:
            assert c.get_input_audio_tracks("Mic").input_audio_tracks == {
                "1": True, "2": True, "3": False, "4": False, "5": False, "6": False}
            for mic_on_3 in (False, True):
                c.set_input_audio_tracks("Mic", {"3": mic_on_3})
                for name in ("Mic", "Desktop Audio"):  # both signals from sample 0 together: one common lag
                    c.trigger_media_input_action(name, "OBS_WEBSOCKET_MEDIA_INPUT_ACTION_RESTART")
                path = record(c, RECORD_S)
                wait_record_stopped(log, 2 if mic_on_3 else 1)  # before the next StartRecord / closing OBS
                if mic_on_3:
                    near_mkv = path
                else:
                    mkv = path
            c.set_input_audio_tracks("Mic", {"3": False})  # OBS saves the oracle's routing on exit
        finally:
            ev.disconnect()
            c.disconnect()
        closed = obs_stop_health(o.stop(), o.last_stop_method)
        save_obs_config(o, real)
        health = combined(obs_health(o.config_dir / "logs"), closed)
    assert mkv.parent == rec_dir and mkv.suffix == ".mkv", mkv
    shutil.copytree(real / "obs-studio", near / "obs-studio")
    (near / "recordings").mkdir()
    near_mkv = near_mkv.rename(near / "recordings" / near_mkv.name)
    _remux(mkv, rec_dir / "test_rec.mp4")
    _remux(near_mkv, near / "recordings" / "test_rec.mp4")
    return mkv, health


@pytest.mark.obs
@pytest.mark.slow
@needs_obs
def test_t02_real_obs_multitrack_recording_scores_full(tmp_path: Path) -> None:
    inst = synth_instance(TASK, tmp_path / "inst", seed=1)
    tries = iter(range(1, 10))

    def attempt() -> tuple[tuple[dict, dict], AppHealth]:
        n = next(tries)
        real, near, work, near_work = (tmp_path / f"{k}{n}" for k in ("real", "near", "work", "near_work"))
        _mkv, health = record_in_obs(inst / "gt", real, near)
        overlay(inst / "workdir", real, work)
        overlay(inst / "workdir", near, near_work)
        return (score_task(TASK, work, inst / "gt").to_dict(), score_task(TASK, near_work, inst / "gt").to_dict()), health

    def as_expected(r: tuple[dict, dict]) -> bool:
        oracle, near = ({c["name"]: c["score"] for c in x["checks"]} for x in r)
        return r[0]["score"] >= 99 and near == {**oracle, "three_tracks": 0.75}

    rep, near = retry_if_app_lagged(attempt, as_expected)
    detail = [(c["name"], c["score"], c["message"], c["evidence"]) for c in rep["checks"]]
    assert rep["score"] >= 99, detail
    # the near miss: only three_tracks' "track 3 = desktop only" item is lost (3 of 4 items), nothing else moves
    near_checks = {c["name"]: c for c in near["checks"]}
    assert near_checks["three_tracks"]["score"] == 0.75, near_checks["three_tracks"]
    assert near_checks["three_tracks"]["message"] == "not track 3 = desktop only", near_checks["three_tracks"]
    assert {n: c["score"] for n, c in near_checks.items() if n != "three_tracks"} == {
        c["name"]: c["score"] for c in rep["checks"] if c["name"] != "three_tracks"}, near["checks"]
    print(f"T02 real OBS near miss (Mic on track 3 too): {near['score']}, track shares "
          f"{near_checks['three_tracks']['evidence']['shares_mic_desktop']}", flush=True)
    # what the feed line (t02_multitrack.MIN_EXPLAINED) is measured against: a real OBS recording's tracks
    tracks = next(c for c in rep["checks"] if c["name"] == "three_tracks")["evidence"]
    print(f"T02 real OBS: explained {tracks['explained']}, shares {tracks['shares_mic_desktop']}", flush=True)
