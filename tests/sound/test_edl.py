"""CMX3600 reader: events, clip names, timecode arithmetic, drop frame, clear errors."""

from __future__ import annotations

import pytest

from verifiers.apps.edl import EDLError, EDLEvent, parse_edl, read_edl, tc_to_frames, write_edl

SAMPLE = """TITLE: REEL4 V2
FCM: NON-DROP FRAME

001  AX       V     C        01:00:02:00 01:00:04:00 01:00:00:00 01:00:02:00
* FROM CLIP NAME: SHOT_02
002  AX       AA/V  D    012 01:00:10:12 01:00:12:00 01:00:02:00 01:00:03:12
M2   AX       048.0                01:00:10:12
"""


def test_events_and_timecodes():
    edl = parse_edl(SAMPLE, 24)
    assert edl.title == "REEL4 V2" and not edl.drop_frame
    a, b = edl.events
    assert (a.src_in, a.src_out, a.rec_in, a.rec_out) == (86448, 86496, 86400, 86448)
    assert a.clip_name == "SHOT_02" and b.transition == "D" and b.channels == "AA/V"
    assert b.rec_out - b.rec_in == 36 and b.comments[0].startswith("M2")


def test_drop_frame_counting():
    assert tc_to_frames("00:01:00;02", 29.97) == 1800  # frames ;00 and ;01 of minute 1 do not exist
    assert tc_to_frames("00:10:00;00", 29.97) == 17982


def test_round_trip(tmp_path):
    ev = [EDLEvent(1, "AX", "V", "C", 100, 148, 0, 48, ["* FROM CLIP NAME: S1"])]
    got = read_edl(write_edl(tmp_path / "x.edl", "T", ev, 25), 25)
    assert got.events[0].src_in == 100 and got.events[0].clip_name == "S1"


@pytest.mark.parametrize("text", ["hello world\n", "001 AX V C 01:00:00:00 01:00:00:99 01:00:00:00 01:00:01:00\n", ""])
def test_garbage_is_a_clear_error(text):
    with pytest.raises(EDLError):
        parse_edl(text, 24)
