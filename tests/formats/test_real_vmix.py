"""verifiers.apps.vmix on vMix's own XML: API dumps from vMix 20 (vmix-js-utils' samples) and a
preset a real vMix saved (tests/formats/corpus.py).

API XML: parses, round-trips through state_to_xml (same state, same element names), unknown
children kept, facts pinned by hand. Preset: the real shape (<XML>, numeric Type, <State Main
Preview>) is read, and the synthetic preset T10 writes is compared with it (listed differences).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.formats.corpus import manifest, params
from verifiers.apps.vmix import parse_api_xml, parse_preset_xml, state_to_xml

SYNTH_PRESET = Path(__file__).resolve().parents[1] / "vmix" / "fixtures" / "panel.vmix"


def _real(name: str) -> Any:
    hit = [f for f in manifest() if f.file == name]
    if not hit:
        pytest.skip(f"{name} not in the manifest")
    return hit[0]


def _tags(root: ET.Element) -> set[str]:
    return {el.tag for el in root.iter()}


@pytest.mark.parametrize("real", params("vmix-api"))
def test_api_xml_round_trips(real: Any) -> None:
    data = real.data()
    state = parse_api_xml(data)
    again = state_to_xml(state)
    assert parse_api_xml(again) == state
    # No element lost or invented (the writer always writes <inputs>, as vMix does; the library's
    # trimmed audio-only sample lacks it).
    assert _tags(ET.fromstring(again)) - {"inputs"} == _tags(ET.fromstring(data.strip())) - {"inputs"}
    assert state.version == "20.0.0.55" and state.edition == "Pro"


def test_api_facts_by_hand() -> None:
    s = parse_api_xml(_real("vmix-api/20.0/vmixjs_inputs.xml").data())
    assert (s.active, s.preview) == (2, 1)
    gt = s.input_by_number(4)
    assert gt is not None and gt.type == "GT" and gt.title == "Scoreboard 3- Lineup 12.gtzip"
    assert gt.text_value("Home Team") == "HOME TEAM" and len(gt.text) == 27
    assert [i.number for i in s.inputs] == [1, 2, 4, 5, 6]   # input 3 absent: numbers are vMix's, not positions
    t = parse_api_xml(_real("vmix-api/20.0/vmixjs_transitions.xml").data())
    assert [(x.number, x.effect, x.duration_ms) for x in t.transitions or []] == [
        (1, "Fade", 500), (2, "Merge", 1000), (3, "Wipe", 1000), (4, "CubeZoom", 1000)]
    assert t.overlays is not None and (t.overlays[1].input, t.overlays[1].preview) == (1, True)
    assert t.master is not None and t.master.volume == 100 and t.master.extra_attrs == {"headphonesVolume": "100"}
    r = parse_api_xml(_real("vmix-api/20.0/vmixjs_replay.xml").data())
    replay = r.input_by_number(7)
    assert replay is not None and replay.type == "Replay" and replay.muted is True
    assert any(u.startswith("<replay ") for u in replay.unknown)   # unknown child kept verbatim


def test_real_preset() -> None:
    """A preset vMix saved (Version 9): nine inputs directly under <XML>, numeric types."""
    s = parse_preset_xml(_real("vmix-preset/v9/forte_preset.vmix").data())
    assert s.version == "9" and len(s.inputs) == 9
    assert [i.type for i in s.inputs] == ["Stream", "Audio", "Audio", "Video", "Video", "Image", "Image", "Image",
                                          "VideoList"]
    assert [i.extra_attrs["TypeCode"] for i in s.inputs][:4] == ["20", "7", "7", "0"]
    mic = s.inputs[1]
    assert mic.title == "Microphone" and mic.extra_attrs["OriginalTitle"] == "Audio USB D2 In 1"
    assert mic.muted is False and mic.extra_attrs["VolumeF"] == "0.960596"
    assert mic.volume == pytest.approx(96.0596)                    # VolumeF 0..1 -> the API's 0-100
    assert s.inputs[3].content == "C:\\forte\\video\\Forte_IntroFinal.mp4"     # the file path is the text
    assert (s.active, s.preview) == (4, 5)   # <State Main="3" Preview="4">, 0-based positions
    kept = {ET.fromstring(u).tag for u in s.unknown}
    assert {"State", "OutputFormat", "AudioMaster", "StreamingSettings"} <= kept


@pytest.mark.parametrize("real", params("vmix-preset"))
def test_real_presets_parse(real: Any) -> None:
    """Every preset vMix saved: all inputs read, layer keys point at inputs of the same preset,
    program/preview (0-based State positions) land on an input, no raw Type number left for the
    kinds seen so far, State and settings kept."""
    data = real.data()
    s = parse_preset_xml(data)
    root = ET.fromstring(data.lstrip(b"\xef\xbb\xbf"))
    raw_inputs = [c for c in root if c.tag == "Input"]
    assert len(s.inputs) == len(raw_inputs) and s.version == "9"
    keys = {i.key for i in s.inputs}
    for inp, raw in zip(s.inputs, raw_inputs, strict=True):
        assert inp.key == raw.get("Key")
        assert inp.extra_attrs["TypeCode"] == raw.get("Type") and not inp.type.isdigit(), raw.get("Type")
        want_layers = sorted((int(k[7:]), v) for k, v in raw.attrib.items() if k.startswith("Overlay") and
                             k[7:].isdigit() and v)
        assert [(x.index, x.key) for x in inp.layers] == want_layers
        assert all(x.key in keys for x in inp.layers)
    assert s.input_by_number(s.active) is not None and s.input_by_number(s.preview) is not None
    assert "State" in {ET.fromstring(u).tag for u in s.unknown}


def test_master_preset_by_hand() -> None:
    """Stream My Event's master preset: 43 inputs, SuperSource 05 layers three inputs, State Main=30."""
    s = parse_preset_xml(_real("vmix-preset/v9/sme_master_preset.vmix").data())
    assert len(s.inputs) == 43
    ss5 = s.input_by_title("SuperSource 05")
    assert ss5 is not None and ss5.type == "Image" and len(ss5.layers) == 3
    assert [s.input_by_title(t).type for t in ("Input 1", "Remote 1", "GFX 1", "Talkback Mic", "Playout")] == [
        "Capture", "VideoCall", "Browser", "Audio", "Colour"]
    assert (s.active, s.preview) == (31, 5)                       # positions 30 and 4, 0-based
    assert s.input_by_number(31).title == "SuperSource 10"


def test_preset_layers_as_overlay_attributes() -> None:
    """Layer slots in a preset are Overlay0="<key>" attributes (as in the real master preset)."""
    s = parse_preset_xml(b'<XML><Version>27</Version><Input Type="1" Key="k1" OriginalTitle="a.png">C:/a.png</Input>'
                         b'<Input Type="0" Key="k2" OriginalTitle="b.mp4" Overlay0="k1" Overlay1="" Overlay2="k3">'
                         b'C:/b.mp4</Input><State Main="1" Preview="0"/></XML>')
    assert [(x.index, x.key) for x in s.inputs[1].layers] == [(0, "k1"), (2, "k3")]
    assert (s.active, s.preview) == (2, 1) and s.inputs[0].type == "Image"


#: How the synthetic preset (tests/vmix/fixtures/panel.vmix, the shape T10's synth writes) differs
#: from the preset vMix saved. Listed so a change on either side shows up here.
KNOWN_SYNTH_DIFFERENCES = {
    "wrapper": "synth nests inputs in <Inputs>; vMix puts <Input> directly under <XML>",
    "type": "synth writes type names (NDI, GT, Mix); vMix writes numbers (0 Video, 1 Image, ...)",
    "program": "synth writes <Active>/<Preview> elements; vMix writes <State Main= Preview=> attributes",
    "volume": "synth writes Volume (0-100); vMix writes VolumeF",
    "layers": "synth writes multiview slots as <Overlay Index Key> children; vMix as Overlay0=\"<key>\" attributes",
}


def test_synth_preset_vs_real() -> None:
    real = ET.fromstring(_real("vmix-preset/v9/forte_preset.vmix").data())
    synth = ET.fromstring(SYNTH_PRESET.read_bytes())
    assert real.tag == synth.tag == "XML"
    real_top, synth_top = {c.tag for c in real}, {c.tag for c in synth}
    differences = set()
    if "Inputs" in synth_top and "Inputs" not in real_top:
        differences.add("wrapper")
    synth_inputs = [i for c in synth for i in ([c] if c.tag == "Input" else list(c) if c.tag == "Inputs" else [])]
    real_inputs = [c for c in real if c.tag == "Input"]
    if any(not i.get("Type", "").isdigit() for i in synth_inputs) and all(i.get("Type", "").isdigit()
                                                                         for i in real_inputs):
        differences.add("type")
    if {"Active", "Preview"} & synth_top and "State" in real_top:
        differences.add("program")
    if any("Volume" in i.attrib for i in synth_inputs) and all("VolumeF" in i.attrib for i in real_inputs):
        differences.add("volume")
    master = [c for c in ET.fromstring(_real("vmix-preset/v9/sme_master_preset.vmix").data()) if c.tag == "Input"]
    if any(i.find("Overlay") is not None for i in synth_inputs) and any(
            k.startswith("Overlay") and k[7:].isdigit() for i in master for k in i.attrib) and not any(
            i.find("Overlay") is not None for i in master):
        differences.add("layers")
    assert differences == set(KNOWN_SYNTH_DIFFERENCES)
    # The attributes both share mean the same thing to the reader.
    for name in ("Key", "OriginalTitle", "Title", "Muted", "SelectedIndex"):
        assert any(name in i.attrib for i in real_inputs), name
    parse_preset_xml(SYNTH_PRESET.read_bytes())
