"""RPP reader: round trip of what write_rpp writes, REAPER-style text, and clear errors."""

from __future__ import annotations

import pytest

from verifiers.apps.reaper import (
    Envelope,
    EnvPoint,
    Item,
    RPPError,
    Track,
    parse_rpp,
    read_rpp,
    track_named,
    tracks,
    write_rpp,
)

HANDWRITTEN = """<REAPER_PROJECT 0.1 "6.80/linux-x86_64" 1681234567
  RIPPLE 0
  <TRACK {7A4F0C0E-0000-0000-0000-000000000001}
    NAME "CAR pass"
    VOLPAN 0.5 -0.25 -1 -1 1
    <PANENV2
      EGUID {11111111-2222-3333-4444-555555555555}
      ACT 1 -1
      PT 0 1 0
      PT 2.5 0 0
      PT 5 -1 0
    >
    <ITEM
      POSITION 1.5
      LENGTH 3.25
      SOFFS 0.5
      NAME `it's "quoted"`
      <SOURCE SECTION
        LENGTH 3
        <SOURCE WAVE
          FILE "media/car pass.wav"
        >
      >
    >
  >
>
"""


def test_handwritten_project_tracks_items_and_pan_sign():
    [t] = tracks(parse_rpp(HANDWRITTEN))
    assert t.name == "CAR pass" and t.volume == 0.5 and t.pan == -0.25
    [item] = t.items
    assert (item.position_s, item.length_s, item.source_offset_s) == (1.5, 3.25, 0.5)
    assert item.source_file == "media/car pass.wav"
    pan = t.envelopes["PANENV2"].pan_points()
    assert [p.value for p in pan] == [-1.0, 0.0, 1.0]  # stored +1 (left) becomes -1 (left) in pan sign


def test_round_trip(tmp_path):
    env = Envelope("PANENV2", [EnvPoint(0.0, 1.0), EnvPoint(3.0, -1.0, 2)])
    t = Track("CAR", 0.8, 0.1, [Item(0.25, 4.0, 0.0, "car", "car.wav", 0.01, 0.02)], {"PANENV2": env})
    got = track_named(read_rpp(write_rpp(tmp_path / "p.RPP", [t])), "car")
    assert got is not None and got.items[0].fade_out_s == pytest.approx(0.02)
    assert [(p.time_s, p.value, p.shape) for p in got.envelopes["PANENV2"].points] == [(0.0, 1.0, 0), (3.0, -1.0, 2)]


@pytest.mark.parametrize("text, msg", [("hello\n", "outside any chunk"), ("<REAPER_PROJECT\n  <TRACK\n  >\n", "unterminated"),
                                       ("<OTHER\n>\n", "not a REAPER project"), (">\n", "closes nothing")])
def test_garbage_is_a_clear_error(tmp_path, text, msg):
    p = tmp_path / "bad.RPP"
    p.write_text(text)
    with pytest.raises(RPPError, match=msg):
        read_rpp(p)
