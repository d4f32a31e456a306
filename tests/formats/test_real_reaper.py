"""verifiers.apps.reaper on projects REAPER 4.32-7.51 saved (tests/formats/corpus.py).

Every file parses into a well-nested chunk tree; track/item/envelope facts are pinned by hand from
the files (names in all of REAPER's quoting styles, item positions and sources, envelope points and
VOLTYPE); the synth writer's keys are checked against what REAPER writes in each chunk.
"""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest

from tests.formats.corpus import files, manifest, params
from verifiers.apps.reaper import (
    Chunk,
    Envelope,
    EnvPoint,
    Item,
    Track,
    parse_rpp,
    read_rpp,
    track_named,
    write_rpp,
)


def _real(name: str) -> Any:
    hit = [f for f in manifest() if f.file == name]
    if not hit:
        pytest.skip(f"{name} not in the manifest")
    return hit[0]


@pytest.mark.parametrize("real", params("reaper"))
def test_parses_and_counts_match_the_text(real: Any, tmp_path: Path) -> None:
    text = real.text()
    root = parse_rpp(text)
    tracks = read_rpp(real.to_path(tmp_path))
    assert len(tracks) == sum(1 for ln in text.splitlines() if ln.strip() == "<TRACK" or
                              ln.strip().startswith("<TRACK "))
    assert sum(len(t.items) for t in tracks) == sum(1 for ln in text.splitlines() if ln.strip() == "<ITEM")
    assert root.args[1].split("/")[0].replace(".", "").rstrip("abcdefgh").isdigit()   # "6.13/OSX64", 7.51/win64


def test_names_in_every_quoting_style(tmp_path: Path) -> None:
    """Perlence's vst.RPP (REAPER 5.50) names tracks with every quote REAPER uses."""
    tracks = read_rpp(_real("reaper/5.50/perlence_vst.RPP").to_path(tmp_path))
    assert [t.name for t in tracks] == [
        "5.50", "Synth", "|Beep Boop", "Boop",
        "0123456789 abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!\"#$%&'()*+,-./:;<=>?@[\\]^_'{|}~",
        "'\"hey'"[1:-1], 'hey"', "<", ">", "<>"]
    synth = track_named(tracks, "Synth")
    assert synth is not None and [(p.time_s, p.value) for p in synth.envelopes["VOLENV2"].points] == [
        (-0.0005, 1.0), (11.0, 1.0), (11.0005, 1.0)]
    tricky = read_rpp(_real("reaper/6.13/rppp_tricky-strings.RPP").to_path(tmp_path))
    assert [t.name for t in tricky][:6] == ["", '"', '""', '"""', "'", "''"]


def test_items_and_sources(tmp_path: Path) -> None:
    tracks = read_rpp(_real("reaper/6.13/rppp_audio-file-x4.RPP").to_path(tmp_path))
    kick = track_named(tracks, "kick")
    assert kick is not None
    assert [i.position_s for i in kick.items] == [0.0, 0.5, 1.0, 1.5]
    assert all(i.length_s == pytest.approx(0.10179138321995) and i.source_file == "media/909-kick.wav"
               and i.volume == 1.0 and i.name == "909-kick.wav" for i in kick.items)


def test_reaper7_envelopes(tmp_path: Path) -> None:
    """REAPER 7.51: volume envelope in fader scaling (VOLTYPE 1), pan envelope stored inverted."""
    t = read_rpp(_real("reaper/7.51/rppeditor_test2.rpp").to_path(tmp_path))[0]
    vol, pan = t.envelopes["VOLENV2"], t.envelopes["PANENV2"]
    assert vol.fader_scaled and not pan.fader_scaled
    assert [(round(p.time_s, 2), p.value) for p in pan.points] == [(0.0, 1.0), (26.67, -0.18), (49.78, -0.18),
                                                                   (69.33, 0.0)]
    assert pan.pan_points()[0].value == -1.0   # +1 stored = full left


def test_unquoted_version_token(tmp_path: Path) -> None:
    root = parse_rpp(_real("reaper/7.51/rppeditor_test1.rpp").text())
    assert root.args[:2] == ["0.1", "7.51/win64"]


# ---- synth vs real ---------------------------------------------------------------------------

#: What REAPER writes that write_rpp leaves to REAPER's defaults, and why.
OMITTED_ON_PURPOSE = {
    "REAPER_PROJECT": "view, grid, render and master-track state: REAPER fills its defaults on open",
    "TRACK": "UI/view state (TRACKHEIGHT, PEAKCOL, SHOWINMIX...), TRACKID GUIDs (REAPER makes new ones)",
    "ITEM": "IGUID/IID GUIDs and ids (REAPER assigns them)",
    "PANENV2": "EGUID/LANEHEIGHT (GUID and lane view state)",
}


def _keys(root: Chunk) -> dict[str, set[str]]:
    out: dict[str, set[str]] = collections.defaultdict(set)

    def walk(c: Chunk) -> None:
        out[c.name].update(ln[0] for ln in c.lines if ln)
        for ch in c.children:
            walk(ch)
    walk(root)
    return out


def test_synth_writes_only_what_reaper_writes(tmp_path: Path) -> None:
    real = [f for f in files("reaper") if "unquoted" not in f.note]
    seen: dict[str, set[str]] = collections.defaultdict(set)
    for f in real:
        for name, ks in _keys(parse_rpp(f.text())).items():
            seen[name] |= ks
    p = write_rpp(tmp_path / "s.RPP", [Track("CAR \"x\"", 0.5, -0.25, items=[Item(1.0, 2.0, 0.5, "it", "a b.wav", 0.1, 0.2)],
                                             envelopes={"PANENV2": Envelope("PANENV2", [EnvPoint(0, 1)])})])
    syn = _keys(parse_rpp(p.read_text()))
    for name, ks in syn.items():
        assert ks <= seen[name], f"<{name}: synth writes {sorted(ks - seen[name])}, no REAPER save has them"
    for name in ("ITEM", "TRACK", "SOURCE"):
        always = set.intersection(*[_keys(parse_rpp(f.text())).get(name, set()) or set() for f in real
                                    if name in _keys(parse_rpp(f.text()))])
        missing = always - syn[name]
        assert not missing or name in OMITTED_ON_PURPOSE, f"<{name}: REAPER always writes {sorted(missing)}"
    back = read_rpp(p)[0]
    assert back.name == 'CAR "x"' and (back.volume, back.pan) == (0.5, -0.25)
    it = back.items[0]
    assert (it.position_s, it.length_s, it.source_offset_s, it.source_file, it.fade_in_s, it.fade_out_s) == (
        1.0, 2.0, 0.5, "a b.wav", 0.1, 0.2)


def test_tokenizer_keeps_backslashes_and_unclosed_quotes() -> None:
    root = parse_rpp('<REAPER_PROJECT 0.1 "6.0" 0\n  RECORD_PATH C:\\media\\rec ""\n  NOTES "unclosed\n>\n')
    assert root.first("RECORD_PATH") == ["C:\\media\\rec", ""]
    assert root.first("NOTES") == ["unclosed"]
