"""Evidence of how a GUI was used: the X input recorder (monitor/observers/x_input.py, source "x11")
and OBS's own record of its Settings dialog (monitor/observers/obs_log.py, source "obs").

Presses are counted per target window (never which keys); a window is named by its WM_CLASS
instance/class, pid and title as the recorder read them when the burst began.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from verifiers.evidence.base import EvidenceEvent, Payload


@dataclass(frozen=True)
class XWindow(Payload):
    """The window that received a burst of presses (`root`: none focused; `gone`: closed since)."""

    _omit_none: ClassVar[tuple[str, ...]] = ("root", "gone")
    window_id: str
    wm_instance: str | None = None
    wm_class: str | None = None
    pid: int | None = None
    title: str | None = None
    root: bool | None = None
    gone: bool | None = None


@dataclass(frozen=True)
class XInputStarted(EvidenceEvent, source="x11", kind="ui/input_started"):
    """The input recorder runs on this display (XRECORD)."""

    display: str
    record_version: str | None = None


@dataclass(frozen=True)
class XInputUnavailable(EvidenceEvent, source="x11", kind="ui/input_unavailable"):
    """Input could not be recorded (no XRECORD, display gone): `lost` when it stopped mid-run."""

    display: str | None
    reason: str
    lost: bool = False


@dataclass(frozen=True)
class XInput(EvidenceEvent, source="x11", kind="ui/input"):
    """Consecutive key and button presses into one window (counts only)."""

    window: XWindow
    key_presses: int = 0
    button_presses: int = 0
    buttons: dict[str, int] = field(default_factory=dict)
    first_mono_ns: int | None = None
    last_mono_ns: int | None = None


@dataclass(frozen=True)
class ObsSettingsChanged(EvidenceEvent, source="obs", kind="ui/settings_changed"):
    """OBS's Settings dialog was confirmed (its log names the changed pages)."""

    _omit_none: ClassVar[tuple[str, ...]] = ("log_time",)
    changed: list[str] = field(default_factory=list)
    log_time: str | None = None


