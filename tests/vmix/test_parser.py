"""vMix XML parsing: API XML, .vmix presets, TCP tally, round trips, and bad input."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.vmix.conftest import FIXTURES, VMIX_JS_UTILS
from verifiers.apps.vmix import (
    VmixXmlError,
    parse_api_xml,
    parse_preset_xml,
    parse_tally,
    state_to_xml,
    tally_string,
)


@pytest.fixture(scope="module")
def full():
    return parse_api_xml((FIXTURES / "api_full.xml").read_bytes())


def test_general_state_and_outputs(full):
    assert (full.version, full.edition, full.preset) == ("27.0.0.49", "4K", "D:\\shows\\panel.vmix")
    assert (full.active, full.preview) == (1, 2)
    assert full.output("recording") is True and full.output("external") is False
    assert full.output("streaming") is True and full.output("multiCorder") is True
    assert full.output("fadeToBlack") is False and full.output("fullscreen") is False
    # Newer vMix puts per-channel detail in attributes: kept verbatim.
    assert full.outputs["streaming"].attrs == {"channel1": "True", "channel2": "True", "channel3": "False"}
    assert full.outputs["recording"].attrs == {"duration": "42"}


def test_inputs_typed_fields(full):
    assert [i.number for i in full.inputs] == [1, 2, 3, 4, 5, 6]
    cam2 = full.input_by_title("STUDIO-PC (CAM2)")
    assert cam2 is not None and cam2.type == "NDI" and cam2.short_title == "CAM2"
    assert cam2.muted is True and cam2.volume == 84.5 and cam2.balance == -0.25 and cam2.audiobusses == "MA"
    assert cam2.extra_attrs["gainDb"] == "3"  # not typed, but not lost
    title = full.input_by_number(3)
    assert title is not None and title.muted is None and title.volume is None  # no audio on titles
    assert [(t.index, t.name, t.value) for t in title.text] == [(0, "Name.Text", "Dr. Sample"),
                                                                 (1, "Role.Text", "Guest")]
    assert title.text_value("Name") == "Dr. Sample" and title.text_value("Role.Text") == "Guest"
    assert title.images[0].value == "C:\\titles\\logo.png"
    assert title.content == "LowerThird.gtzip"
    clips = full.input_by_number(5)
    assert clips is not None and clips.position_ms == 1200 and clips.duration_ms == 30000 and clips.loop is True
    assert clips.list_items == [("C:\\clips\\intro.mp4", False), ("C:\\clips\\outro.mp4", True)]


def test_layers_overlays_mixes_transitions_audio(full):
    mv = full.input_by_title("Multiview")
    assert mv is not None
    assert [layer.key[-2:] for layer in mv.layers] == ["01", "02", "03"]
    assert mv.layers[1].position == {"panX": "0.5", "panY": "-0.5", "zoomX": "0.5", "zoomY": "0.5"}
    assert mv.position == {"zoomX": "1", "zoomY": "1"}
    assert [(o.number, o.input, o.preview) for o in full.overlays[:3]] == [(1, 3, False), (2, 5, True), (3, None, False)]
    assert len(full.overlays) == 8
    assert [(t.number, t.effect, t.duration_ms) for t in full.transitions][3] == (4, "Stinger1", 2500)
    assert [(m.number, m.preview, m.active) for m in full.mixes] == [(2, 5, 3)]
    assert full.master is not None and full.master.volume == 90 and full.master.muted is False
    assert full.master.extra_attrs == {"headphonesVolume": "74.5"}
    assert full.audio["busA"].muted is True and full.audio["busA"].extra_attrs["name"] == "Interview"


def test_unknown_elements_are_kept_not_fatal(full):
    tags = [raw.split(">", 1)[0].split()[0] for raw in full.unknown]
    assert tags == ["<dynamic", "<replay"]
    clips = full.input_by_number(5)
    assert clips.unknown == ['<futureThing mode="x">kept</futureThing>']
    mic = full.input_by_number(6)
    assert mic.extra_attrs["newAttr"] == "1" and mic.solo is True


def test_round_trip_is_exact(full):
    xml = state_to_xml(full)
    again = parse_api_xml(xml)
    assert again == full
    assert state_to_xml(again) == xml
    assert "<recording duration=\"42\">True</recording>" in xml  # vMix's True/False spelling


def test_tally_string_and_parse(full):
    assert tally_string(full) == "120000"
    assert parse_tally("0121") == ([2, 4], [3])
    assert parse_tally("1100") == ([1, 2], [])  # two in program during a transition
    assert parse_tally("") == ([], [])
    for bad in ("100ABC", "10 0", "01-2"):
        with pytest.raises(VmixXmlError, match="TCP tally"):
            parse_tally(bad)


@pytest.mark.parametrize("data, match", [
    (b"", "empty document"),
    (b"   \n", "empty document"),
    (b"<vmix><inputs><input number='1'></inputs></vmix>", "not well-formed"),
    (b"<vmix><version>27</version>", "not well-formed"),
    (b"\xff\xfe<garbage", "not well-formed"),
    (b"<html><body>500</body></html>", "root element is <html>"),
    (b"<vmix><active>two</active></vmix>", "active: expected a number"),
    (b"<vmix><recording>Maybe</recording></vmix>", "recording: expected True/False"),
    (b"<vmix><inputs><input number='x' key='k'/></inputs></vmix>", "@number"),
    (b"<vmix><audio><master volume='nan'/></audio></vmix>", "finite"),
])
def test_malformed_xml_raises_one_documented_error(data, match):
    with pytest.raises(VmixXmlError, match=match) as info:
        parse_api_xml(data)
    assert "\n" not in str(info.value)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400))
def test_fuzz_bytes_only_ever_raise_vmixxmlerror(data):
    try:
        parse_api_xml(data)
    except VmixXmlError:
        pass


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=1, max_value=10_000))
def test_truncated_documents_raise_vmixxmlerror(cut):
    """Every strict prefix of a document (a torn HTTP body) is rejected, never half-parsed."""
    doc = (FIXTURES / "api_full.xml").read_bytes().rstrip()
    with pytest.raises(VmixXmlError):
        parse_api_xml(doc[: cut % len(doc)])


def test_preset_parses_into_same_model():
    preset = parse_preset_xml((FIXTURES / "panel.vmix").read_bytes())
    ndi = [i for i in preset.inputs if i.type == "NDI"]
    assert [i.title for i in ndi] == [f"STUDIO-PC (CAM{n})" for n in range(1, 5)]
    assert [i.number for i in preset.inputs] == [1, 2, 3, 4, 5, 6]  # document order
    title = preset.input_by_title("LowerThird.gtzip")
    assert title is not None and title.text_value("Name") == "Dr. Sample" and title.text_value("Role") == "Guest"
    mv = preset.input_by_title("Multiview")
    keys = {i.key: i.title for i in preset.inputs}
    assert [keys[layer.key] for layer in mv.layers][:4] == [i.title for i in ndi]
    assert mv.unknown == ['<Settings Deinterlace="False" />']
    assert (preset.active, preset.preview) == (1, 2)
    assert preset.output("recording") is False and preset.version == "27"
    assert preset.inputs[0].muted is False and preset.inputs[0].volume == 100


def test_preset_with_api_shape_and_bad_presets():
    api_shaped = parse_preset_xml((FIXTURES / "api_full.xml").read_bytes())
    assert len(api_shaped.inputs) == 6
    with pytest.raises(VmixXmlError, match="no input elements"):
        parse_preset_xml(b"<XML><Version>27</Version></XML>")
    with pytest.raises(VmixXmlError, match="not well-formed"):
        parse_preset_xml(b"<XML><Input Key='a'")


def _git_show(path: str) -> str | None:
    if not VMIX_JS_UTILS.exists():
        return None
    res = subprocess.run(["git", "--git-dir", str(VMIX_JS_UTILS), "show", f"HEAD:{path}"],
                         capture_output=True, text=True, timeout=30)
    return res.stdout if res.returncode == 0 else None


def test_public_sample_from_vmix_js_utils():
    """The one public API XML sample file (vmix-js-utils test data), read straight from the fetched mirror."""
    text = _git_show("test/xml-api/_data/inputs.xml")
    if text is None:
        pytest.skip("vmix-js-utils not fetched (fetch github:jensstigaard/vmix-js-utils to run this)")
    state = parse_api_xml(text)
    # What that project's own tests assert about the sample, checked independently here.
    assert (state.preview, state.active) == (1, 2)
    assert [i.number for i in state.inputs] == [1, 2, 4, 5, 6]
    gt = state.input_by_number(4)
    assert gt.type == "GT" and len(gt.text) == 27 and gt.text_value("Home Team") == "HOME TEAM"
    social = state.input_by_number(6)
    assert [im.name for im in social.images] == ["Object", "FromPhoto", "Source", "Photo"]
    assert parse_api_xml(state_to_xml(state)) == state
    assert tally_string(state) == "210000"


@pytest.mark.parametrize("test_file", [
    "test/xml-api/general-state.test.js", "test/xml-api/transitions.test.js",
    "test/xml-api/overlay-channels.test.js", "test/xml-api/audio-busses.test.js", "test/xml-api/mixes.test.js",
    "test/xml-api/tally.test.js", "test/xml-api/input-mapping/streams.test.js",
])
def test_public_inline_samples_from_vmix_js_utils(test_file):
    """The XML embedded in vmix-js-utils' tests (String.raw`...` / `...`) parses and round-trips."""
    js = _git_show(test_file)
    if js is None:
        pytest.skip("vmix-js-utils not fetched (fetch github:jensstigaard/vmix-js-utils to run this)")
    start = js.index("<vmix>")
    xml = js[start: js.index("</vmix>", start) + len("</vmix>")]
    state = parse_api_xml(xml)
    assert state.version is not None or state.inputs  # every sample has one or the other
    assert parse_api_xml(state_to_xml(state)) == state
    if "general-state" in test_file:
        assert state.output("recording") is False and state.edition == "Pro"
    if "overlay-channels" in test_file:
        assert [(o.number, o.input, o.preview) for o in state.overlays[:3]] == [(1, None, False), (2, 1, True),
                                                                                (3, 2, False)]
    if "audio-busses" in test_file:
        assert sorted(state.audio) == ["busA", "busB", "master"] and state.master.volume == 100
    if "mixes" in test_file:
        assert [(m.number, m.preview, m.active) for m in state.mixes] == [(2, 1, 3), (3, 0, 0), (4, 0, 0)]
    if "tally.test" in test_file:
        assert state.input_by_number(4).layers[3].position == {"panY": "-0.7", "zoomY": "0.3"}
    if "streams" in test_file:
        assert [i.type for i in state.inputs] == ["SRT", "Stream", "VLC"] and state.inputs[0].muted is True
