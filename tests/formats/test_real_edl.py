"""verifiers.apps.edl on CMX3600 EDLs that Avid, Premiere, Nucoda and others wrote (tests/formats/corpus.py).

Every file parses (at the frame rate its timecodes allow), every event line of the text becomes an
event, cut lists are pinned by hand from a Premiere and an Avid-style file, and the writer's
column layout is compared with Premiere's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.formats.corpus import manifest, params
from verifiers.apps.edl import EDLError, EDLEvent, parse_edl, read_edl, tc_to_frames, write_edl

_EVENT_START = re.compile(r"^\d{3,6}\s+\S+\s+\S+\s+(C|D|W\d{3}|K[BO]?)\s")


def _real(name: str) -> Any:
    hit = [f for f in manifest() if f.file == name]
    if not hit:
        pytest.skip(f"{name} not in the manifest")
    return hit[0]


def _parse_any_rate(text: str) -> tuple[float, Any]:
    err: Exception | None = None
    for fps in (24.0, 25.0, 30.0):
        try:
            return fps, parse_edl(text, fps)
        except EDLError as exc:
            err = exc
    raise AssertionError(f"no frame rate parses it: {err}")


@pytest.mark.parametrize("real", params("edl"))
def test_every_event_line_is_an_event(real: Any) -> None:
    text = real.text()
    _fps, edl = _parse_any_rate(text)
    lines = [ln.strip() for ln in text.splitlines() if _EVENT_START.match(ln.strip())]
    assert len(edl.events) == len(lines)
    assert [e.number for e in edl.events] == [int(ln.split()[0]) for ln in lines]
    for e in edl.events:
        assert e.src_out >= e.src_in and e.rec_out >= e.rec_in


def test_premiere_cut_list_by_hand() -> None:
    """OTIO's premiere_example.edl, read by eye: two cuts from reel AX."""
    edl = parse_edl(_real("edl/otio/otio_premiere_example.edl").text(), 24)
    assert edl.title == "Premiere_Example.01"
    a, b = edl.events
    assert (a.reel, a.channels, a.transition) == ("AX", "V", "C")
    assert (a.src_in, a.src_out) == (tc_to_frames("01:00:04:05", 24), tc_to_frames("01:00:05:12", 24))
    assert (a.rec_in, a.rec_out) == (tc_to_frames("00:59:53:11", 24), tc_to_frames("00:59:54:18", 24))
    assert a.rec_out == b.rec_in                          # contiguous record side
    assert a.clip_name == "ZZ100_501.take_1.0001.exr" and b.clip_name == "ZZ100_502A.take_2.0101.exr"


def test_premiere_audio_channels_and_dissolve() -> None:
    """pycmx's test_25.edl (Premiere, 25 fps): AUD 3 4 under event 3, a 70-frame cross dissolve."""
    edl = parse_edl(_real("edl/pycmx/pycmx_test_25.edl").text(), 25)
    ev3 = next(e for e in edl.events if e.number == 3)
    assert ev3.extra_audio_channels == [3, 4] and ev3.clip_name == "Test rename"
    d = next(e for e in edl.events if e.transition == "D")
    assert d.number == 5 and d.transition_frames == 70
    assert any(c.startswith("EFFECTS NAME IS CROSS DISSOLVE") for c in d.comments)


def test_avid_source_table_kept() -> None:
    edl = parse_edl(_real("edl/pycmx/pycmx_INS4_R1_010417.edl").text(), 24)
    assert len(edl.events) == 287
    assert sum(n.startswith(">>> SOURCE") for n in edl.notes) == 158


def test_garbage_still_fails() -> None:
    with pytest.raises(EDLError):
        parse_edl("TITLE: x\n001  AX V C 01:00:00:00 nonsense\n", 24)


def test_synth_columns_match_premiere(tmp_path: Path) -> None:
    """write_edl's event lines have Premiere's columns, and read back to the same events."""
    real_lines = [ln for ln in _real("edl/pycmx/pycmx_test_25.edl").text().splitlines() if _EVENT_START.match(ln)]
    events = [EDLEvent(1, "AX", "V", "C", 90000, 91499, 0, 1499, ["* FROM CLIP NAME: Jellyfish.jpg"]),
              EDLEvent(5, "AX", "V", "D", 2000, 2170, 1499, 1669, transition_frames=70)]
    p = write_edl(tmp_path / "s.edl", "Sequence 01", events, 25)
    syn_lines = [ln for ln in p.read_text().splitlines() if _EVENT_START.match(ln)]

    def columns(ln: str) -> list[int]:
        return [m.start() for m in re.finditer(r"\S+", ln)]
    assert columns(syn_lines[0]) == columns(real_lines[0])                 # a cut
    real_d = next(ln for ln in real_lines if " D " in ln)
    assert columns(syn_lines[1]) == columns(real_d)                        # a dissolve with its frames
    back = read_edl(p, 25)
    assert [(e.number, e.reel, e.transition, e.src_in, e.src_out, e.rec_in, e.rec_out, e.transition_frames)
            for e in back.events] == [(e.number, e.reel, e.transition, e.src_in, e.src_out, e.rec_in, e.rec_out,
                                       e.transition_frames) for e in events]
