"""Dashboard driven by Textual's Pilot over a recorded bundle, at 80x24 and 160x50."""

from __future__ import annotations

import pytest

from monitor.dash.app import HelpScreen, TallyDash, bundle_source, meter_bar
from monitor.dash.state import DashState


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
async def test_dashboard_shows_a_recorded_run(demo_bundle, tmp_path, size):
    app = TallyDash(bundle_source(demo_bundle), refresh_s=0.05)
    async with app.run_test(size=size) as pilot:
        await app.feed_done.wait()
        await pilot.pause(0.2)
        app.refresh_view()
        await pilot.pause()
        st = app.state
        assert st.task == "R06.12.01.01-T05" and st.phase == "scored"
        stream = st.streams["live/tally"]
        assert stream.state == "ended" and (stream.width_px, stream.height_px) == (1920, 1080)
        assert len(stream.bitrate_history_bps) == 30
        assert st.obs.program == "Live" and st.obs.muted == {"Mic": True} and st.obs.outputs["stream"]
        table = app.query_one("#streams-table")
        assert table.row_count == 1
        assert app.query_one("#score-table").row_count == 4
        assert app.query_one("#scenario-table").row_count == 2
        top = str(app.query_one("#top").render())
        assert "R06.12.01.01-T05" in top and "scored" in top
        assert app.screen.has_class("narrow") == (size[0] < 120)
        svg = app.export_screenshot()
        (tmp_path / f"dash_{size[0]}x{size[1]}.svg").write_text(svg)
        assert "live/tally" in svg


async def test_keys_help_filter_pause_and_score_toggle(demo_bundle):
    app = TallyDash(bundle_source(demo_bundle), refresh_s=0.05)
    async with app.run_test(size=(160, 50)) as pilot:
        await app.feed_done.wait()
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("s")
        assert app.query_one("#score-panel").has_class("hidden")
        await pilot.press("s")
        assert not app.query_one("#score-panel").has_class("hidden")
        await pilot.press("slash")
        await pilot.press(*"scenario", "enter")
        assert app.filter_text == "scenario"
        log = app.query_one("#log")
        assert len(log.lines) == 2  # only the two scenario events pass the filter
        await pilot.press("p")
        assert app.paused


async def test_broken_bundle_feed_is_shown_not_a_crash(tmp_path):
    app = TallyDash(bundle_source(tmp_path / "missing"), refresh_s=0.05)
    async with app.run_test(size=(80, 24)):
        await app.feed_done.wait()
        assert app.state.problems and "feed stopped" in app.state.problems[0]


def test_reducer_tolerates_odd_payloads():
    st = DashState()
    for e in [{"source": "rtmp", "kind": "stats", "payload": {"app": "a"}},
              {"source": "obs", "kind": "event", "payload": {"type": "InputMuteStateChanged"}},
              {"source": "vmix", "kind": "program", "payload": None},
              {"source": "probe.audio", "kind": "meter", "payload": {"true_peak_dbtp": "x"}},
              {"kind": "nothing"}]:
        st.apply(e)
    assert st.event_count == 5 and not st.streams


def test_meter_bar_marks_target_and_clips():
    bar = meter_bar(-16.0, -23.0, width=20)
    assert "|" in bar and bar.startswith("[yellow]")
    assert meter_bar(-0.5, None).startswith("[red]")
    assert "█" not in meter_bar(None, None)
