"""vMix state as typed data: the HTTP/TCP API XML, `.vmix` preset files, and the TCP tally string.

vMix is Windows-only and licensed, so everything here was built from the documented API and public
samples (see docs/vmix.md). Three rules follow from that:

* Parse what we know into typed fields, and keep everything else verbatim (unknown root elements,
  unknown input children, unknown attributes) so nothing a newer vMix sends is lost or fatal.
* `state_to_xml` writes the same shape back, so emulator state → XML → parser round-trips exactly.
* Anything that is not well-formed XML, or not a vMix document, raises `VmixXmlError` with one line
  saying why; a caller (the live observer, a verifier) turns that into an error event or status.

ElementTree never resolves external entities, and the bundled expat (>= 2.4.1) refuses entity
expansion bombs, so parsing XML from a socket is safe here.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

from verifiers.measure.safe_io import UnsafeFile, xml_depth_ok

__all__ = [
    "OUTPUT_NAMES",
    "VmixAudioBus",
    "VmixImage",
    "VmixInput",
    "VmixLayer",
    "VmixMix",
    "VmixOutput",
    "VmixOverlayChannel",
    "VmixState",
    "VmixText",
    "VmixTransition",
    "VmixXmlError",
    "parse_api_xml",
    "parse_preset_xml",
    "parse_tally",
    "state_to_xml",
    "tally_string",
]

#: Root elements holding one True/False output flag, in the order vMix writes them.
OUTPUT_NAMES = ("fadeToBlack", "recording", "external", "streaming", "playList", "multiCorder", "fullscreen")


class VmixXmlError(ValueError):
    """Malformed or non-vMix XML, or a known field with a value of the wrong type.

    The message is one line, e.g. ``"vMix API XML: not well-formed: no element found: line 3, column 0"``.
    """


# ---------------------------------------------------------------------------------------- model


@dataclass
class VmixText:
    """One text field of a title input (`<text index name>value</text>`)."""

    index: int
    name: str
    value: str


@dataclass
class VmixImage:
    """One image field of a title input (`<image index name>path</image>`)."""

    index: int
    name: str
    value: str


@dataclass
class VmixLayer:
    """A layer (multiview/virtual-set slot) of an input: `<overlay index key>` inside `<input>`."""

    index: int
    key: str
    position: dict[str, str] | None = None  # attributes of a nested <position .../>, if any
    extra_attrs: dict[str, str] = field(default_factory=dict)


@dataclass
class VmixInput:
    """One input. Audio fields are None for inputs without audio (vMix omits the attributes)."""

    key: str
    number: int
    type: str
    title: str
    short_title: str | None = None
    state: str | None = None
    position_ms: int | None = None
    duration_ms: int | None = None
    loop: bool | None = None
    muted: bool | None = None
    volume: float | None = None
    balance: float | None = None
    solo: bool | None = None
    audiobusses: str | None = None
    selected_index: int | None = None
    text: list[VmixText] = field(default_factory=list)
    images: list[VmixImage] = field(default_factory=list)
    layers: list[VmixLayer] = field(default_factory=list)
    list_items: list[tuple[str, bool]] = field(default_factory=list)  # VideoList <list><item>
    position: dict[str, str] | None = None  # the input's own <position .../> (zoom/pan)
    content: str | None = None  # the element's own text (vMix repeats the title there)
    extra_attrs: dict[str, str] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)  # unknown children, serialised verbatim

    def text_value(self, name: str) -> str | None:
        """The value of a text field by name; `Headline` also matches `Headline.Text`."""
        for t in self.text:
            if t.name == name or t.name.rsplit(".", 1)[0] == name:
                return t.value
        return None


@dataclass
class VmixOverlayChannel:
    """Overlay channel N (1-4, stingers 5-8): the input shown, if any."""

    number: int
    input: int | None = None
    preview: bool = False
    extra_attrs: dict[str, str] = field(default_factory=dict)


@dataclass
class VmixTransition:
    number: int
    effect: str
    duration_ms: int
    extra_attrs: dict[str, str] = field(default_factory=dict)


@dataclass
class VmixOutput:
    """One output flag (`<recording>True</recording>`); newer vMix adds attributes, kept verbatim."""

    active: bool
    attrs: dict[str, str] = field(default_factory=dict)


@dataclass
class VmixAudioBus:
    """`<master>` or `<busA>`... inside `<audio>`; volume is vMix's 0-100 fader value."""

    name: str
    volume: float | None = None
    muted: bool | None = None
    meter_f1: float | None = None
    meter_f2: float | None = None
    extra_attrs: dict[str, str] = field(default_factory=dict)


@dataclass
class VmixMix:
    """An extra mix (`<mix number="2">`): its own preview and program input numbers."""

    number: int
    preview: int | None = None
    active: int | None = None


@dataclass
class VmixState:
    """Everything one `GET /api` says. Fields absent from the XML stay None / empty."""

    version: str | None = None
    edition: str | None = None
    preset: str | None = None
    inputs: list[VmixInput] = field(default_factory=list)
    overlays: list[VmixOverlayChannel] | None = None
    preview: int | None = None
    active: int | None = None
    transitions: list[VmixTransition] | None = None
    outputs: dict[str, VmixOutput] = field(default_factory=dict)  # keys from OUTPUT_NAMES
    mixes: list[VmixMix] = field(default_factory=list)
    audio: dict[str, VmixAudioBus] | None = None
    unknown: list[str] = field(default_factory=list)  # unknown root children, serialised verbatim

    def input_by_number(self, number: int | None) -> VmixInput | None:
        return next((i for i in self.inputs if i.number == number), None) if number is not None else None

    def input_by_key(self, key: str) -> VmixInput | None:
        return next((i for i in self.inputs if i.key == key), None)

    def input_by_title(self, title: str) -> VmixInput | None:
        """Exact title first, then short title, then case-insensitive title."""
        for pred in (lambda i: i.title == title, lambda i: i.short_title == title,
                     lambda i: i.title.casefold() == title.casefold()):
            hit = next((i for i in self.inputs if pred(i)), None)
            if hit is not None:
                return hit
        return None

    def output(self, name: str) -> bool | None:
        out = self.outputs.get(name)
        return None if out is None else out.active

    @property
    def master(self) -> VmixAudioBus | None:
        return (self.audio or {}).get("master")


# ---------------------------------------------------------------------------------------- values


def _bool(text: str | None, where: str) -> bool:
    if text is None:
        raise VmixXmlError(f"{where}: missing True/False value")
    t = text.strip().lower()
    if t in ("true", "1"):
        return True
    if t in ("false", "0", ""):
        return False
    raise VmixXmlError(f"{where}: expected True/False, got {text.strip()[:40]!r}")


def _int(text: str | None, where: str) -> int:
    try:
        value = float((text or "").strip())
    except ValueError:
        raise VmixXmlError(f"{where}: expected a number, got {(text or '').strip()[:40]!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise VmixXmlError(f"{where}: not a finite number")
    return int(value)


def _float(text: str | None, where: str) -> float:
    try:
        value = float((text or "").strip())
    except ValueError:
        raise VmixXmlError(f"{where}: expected a number, got {(text or '').strip()[:40]!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise VmixXmlError(f"{where}: not a finite number")
    return value


def _opt(attrs: dict[str, str], name: str, conv: Any, where: str) -> Any:
    raw = attrs.pop(name, None)
    return None if raw is None else conv(raw, f"{where} @{name}")


def _fmt_num(value: float) -> str:
    """vMix writes integers bare ("100") and fractions as decimals ("0.0791242")."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _fmt_bool(value: bool) -> str:
    return "True" if value else "False"


def _content(el: ET.Element) -> str | None:
    """The element's own text with vMix's pretty-printing whitespace removed; None if empty."""
    text = (el.text or "").strip()
    return text or None


def _raw(el: ET.Element) -> str:
    """An element as XML text without the tail, for keeping unknown elements verbatim."""
    tail, el.tail = el.tail, None
    try:
        return ET.tostring(el, encoding="unicode")
    finally:
        el.tail = tail


def _parse_root(data: str | bytes, what: str) -> ET.Element:
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not data.strip():
        raise VmixXmlError(f"{what}: empty document")
    data = data.lstrip(b"\xef\xbb\xbf").lstrip()
    try:
        # nesting capped first: the preset walk re-serialises children (recursive in ElementTree)
        xml_depth_ok(data, what)
    except UnsafeFile as exc:
        raise VmixXmlError(str(exc)) from None
    try:
        # Strip a UTF-8 BOM and leading whitespace: the vmix-js-utils samples start with a newline.
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise VmixXmlError(f"{what}: not well-formed: {exc}") from None


# ---------------------------------------------------------------------------------------- API XML

_INPUT_TYPED = {"key", "number", "type", "title", "shortTitle", "state", "position", "duration", "loop",
                "muted", "volume", "balance", "solo", "audiobusses", "selectedIndex"}


def _parse_input(el: ET.Element, fallback_number: int) -> VmixInput:
    attrs = dict(el.attrib)
    where = f"input {attrs.get('number', fallback_number)}"
    number = _int(attrs.pop("number"), f"{where} @number") if "number" in attrs else fallback_number
    inp = VmixInput(
        key=attrs.pop("key", ""),
        number=number,
        type=attrs.pop("type", ""),
        title=attrs.pop("title", ""),
        short_title=attrs.pop("shortTitle", None),
        state=attrs.pop("state", None),
        position_ms=_opt(attrs, "position", _int, where),
        duration_ms=_opt(attrs, "duration", _int, where),
        loop=_opt(attrs, "loop", _bool, where),
        muted=_opt(attrs, "muted", _bool, where),
        volume=_opt(attrs, "volume", _float, where),
        balance=_opt(attrs, "balance", _float, where),
        solo=_opt(attrs, "solo", _bool, where),
        audiobusses=attrs.pop("audiobusses", None),
        selected_index=_opt(attrs, "selectedIndex", _int, where),
        content=_content(el),
        extra_attrs=attrs,
    )
    for child in el:
        tag = child.tag
        if tag == "text" and "index" in child.attrib:
            inp.text.append(VmixText(_int(child.get("index"), f"{where} text @index"), child.get("name", ""),
                                     child.text or ""))
        elif tag == "image" and "index" in child.attrib:
            inp.images.append(VmixImage(_int(child.get("index"), f"{where} image @index"),
                                        child.get("name", ""), (child.text or "").strip()))
        elif tag == "overlay" and "index" in child.attrib:
            extra = {k: v for k, v in child.attrib.items() if k not in ("index", "key")}
            pos = child.find("position")
            inp.layers.append(VmixLayer(_int(child.get("index"), f"{where} overlay @index"), child.get("key", ""),
                                        dict(pos.attrib) if pos is not None else None, extra))
        elif tag == "position" and inp.position is None and len(child) == 0:
            inp.position = dict(child.attrib)
        elif tag == "list" and not inp.list_items and all(i.tag == "item" for i in child):
            for item in child:
                sel = item.get("selected")
                inp.list_items.append(((item.text or "").strip(), sel is not None and _bool(sel, f"{where} item")))
        else:
            inp.unknown.append(_raw(child))
    return inp


def _text_of(el: ET.Element, conv: Any, where: str) -> Any:
    text = (el.text or "").strip()
    return None if text == "" else conv(text, where)


def parse_api_xml(data: str | bytes) -> VmixState:
    """Parse the XML of `GET /api` (or the TCP `XML` reply) into a VmixState.

    Raises VmixXmlError for bad XML, a root other than <vmix>, or a known field of the wrong type.
    """
    root = _parse_root(data, "vMix API XML")
    if root.tag != "vmix":
        raise VmixXmlError(f"vMix API XML: root element is <{root.tag}>, expected <vmix>")
    state = VmixState()
    for child in root:
        tag = child.tag
        if tag in ("version", "edition", "preset"):
            setattr(state, tag, (child.text or "").strip())
        elif tag == "inputs":
            for n, el in enumerate((c for c in child if c.tag == "input"), start=1):
                state.inputs.append(_parse_input(el, n))
            state.unknown.extend(_raw(c) for c in child if c.tag != "input")
        elif tag in ("preview", "active"):
            setattr(state, tag, _text_of(child, _int, tag))
        elif tag == "overlays":
            state.overlays = []
            for el in child:
                if el.tag != "overlay":
                    continue
                extra = {k: v for k, v in el.attrib.items() if k not in ("number", "preview")}
                state.overlays.append(VmixOverlayChannel(
                    _int(el.get("number"), "overlay @number"), _text_of(el, _int, "overlay"),
                    el.get("preview") is not None and _bool(el.get("preview"), "overlay @preview"), extra))
        elif tag == "transitions":
            state.transitions = []
            for el in child:
                if el.tag != "transition":
                    continue
                extra = {k: v for k, v in el.attrib.items() if k not in ("number", "effect", "duration")}
                state.transitions.append(VmixTransition(
                    _int(el.get("number"), "transition @number"), el.get("effect", ""),
                    _int(el.get("duration", "0"), "transition @duration"), extra))
        elif tag in OUTPUT_NAMES:
            state.outputs[tag] = VmixOutput(_bool(child.text or "", tag), dict(child.attrib))
        elif tag == "mix" and "number" in child.attrib:
            mix = VmixMix(_int(child.get("number"), "mix @number"))
            for el in child:
                if el.tag in ("preview", "active"):
                    setattr(mix, el.tag, _text_of(el, _int, f"mix {mix.number} {el.tag}"))
            state.mixes.append(mix)
        elif tag == "audio":
            state.audio = {}
            for el in child:
                attrs = dict(el.attrib)
                where = f"audio {el.tag}"
                state.audio[el.tag] = VmixAudioBus(
                    el.tag, _opt(attrs, "volume", _float, where), _opt(attrs, "muted", _bool, where),
                    _opt(attrs, "meterF1", _float, where), _opt(attrs, "meterF2", _float, where), attrs)
        else:
            state.unknown.append(_raw(child))
    return state


# ---------------------------------------------------------------------------------------- writer


def _sub(parent: ET.Element, tag: str, text: str | None = None, attrs: dict[str, str] | None = None) -> ET.Element:
    el = ET.SubElement(parent, tag, attrs or {})
    if text is not None:
        el.text = text
    return el


def _input_attrs(inp: VmixInput) -> dict[str, str]:
    a: dict[str, str] = {"key": inp.key, "number": str(inp.number), "type": inp.type, "title": inp.title}
    if inp.short_title is not None:
        a["shortTitle"] = inp.short_title
    if inp.state is not None:
        a["state"] = inp.state
    for name, value in (("position", inp.position_ms), ("duration", inp.duration_ms)):
        if value is not None:
            a[name] = str(value)
    for name, flag in (("loop", inp.loop), ("muted", inp.muted)):
        if flag is not None:
            a[name] = _fmt_bool(flag)
    if inp.volume is not None:
        a["volume"] = _fmt_num(inp.volume)
    if inp.balance is not None:
        a["balance"] = _fmt_num(inp.balance)
    if inp.solo is not None:
        a["solo"] = _fmt_bool(inp.solo)
    if inp.audiobusses is not None:
        a["audiobusses"] = inp.audiobusses
    if inp.selected_index is not None:
        a["selectedIndex"] = str(inp.selected_index)
    a.update(inp.extra_attrs)
    return a


def state_to_xml(state: VmixState) -> str:
    """Serialise like vMix does (same element names, order and True/False spelling)."""
    root = ET.Element("vmix")
    for tag in ("version", "edition", "preset"):
        value = getattr(state, tag)
        if value is not None:
            _sub(root, tag, value)
    inputs = _sub(root, "inputs")
    for inp in state.inputs:
        el = _sub(inputs, "input", inp.content, _input_attrs(inp))
        for t in inp.text:
            _sub(el, "text", t.value, {"index": str(t.index), "name": t.name})
        for im in inp.images:
            _sub(el, "image", im.value, {"index": str(im.index), "name": im.name})
        for layer in inp.layers:
            lay = _sub(el, "overlay", None, {"index": str(layer.index), "key": layer.key, **layer.extra_attrs})
            if layer.position is not None:
                _sub(lay, "position", None, layer.position)
        if inp.list_items:
            lst = _sub(el, "list")
            for path, selected in inp.list_items:
                _sub(lst, "item", path, {"selected": "true"} if selected else {})
        if inp.position is not None:
            _sub(el, "position", None, inp.position)
        for raw in inp.unknown:
            el.append(ET.fromstring(raw))
    if state.overlays is not None:
        ovs = _sub(root, "overlays")
        for ov in state.overlays:
            attrs = {"number": str(ov.number), **({"preview": "True"} if ov.preview else {}), **ov.extra_attrs}
            _sub(ovs, "overlay", None if ov.input is None else str(ov.input), attrs)
    for tag in ("preview", "active"):
        value = getattr(state, tag)
        if value is not None:
            _sub(root, tag, str(value))
    if "fadeToBlack" in state.outputs:
        out = state.outputs["fadeToBlack"]
        _sub(root, "fadeToBlack", _fmt_bool(out.active), out.attrs)
    if state.transitions is not None:
        trs = _sub(root, "transitions")
        for tr in state.transitions:
            _sub(trs, "transition", None, {"number": str(tr.number), "effect": tr.effect,
                                           "duration": str(tr.duration_ms), **tr.extra_attrs})
    for tag in OUTPUT_NAMES[1:]:
        if tag in state.outputs:
            out = state.outputs[tag]
            _sub(root, tag, _fmt_bool(out.active), out.attrs)
    for mix in state.mixes:
        el = _sub(root, "mix", None, {"number": str(mix.number)})
        for tag in ("preview", "active"):
            value = getattr(mix, tag)
            if value is not None:
                _sub(el, tag, str(value))
    if state.audio is not None:
        audio = _sub(root, "audio")
        for bus in state.audio.values():
            attrs: dict[str, str] = {}
            if bus.volume is not None:
                attrs["volume"] = _fmt_num(bus.volume)
            if bus.muted is not None:
                attrs["muted"] = _fmt_bool(bus.muted)
            if bus.meter_f1 is not None:
                attrs["meterF1"] = _fmt_num(bus.meter_f1)
            if bus.meter_f2 is not None:
                attrs["meterF2"] = _fmt_num(bus.meter_f2)
            _sub(audio, bus.name, None, {**attrs, **bus.extra_attrs})
    for raw in state.unknown:
        root.append(ET.fromstring(raw))
    return ET.tostring(root, encoding="unicode")


# ---------------------------------------------------------------------------------------- TCP tally


def tally_string(state: VmixState) -> str:
    """The digits of `TALLY OK <digits>`: one per input number 1..max, 0 off / 1 program / 2 preview.

    Program wins over preview when one input is both (vMix shows it red).
    """
    if not state.inputs:
        return ""
    count = max(i.number for i in state.inputs)
    digits = ["0"] * count
    if state.preview is not None and 1 <= state.preview <= count:
        digits[state.preview - 1] = "2"
    if state.active is not None and 1 <= state.active <= count:
        digits[state.active - 1] = "1"
    return "".join(digits)


def parse_tally(digits: str) -> tuple[list[int], list[int]]:
    """`0121…` → (program input numbers, preview input numbers), 1-based.

    Several inputs can be in program during a transition. Raises VmixXmlError (one line) for any
    character other than 0/1/2, as a torn or garbled line must not become a wrong tally.
    """
    digits = digits.strip()
    bad = sorted({c for c in digits if c not in "012"})
    if bad:
        raise VmixXmlError(f"TCP tally: unexpected characters {''.join(bad)[:10]!r} in {digits[:40]!r}")
    program = [n for n, c in enumerate(digits, start=1) if c == "1"]
    preview = [n for n, c in enumerate(digits, start=1) if c == "2"]
    return program, preview


# ---------------------------------------------------------------------------------------- presets


def _ci(attrs: dict[str, str], *names: str) -> str | None:
    """Case-insensitive attribute lookup over several candidate names."""
    lowered = {k.lower(): v for k, v in attrs.items()}
    for name in names:
        if name.lower() in lowered:
            return lowered[name.lower()]
    return None


def _looks_like_input(el: ET.Element) -> bool:
    return el.tag.lower() == "input" and (_ci(el.attrib, "key") is not None or _ci(el.attrib, "title") is not None
                                          or _ci(el.attrib, "originaltitle") is not None)


#: vMix preset `Type` numbers -> API type names, each seen in a preset real vMix saved (Version 9):
#: 0 Video (a .mp4 path), 1 Image (.png/.jpg), 5 Capture (CapturePath, Width/Height), 7 Audio (an
#: audio device), 12 Colour (Colour/ColourBars), 14 VideoList ("List"), 20 Stream (an RTSP URL),
#: 100 Blank, 5000 Browser (a URL, BrowserWidth), 6000 VideoCall (VideoCallKey); 2 Photos from a tool
#: that writes presets from a real base preset. NDI, GT and Mix were not seen: their numbers stay bare.
PRESET_TYPE_CODES = {"0": "Video", "1": "Image", "2": "Photos", "5": "Capture", "7": "Audio", "12": "Colour",
                     "14": "VideoList", "20": "Stream", "100": "Blank", "5000": "Browser", "6000": "VideoCall"}


def parse_preset_xml(data: str | bytes) -> VmixState:
    """Parse a `.vmix` preset into the same model, defensively (no official spec exists).

    A preset that is itself API-shaped (`<vmix>` root) is parsed by `parse_api_xml`. Otherwise every
    element that looks like an input (tag `Input`/`input` with a key or title, any depth, any case)
    becomes a VmixInput: attributes read case-insensitively (Key, Number, Type, Title/OriginalTitle,
    ShortTitle), `<text>`/`<overlay>` children as in the API, everything else kept in `extra_attrs` /
    `unknown`. Inputs without a number are numbered in document order. Root-level `Active`/`Preview`
    and output flags are read where present. Raises VmixXmlError for XML that is not well-formed or
    holds no input at all.

    What a real vMix preset holds (one saved by vMix, preset `<Version>9</Version>`, and the C#
    XmlSerializer model of the same file; tests/formats/test_real_vmix.py): root `<XML>` with
    `<Input>` elements directly under it; `Type` as a number (see PRESET_TYPE_CODES, mapped to the
    API's names where known, the number kept as extra attribute `TypeCode`); the file path or URL as
    the element text; volume as `VolumeF` (0..1 fader, read as the API's 0-100 `volume`, also kept
    verbatim); multiview/layer slots as attributes `Overlay0="<key>"`, `Overlay1=...` (read as
    layers, as the API's `<overlay index key>`); program and
    preview as `<State Main="3" Preview="4">`, read as 0-based input positions (inferred: in the real
    presets 0-based puts a video/capture in program, and two save Main="0", which 1-based would make
    no input at all). Root children other than inputs
    (State, OutputFormat, AudioMaster, StreamingSettings, ...) are kept verbatim in `unknown`.
    """
    root = _parse_root(data, "vMix preset")
    if root.tag == "vmix":
        return parse_api_xml(data)
    state = VmixState()
    number = 0
    for el in root.iter():
        if not _looks_like_input(el):
            continue
        number += 1
        attrs = dict(el.attrib)
        lowered = {k.lower(): k for k in attrs}
        renamed: dict[str, str] = {}
        for canon in ("key", "number", "type", "title", "shortTitle", "state", "loop", "muted", "volume",
                      "balance", "solo", "audiobusses", "selectedIndex"):
            real = lowered.get(canon.lower())
            if real is not None:
                renamed[canon] = attrs.pop(real)
        if "title" not in renamed:
            real = lowered.get("originaltitle")
            if real is not None:
                renamed["title"] = attrs.pop(real)
        code = renamed.get("type", "")
        if code.isdigit():
            attrs["TypeCode"] = code
            renamed["type"] = PRESET_TYPE_CODES.get(code, code)
        if "volume" not in renamed and _ci(attrs, "VolumeF") is not None:
            # VolumeF is the fader as 0..1 (100 % = 1; above 100 % goes to AudioGain), the API's 0-100.
            renamed["volume"] = _fmt_num(_float(_ci(attrs, "VolumeF"), "preset input @VolumeF") * 100.0)
        # Multiview / layer slots are attributes Overlay0="<key>" ... on the input in real presets.
        layer_attrs = sorted((int(k[7:]), k) for k in attrs if k[:7].lower() == "overlay" and k[7:].isdigit())
        layers = [(i, attrs.pop(k)) for i, k in layer_attrs]
        # Re-use the API input parser on a normalised copy so both formats share one code path.
        norm = ET.Element("input", {**renamed, **attrs})
        norm.text = el.text
        for i, key in layers:
            if key:
                ET.SubElement(norm, "overlay", {"index": str(i), "key": key})
        for child in el:
            copy = ET.fromstring(_raw(child))
            copy.tag = child.tag.lower() if child.tag.lower() in ("text", "image", "overlay", "position", "list") \
                else child.tag
            for k in list(copy.attrib):
                if k.lower() in ("index", "key", "name") and k != k.lower():
                    copy.set(k.lower(), copy.attrib.pop(k))
            norm.append(copy)
        state.inputs.append(_parse_input(norm, number))
    if not state.inputs:
        raise VmixXmlError(f"vMix preset: no input elements found under <{root.tag}>")
    input_els = {id(el) for el in root.iter() if _looks_like_input(el)}
    for child in root:
        tag = child.tag.lower()
        if tag in ("active", "preview") and (child.text or "").strip():
            setattr(state, tag, _int(child.text, f"preset {child.tag}"))
        elif tag in (n.lower() for n in OUTPUT_NAMES) and (child.text or "").strip():
            name = next(n for n in OUTPUT_NAMES if n.lower() == tag)
            state.outputs[name] = VmixOutput(_bool(child.text, f"preset {child.tag}"), dict(child.attrib))
        elif tag == "version":
            state.version = (child.text or "").strip()
        elif id(child) in input_els or (tag == "inputs" and all(id(c) in input_els for c in child)):
            continue
        else:
            if tag == "state":
                for attr, field_name in (("Main", "active"), ("Preview", "preview")):
                    pos = _ci(child.attrib, attr)
                    if pos is not None and pos.strip() and getattr(state, field_name) is None:
                        setattr(state, field_name, _preset_position(state, _int(pos, f"preset State @{attr}")))
            state.unknown.append(_raw(child))
    return state


def _preset_position(state: VmixState, pos: int) -> int | None:
    """`<State Main>` 0-based position -> that input's number (None when out of range)."""
    return state.inputs[pos].number if 0 <= pos < len(state.inputs) else None
