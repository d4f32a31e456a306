"""Platform profiles and the health evaluator without a network: profile validation, each rule
kind, metadata mismatches, status mapping, change detection."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rtmp.health import StreamHealth, measure_stream
from rtmp.platforms import PROFILE_DIR, ProfileError, available, load_profile, load_profiles, parse_profile
from rtmp.stats import StreamStats


def _stream(seconds: float = 10, fps: int = 30, gop_s: float = 2.0, kbps: float = 3500,
            height: int = 360, rate_hz: int = 48000, channels: int = 2) -> StreamStats:
    st = StreamStats()
    st.video_codec, st.audio_codec = "h264", "aac"
    st.video_config = {"profile": "High", "width": height * 16 // 9, "height": height}
    st.audio_config = {"profile": "LC", "sample_rate_hz": rate_hz, "channels": channels}
    frame_bytes = int(kbps * 1000 / 8 / fps)
    n = int(seconds * fps)
    for i in range(n):
        ts = i * 1000 // fps
        st.on_video_frame(ts, frame_bytes, i % int(gop_s * fps) == 0)
    for i in range(int(seconds * 1000 / 21)):
        st.on_audio_frame(i * 21, 340)
    return st


def _health(names: str, st: StreamStats) -> dict[str, dict]:
    h = StreamHealth(load_profiles(names))
    h.evaluate(st, st.snapshot())
    return h.view()


def test_every_builtin_profile_loads_and_cites_sources() -> None:
    assert {"youtube", "twitch", "broadcast"} <= set(available())
    for name in available():
        prof = load_profile(name)
        assert prof.version >= 1 and prof.rules
        for rule in prof.rules:
            url = prof.sources[rule.source]["url"]
            assert url.startswith("https://") or rule.source == "tally", (name, rule.issue)


@pytest.mark.parametrize("patch, message", [
    ({"severity": "fatal"}, "severity"),
    ({"measure": "vibes"}, "unknown measure"),
    ({"source": "nowhere"}, "not in the profile's sources"),
    ({"one_of": [1]}, "exactly one of"),
])
def test_profile_validation_names_the_rule(patch: dict, message: str) -> None:
    data = yaml.safe_load((PROFILE_DIR / "youtube.yaml").read_text())
    data["rules"][0].update(patch)
    with pytest.raises(ProfileError, match=message):
        parse_profile(data, "youtube.yaml")


def test_unknown_profile_name() -> None:
    with pytest.raises(ProfileError, match="built in"):
        load_profiles("youtube,myspace")


def test_compliant_stream_is_good_everywhere_it_should_be() -> None:
    view = _health("youtube,twitch", _stream())
    for name in ("youtube", "twitch"):
        assert view[name]["status"] == "good" and not view[name]["issues"], view[name]
    assert view["twitch"]["platform_status"] == "Excellent"


@pytest.mark.parametrize("kwargs, profile, issue, status", [
    ({"gop_s": 6.0, "seconds": 14}, "youtube", "gopSizeLong", "bad"),
    ({"kbps": 9000, "height": 1080}, "youtube", "bitrateHigh", "ok"),
    ({"kbps": 1500}, "youtube", "bitrateLow", "ok"),
    ({"rate_hz": 32000}, "youtube", "audioSampleRate", "ok"),
    ({"channels": 6}, "youtube", "audioTooManyChannels", "bad"),
    ({"kbps": 7000, "height": 1080}, "twitch", "videoBitrate", "bad"),
    ({"gop_s": 4.0}, "twitch", "keyframeInterval", "bad"),
    ({"fps": 60, "height": 720}, "broadcast", "frameRate", "bad"),
])
def test_one_broken_rule_one_issue(kwargs: dict, profile: str, issue: str, status: str) -> None:
    view = _health(profile, _stream(**kwargs))[profile]
    assert [i["type"] for i in view["issues"]] == [issue], view
    assert view["status"] == status


def test_open_gop_counts_before_the_next_keyframe() -> None:
    """A 6 s GOP is too long for YouTube once 4 s pass after a keyframe, not only at 6 s."""
    st = _stream(gop_s=6.0, seconds=4.5)
    assert st.keyframe_span_s() == pytest.approx(4.467, abs=0.01)
    assert "gopSizeLong" in {i["type"] for i in _health("youtube", st)["youtube"]["issues"]}


def test_metadata_that_disagrees_with_the_bitstream() -> None:
    st = _stream()
    st.metadata_claimed = {"width": 1920, "height": 1080, "framerate": 30, "audiosamplerate": 48000,
                           "videodatarate": 3500, "stereo": True}
    snap = st.snapshot()
    mism = measure_stream(st, snap)["metadata_mismatch"]
    assert {m["key"] for m in mism} == {"width", "height"}
    view = _health("twitch", st)["twitch"]
    assert [i["type"] for i in view["issues"]] == ["metadataMismatch"]
    st.metadata_claimed = {"width": 640, "height": 360, "framerate": 30}
    assert measure_stream(st, st.snapshot())["metadata_mismatch"] == []


def test_loudness_is_not_evaluated_without_a_measurement() -> None:
    st = _stream(fps=25, height=720)
    h = StreamHealth(load_profiles("broadcast"))
    h.evaluate(st, st.snapshot())
    view = h.view()["broadcast"]
    assert view["status"] == "good" and "loudness" in view["not_evaluated"]
    h.extra["audio_loudness_lufs"] = -14.0
    changed = h.evaluate(st, st.snapshot())
    assert changed and [i["type"] for i in h.view()["broadcast"]["issues"]] == ["loudness"]
    assert h.evaluate(st, st.snapshot()) == []  # no change, no event


def test_no_media_is_no_data() -> None:
    h = StreamHealth(load_profiles("youtube"))
    st = StreamStats()
    [view] = h.evaluate(st, st.snapshot())
    assert view["status"] == "noData"


def test_cli_refuses_an_unknown_profile(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "monitor.cli", "ingest", "--listen", "127.0.0.1:0", "--record",
                          str(tmp_path), "--allow-any", "--profile", "youtube,nope"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "unknown profile 'nope'" in res.stderr and "Traceback" not in res.stderr


def test_html_report_lists_stream_health() -> None:
    from monitor.html_report import render_html, stream_health_rows

    issue = {"type": "gopSizeLong", "severity": "error", "measured": 6.0, "limit": 4.0, "since_s": 4.1}
    events = [{"seq": 1, "mono_ns": 1, "source": "rtmp", "kind": "health",
               "payload": {"app": "live", "key": "k", "profile": "youtube", "status": "bad", "issues": [issue]}},
              {"seq": 2, "mono_ns": 2, "source": "rtmp", "kind": "health",
               "payload": {"app": "live", "key": "k", "profile": "youtube", "status": "good", "issues": []}}]
    [row] = stream_health_rows(events)
    assert row["status"] == "good" and [i["type"] for i in row["issues"]] == ["gopSizeLong"]
    report = {"task": "T", "title": "t", "family": "f", "schema": "1", "status": "complete", "score": 50.0,
              "complete": True, "checks": [], "errors": [], "notes": []}
    page = render_html(report, events)
    assert "Ingest stream health" in page and "gopSizeLong (error): 6.0 vs 4.0 from 4.1 s" in page


def test_dashboard_shows_stream_health() -> None:
    from monitor.dash.app import _health_cell
    from monitor.dash.state import DashState
    from verifiers.evidence.rtmp import HealthView, RtmpHealth, RtmpStats, StreamSnapshot

    # payloads as the ingest emits them (the typed constructors rtmp/server.py uses): the dashboard
    # reads only what fits the producer's types, so a hand-made payload without `profile` is refused
    stats = RtmpStats("live", "k", StreamSnapshot(duration_s=1.0), health={"youtube": HealthView("youtube", "good")})
    st = DashState()
    st.apply({"seq": 1, **stats.event(0.000001)})
    st.apply({"seq": 2, **RtmpHealth(profile="twitch", status="bad", issues=[{"type": "keyframeInterval"}],
                                     app="live", key="k").event(0.000002)})
    health = st.streams["live/k"].health
    assert health == {"youtube": ("good", []), "twitch": ("bad", ["keyframeInterval"])}
    assert _health_cell(health) == "twitch [red]bad[/]: keyframeInterval  youtube [green]good[/]"
