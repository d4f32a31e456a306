"""R06.12.01.01-T10: vMix preset with four NDI cameras, a GT title, a multiview, CAM1/CAM2 live/preview.

Emulated (catalog): vMix is Windows-only. The preset presets/panel.vmix is parsed by
verifiers.apps.vmix.parse_preset_xml; "the HTTP API state equals the preset after reload" is read
from the vMix observer's last `snapshot` event (the emulator serves the reloaded preset here).
Inputs are matched by the camera name inside their title ("STUDIO-PC (CAM1)" is CAM1).

What vMix saves (presets vMix wrote, preset Version 9; tests/fixtures/real/vmix-preset/): `<XML>`
root, `<Input>` elements directly under it with a numeric `Type`, `OriginalTitle` (+ `Title` when
renamed), the file/URL as element text, `VolumeF`, layers as `Overlay0..N="<key>"` attributes, and
`<State Main Preview>` (0-based positions). The reader maps the numbers it knows; NDI's and GT's are
not known, so an NDI input is an unnamed type number on an input titled like an NDI source
("MACHINE (STREAM)"), a GT title an unnamed number on a .gtzip/.gtxml/.xaml file. How a title's
text fields are saved in a preset is not known either (no real preset with a title was found): the
synth keeps `<Text Index Name>` children, as the API lists them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from verifiers.apps.vmix import PRESET_TYPE_CODES, VmixInput, VmixState, VmixXmlError, parse_preset_xml
from verifiers.base import AgentOutputError
from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.evidence import VmixSnapshot
from verifiers.evidence.vmix import VmixSnapshotInput
from verifiers.params import NoParams
from verifiers.paramtypes.streaming import NdiInputs, ProgramPreview, TitleFields
from verifiers.synth import InstanceWriter

TASK = "R06.12.01.01-T10"
N = check_names(TASK)
PRESET = "presets/panel.vmix"


#: NDI and GT type numbers were not seen in any preset a real vMix saved (tests/fixtures/real/,
#: vmix-preset/v9; verifiers.apps.vmix.PRESET_TYPE_CODES lists the ones that were). The synthetic
#: preset writes these two unassigned numbers as a GUESS-placeholder; the scorer never relies on
#: their value, only on their being none of the codes known to mean another type.
SYNTH_NDI_TYPE_CODE = "9000"   # guess: not vMix's number
SYNTH_GT_TYPE_CODE = "9001"    # guess: not vMix's number
KNOWN_OTHER_TYPES = frozenset(PRESET_TYPE_CODES.values())
#: NDI names every source "MACHINE (STREAM)" (NDI SDK: NDIlib_source_t p_ndi_name), and vMix titles an
#: NDI input with that name.
NDI_NAME = re.compile(r"^\S.* \([^()]+\)$")
TITLE_TEMPLATE_EXT = (".gtzip", ".gtxml", ".xaml")


def cam(title: str | None, name: str) -> bool:
    return bool(title) and re.search(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![0-9])", title, re.IGNORECASE) is not None


def unknown_type_code(i: VmixInput) -> bool:
    """A preset input whose numeric Type the reader could not name (PRESET_TYPE_CODES)."""
    return "TypeCode" in i.extra_attrs and i.type not in KNOWN_OTHER_TYPES


def is_ndi(i: VmixInput) -> bool:
    """NDI by the API's type name (an API-shaped preset), or, in a preset vMix saved (numeric Type,
    NDI's number unknown), an unnamed type code on an input titled like an NDI source."""
    if i.type.upper() == "NDI":
        return True
    return unknown_type_code(i) and any(NDI_NAME.match(t or "") for t in (i.title, i.content))


def only_cam(title: str | None, name: str, names: tuple[str, ...]) -> bool:
    """The title names camera `name` and no other of `names`: one input titled with every camera
    ("PC (CAM1 CAM2 CAM3 CAM4)") is none of them, not all four."""
    return cam(title, name) and not any(cam(title, o) for o in names if o != name)


def find_cam(state: VmixState, name: str, names: tuple[str, ...], ndi_only: bool = True) -> VmixInput | None:
    return next((i for i in state.inputs if only_cam(i.title, name, names) and (not ndi_only or is_ndi(i))), None)


def is_title(i: VmixInput, template: str) -> bool:
    """A GT/XAML title from `template`: by type name, or (numeric Type, GT's number unknown) an
    unnamed type code whose file is a title template."""
    by_type = i.type.upper() in ("GT", "XAML", "TITLE") or (
        unknown_type_code(i) and any((s or "").lower().endswith(TITLE_TEMPLATE_EXT) for s in (i.title, i.content)))
    return by_type and any(template.lower() in (s or "").lower() for s in (i.title, i.content, *i.extra_attrs.values()))


def same_type(api_type: Any, preset: VmixInput) -> bool:
    """The API's type name for an input vs the preset's: equal, or the preset's number is one the
    reader cannot name (NDI, GT, ...) and the API's name is none of the named ones."""
    if unknown_type_code(preset):
        return str(api_type) not in KNOWN_OTHER_TYPES
    return str(api_type) == preset.type


class VmixPanel(CheckedTask):
    task_id = TASK

    @provides
    def state(self) -> VmixState:
        try:
            return parse_preset_xml(self.ctx.artifact(PRESET).read_bytes())
        except VmixXmlError as exc:
            raise AgentOutputError(f"unreadable preset {PRESET}: {exc}") from None

    @provides
    def title(self) -> VmixInput | None:
        template = self.task.check(N.title_fields).typed.template
        return next((i for i in self.state.inputs if is_title(i, template)), None)

    @property
    def cams(self) -> tuple[str, ...]:
        return self.task.check(N.ndi_inputs).typed.sources

    @check(N.ndi_inputs)
    def ndi_inputs(self, p: NdiInputs, curve: Curve) -> Result:
        found = {c: find_cam(self.state, c, p.sources) for c in p.sources}
        return Result(curve.count(sum(v is not None for v in found.values()), len(p.sources)),
                      {"ndi": {c: (i.title if i else None) for c, i in found.items()}},
                      "; ".join(f"no NDI input {c}" for c, i in found.items() if i is None))

    @check(N.title_fields)
    def title_fields(self, p: TitleFields, curve: Curve) -> Result:
        title = self.title
        if title is None:
            return Result.fail(f"no GT title input from {p.template}")
        ok = {f: title.text_value(f) == v for f, v in p.fields.items()}
        return Result(curve.count(sum(ok.values()), len(ok)), {"fields": {t.name: t.value for t in title.text}},
                      "; ".join(f"field {f} wrong" for f, v in ok.items() if not v))

    @check(N.multiview)
    def multiview(self, p: NoParams, curve: Curve) -> Result:
        state, cams = self.state, self.cams
        want_keys = {c: (find_cam(state, c, cams, ndi_only=False) or VmixInput("", 0, "", "")).key for c in cams}
        if self.title is not None:
            want_keys["title"] = self.title.key
        best: dict[str, bool] = {}
        for inp in state.inputs:
            keys = {ly.key for ly in inp.layers}
            shown = {k: bool(v) and v in keys for k, v in want_keys.items()}
            if sum(shown.values()) > sum(best.values()):
                best = shown
        need = [*cams, "title"]
        return Result(curve.count(sum(best.get(k, False) for k in need), len(need)), {"shown": best},
                      "; ".join(f"{k} not in the multiview" for k in need if not best.get(k)))

    @check(N.program_preview)
    def program_preview(self, p: ProgramPreview, curve: Curve) -> Result:
        state = self.state
        act, prev = state.input_by_number(state.active), state.input_by_number(state.preview)
        files = {"program CAM1": only_cam(act.title if act else None, p.program, self.cams),
                 "preview CAM2": only_cam(prev.title if prev else None, p.preview, self.cams)}
        snap = VmixSnapshot.from_event(self.ctx.events_of("vmix", "snapshot")[-1])
        on_prog, on_prev = snap.input(snap.active), snap.input(snap.preview)
        live = {"reloaded program CAM1": only_cam(on_prog.title if on_prog else None, p.program, self.cams),
                "reloaded preview CAM2": only_cam(on_prev.title if on_prev else None, p.preview, self.cams),
                # the reload agreeing with a preset that has neither camera in place proves nothing asked for
                "reloaded inputs equal the preset": any(files.values())
                and same_inputs([i.to_payload() for i in snap.inputs], state.inputs)}
        allp = {**files, **live}
        return Result(curve.count(sum(allp.values()), len(allp)), allp,
                      "; ".join(f"not {k}" for k, v in allp.items() if not v))

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        (inst.workdir / "presets").mkdir(parents=True)
        (inst.workdir / "titles").mkdir()
        (inst.workdir / "titles" / "LowerThird.gtzip").write_bytes(b"PK\x05\x06" + b"\x00" * 18)
        good = spec()

        def solution(folder: Path, s: dict[str, Any], reload: dict[str, Any] | None = None,
                     run: bool = True) -> None:
            path = folder / PRESET
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(preset_xml(s), encoding="utf-8")
            if run:
                InstanceWriter.write_events(folder, [snapshot(reload or s).event(500)])

        solution(inst.oracle, good)
        s = spec()
        s["inputs"][2]["type"] = "Capture"
        solution(inst.mutant("cam3_not_ndi", [N.ndi_inputs], "CAM3 added as a capture device"), s)
        s = spec()
        s["inputs"][3].update(type="Video", content="C:\\Users\\streamer\\Videos\\STUDIO-PC (CAM4).mp4")
        solution(inst.mutant("cam4_recorded_file", [N.ndi_inputs],
                             "CAM4 is a recorded file titled like the NDI source (Type 0 Video)"), s)
        s = spec()
        s["inputs"][4]["text"]["Role.Text"] = "guest"
        solution(inst.mutant("role_lowercase", [N.title_fields], "Role typed as 'guest'"), s)
        s = spec()
        s["inputs"][5]["layers"] = s["inputs"][5]["layers"][:4]
        solution(inst.mutant("multiview_no_title", [N.multiview], "title not in the multiview"), s)
        s = spec()
        s["active"], s["preview"] = 2, 1
        solution(inst.mutant("program_preview_swapped", [N.program_preview], "CAM2 on program, CAM1 on preview"), s)
        s = spec()
        s["preview"] = 3
        solution(inst.mutant("unsaved_preview", [N.program_preview], "preset saved before CAM2 went to preview"),
                 good, reload=s)
        solution(inst.mutant("no_reload_observed", [N.program_preview], "no run recorded: cannot judge"), good,
                 run=False)
        bad = inst.mutant("truncated_preset", [N.ndi_inputs, N.title_fields, N.multiview, N.program_preview],
                          "preset cut off mid-save")
        solution(bad, good)
        p = bad / PRESET
        p.write_bytes(p.read_bytes()[:400])
        write_cases(inst, solution)


def write_cases(inst: InstanceWriter, solution: Any) -> None:
    """Self-test cases (verifiers.synthcases): the preset as another vMix version saves it (>= 95) and
    gaming baselines (<= 5). `solution(folder, spec)` writes a preset and its reload snapshot."""
    base = inst.root / "baselines"
    solution(base / "blank", {"inputs": [], "active": 0, "preview": 0})   # File > New, saved as it is
    every = spec()   # one NDI input titled with every camera, on program and preview, in a multiview
    every["inputs"] = [{**every["inputs"][0], "title": "STUDIO-PC (CAM1 CAM2 CAM3 CAM4)"}, every["inputs"][5]]
    every["inputs"][1]["layers"] = [every["inputs"][0]["key"]] * 4
    every["active"] = every["preview"] = 1
    solution(base / "every_camera", every)
    inst.export_case("newer_vmix_save", [(PRESET, f"xml_variant:oracle/{PRESET}")],
                     why="attributes in another order, unknown attributes and elements, Version 10")
    for name, why in (("blank", "a new preset saved with no inputs"),
                      ("every_camera", "one NDI input titled with all four cameras, on program and preview")):
        inst.baseline_case(f"{name}_preset", [(PRESET, f"copy:baselines/{name}/{PRESET}"),
                                              ("events.jsonl", f"copy:baselines/{name}/events.jsonl")], why=why)
    inst.baseline_case("garbage_preset", [(PRESET, f"xml_garbage:oracle/{PRESET}"),
                                          ("events.jsonl", "copy:oracle/events.jsonl")],
                       why="the preset's elements with random values (the oracle's reload snapshot)")
    inst.baseline_case("other_task_oracle", [(PRESET, "other_oracle:R06.12.01.01-T01:"
                                                      "obs-studio/basic/scenes/Weekly_Stream.json")],
                       why="T01's OBS collection where the vMix preset belongs")


def spec() -> dict[str, Any]:
    """The panel, with the API's type names (the preset writes vMix's numbers for them)."""
    key = "aa00000{}-0000-4000-8000-00000000000{}".format
    inputs: list[dict[str, Any]] = [{"key": key(n, n), "type": "NDI", "title": f"STUDIO-PC (CAM{n})"}
                                    for n in range(1, 5)]
    inputs.append({"key": key(5, 5), "type": "GT", "title": "LowerThird.gtzip",
                   "content": "C:\\titles\\LowerThird.gtzip", "text": {"Name.Text": "Dr. Sample", "Role.Text": "Guest"}})
    inputs.append({"key": key(6, 6), "type": "Blank", "title": "Multiview", "original_title": "Blank",
                   "layers": [key(n, n) for n in range(1, 6)]})
    return {"inputs": inputs, "active": 1, "preview": 2}


#: API type name -> the number a preset stores (vMix's own where seen, guesses for NDI and GT).
PRESET_CODES = {**{v: k for k, v in PRESET_TYPE_CODES.items()}, "NDI": SYNTH_NDI_TYPE_CODE, "GT": SYNTH_GT_TYPE_CODE}


def _input_xml(inp: dict[str, Any]) -> str:
    """One <Input> with the attributes every input in the real presets carries, in their order."""
    title = inp.get("original_title", inp["title"])
    attrs = {"Type": PRESET_CODES[inp["type"]], "Position": "0", "RangeStart": "0", "RangeStop": "0", "State": "1",
             **({"Title": inp["title"]} if "original_title" in inp else {}), "OriginalTitle": title,
             "ShortcutMappings": "", "Key": inp["key"], "Loop": "False", "VolumeF": "1", "Muted": "True",
             "BalanceF": "0", "AspectRatio": "100", "Category": "0", "MouseClickAction": "0", "Collapsed": "False",
             "Solo": "False", "HeadphonesVolumeF": "1", "BusMaster": "True",
             **{f"Overlay{i}": k for i, k in enumerate(inp.get("layers", []))}}
    head = "<Input " + " ".join(f"{k}={quoteattr(v)}" for k, v in attrs.items()) + ">"
    body = escape(inp.get("content", inp["title"] if inp["type"] == "NDI" else ""))
    kids = "".join(f"<Text Index=\"{i}\" Name={quoteattr(n)}>{escape(v)}</Text>"
                   for i, (n, v) in enumerate(inp.get("text", {}).items()))
    return head + body + kids + "</Input>"


def preset_xml(s: dict[str, Any]) -> str:
    """A .vmix preset in the shape vMix saves (preset Version 9): one line, inputs under <XML>,
    program/preview as <State Main Preview> 0-based positions (see the module docstring)."""
    inputs = "".join(_input_xml(inp) for inp in s["inputs"])
    state = f'<State Main="{s["active"] - 1}" Preview="{s["preview"] - 1}" />'
    return ('<?xml version="1.0" encoding="utf-8"?>\n<XML xmlns:xsd="http://www.w3.org/2001/XMLSchema" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><Version>9</Version>'
            + inputs + state + "</XML>")


def same_inputs(api: list[dict[str, Any]], preset: list[VmixInput]) -> bool:
    """The reloaded API inputs are the preset's: same titles, each with a compatible type."""
    by_title = {i.title: i for i in preset}
    return sorted(str(i.get("title")) for i in api) == sorted(i.title for i in preset) and all(
        same_type(i.get("type"), by_title[str(i.get("title"))]) for i in api)


def snapshot(s: dict[str, Any]) -> VmixSnapshot:
    """The observer's snapshot for the emulator serving this preset (API type names)."""
    return VmixSnapshot("http", "27.0.0.49", s["active"], s["preview"],
                        [VmixSnapshotInput(n, i["key"], i["type"], i["title"]) for n, i in enumerate(s["inputs"], 1)])
