"""The dashboard fed by a bundle recorded from a real run (OBS 29 headless streaming to tally's
ingest, observed over obs-websocket; see record_real_run.py), at 80x24 and 160x50.

The "snapshot" is of what the dashboard understood (its folded state), not of pixels: a pixel
snapshot breaks with every Textual release, while a wrong fold is what would really mislead.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from monitor.dash.app import TallyDash, bundle_source

BUNDLE = Path(__file__).parent / "fixtures" / "real_t05_run"
SNAPSHOT = Path(__file__).parent / "fixtures" / "real_t05_run.state.json"


def folded(app: TallyDash) -> dict:
    st = app.state
    s = st.streams["live/test_key"]
    return {
        "task": st.task, "phase": st.phase, "events": st.event_count,
        "stream": {"state": s.state, "size": [s.width_px, s.height_px], "fps": s.fps, "codec": s.video_codec,
                   "keyframe_last_s": s.keyframe_last_s, "audio": s.audio, "duration_s": s.duration_s,
                   "bitrate_points": len(s.bitrate_history_bps)},
        "obs": {"connected": st.obs.connected, "program": st.obs.program, "muted": st.obs.muted,
                "outputs": st.obs.outputs},
        "score": st.report["score"] if st.report else None,
    }


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
async def test_dashboard_over_real_run_bundle(size, tmp_path):
    app = TallyDash(bundle_source(BUNDLE), refresh_s=0.05)
    async with app.run_test(size=size) as pilot:
        await app.feed_done.wait()
        await pilot.pause(0.2)
        app.refresh_view()
        await pilot.pause()
        got = folded(app)
        assert got == json.loads(SNAPSHOT.read_text())
        assert app.query_one("#streams-table").row_count == 1
        assert app.query_one("#score-table").row_count == 4
        svg = app.export_screenshot()
        (tmp_path / f"real_{size[0]}x{size[1]}.svg").write_text(svg)
        assert "live/test_key" in svg and "1280x720" in svg


def test_real_bundle_is_what_the_fixture_claims():
    """Guards the fixture itself: OBS really streamed to the ingest and the observer saw it."""
    events = [json.loads(line) for line in (BUNDLE / "events.jsonl").read_text().splitlines()]
    kinds = {(e["source"], e["kind"]) for e in events}
    assert {("rtmp", "publish"), ("rtmp", "unpublish"), ("obs", "connected"), ("obs", "snapshot")} <= kinds
    scenes = [e["payload"]["data"]["sceneName"] for e in events
              if e["source"] == "obs" and e["payload"].get("type") == "CurrentProgramSceneChanged"]
    assert scenes[-3:] == ["Live", "BRB", "Live"]
