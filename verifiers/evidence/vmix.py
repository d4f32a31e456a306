"""Evidence the vMix observer (monitor/observers/vmix.py) records, source "vmix".

`snapshot` is the compact whole state on the first good poll after (re)connecting; `program` /
`preview` are switches (the input as a brief: number, key, title, type), `output` an output
turning on or off (streaming, recording, external, multiCorder, fullscreen), `tally` the TCP
TALLY line (input numbers on program / preview).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from verifiers.evidence.base import EvidenceEvent, Payload


@dataclass(frozen=True)
class VmixInputBrief(Payload):
    """An input as events name it (only `number` when the observer has no state yet)."""

    _omit_none: ClassVar[tuple[str, ...]] = ("key", "title", "type")
    number: int | None = None
    key: str | None = None
    title: str | None = None
    type: str | None = None

    @property
    def label(self) -> str:
        return self.title or (f"input {self.number}" if self.number is not None else "?")


@dataclass(frozen=True)
class VmixSnapshotInput(Payload):
    """One input of a snapshot (`text`: title fields by name, for GT titles only)."""

    _omit_none: ClassVar[tuple[str, ...]] = ("text",)
    number: int
    key: str
    type: str
    title: str
    text: dict[str, Any] | None = None


@dataclass(frozen=True)
class VmixSnapshot(EvidenceEvent, source="vmix", kind="snapshot"):
    """vMix's state when the observer (re)connected: inputs, program (`active`), preview, outputs."""

    _omit_none: ClassVar[tuple[str, ...]] = ("edition", "preset", "master")
    via: str
    version: str
    active: int | None
    preview: int | None
    inputs: list[VmixSnapshotInput] = field(default_factory=list)
    edition: str | None = None
    preset: str | None = None
    overlays: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, bool | None] = field(default_factory=dict)
    master: dict[str, Any] | None = None

    def input(self, number: int | None) -> VmixSnapshotInput | None:
        return next((i for i in self.inputs if i.number == number), None)


@dataclass(frozen=True)
class _Switch(EvidenceEvent):
    _omit_none: ClassVar[tuple[str, ...]] = ("line", "inputs", "after_gap")
    input: VmixInputBrief
    previous: VmixInputBrief | None = None
    via: str = "http"
    line: str | None = None  # tcp: the TALLY/ACTS line that said so
    inputs: list[int] | None = None  # tcp: every input on program (several during a transition)
    after_gap: bool | None = None


@dataclass(frozen=True)
class VmixProgram(_Switch, source="vmix", kind="program"):
    """The program input changed."""



@dataclass(frozen=True)
class VmixPreview(_Switch, source="vmix", kind="preview"):
    """The preview input changed."""



@dataclass(frozen=True)
class VmixOutput(EvidenceEvent, source="vmix", kind="output"):
    """An output turned on (active) or off."""

    _omit_none: ClassVar[tuple[str, ...]] = ("previous", "after_gap")
    name: str
    active: bool
    via: str = "http"
    previous: bool | None = None
    after_gap: bool | None = None


@dataclass(frozen=True)
class VmixTally(EvidenceEvent, source="vmix", kind="tally"):
    """The TCP TALLY line: input numbers on program and on preview."""

    program: list[int]
    preview: list[int]
    via: str = "tcp"
