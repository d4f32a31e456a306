"""Key chords as people write them ("ctrl+alt+1", "F9", "Ctrl+Alt+M") → X keysym names.

Why a parser of our own: the scenario files, the catalog ("Ctrl+Alt+1") and OBS's hotkey JSON all
spell chords differently; one normalised form (modifiers in a fixed order + one key) lets the
driver press them and lets error messages say exactly which part of a chord was not understood.
"""

from __future__ import annotations

from dataclasses import dataclass

from Xlib import XK

#: Modifier words → the keysym the driver holds down (left-hand keys, as a person would).
MODIFIERS: dict[str, str] = {
    "ctrl": "Control_L", "control": "Control_L",
    "alt": "Alt_L",
    "shift": "Shift_L",
    "super": "Super_L", "win": "Super_L", "meta": "Super_L", "cmd": "Super_L",
}
_MOD_ORDER = ("Control_L", "Alt_L", "Shift_L", "Super_L")

#: Friendly key names → X keysym names where they differ.
_ALIASES: dict[str, str] = {
    "enter": "Return", "return": "Return", "esc": "Escape", "escape": "Escape", "space": "space",
    "tab": "Tab", "backspace": "BackSpace", "delete": "Delete", "del": "Delete", "insert": "Insert",
    "home": "Home", "end": "End", "pageup": "Prior", "pagedown": "Next", "up": "Up", "down": "Down",
    "left": "Left", "right": "Right", "minus": "minus", "plus": "plus", "comma": "comma",
    "period": "period", "slash": "slash",
}


class KeyChordError(ValueError):
    """A chord that names an unknown key or modifier (message names the offending part)."""


@dataclass(frozen=True, slots=True)
class KeyChord:
    """Modifiers (X keysym names, fixed order) and one key (an X keysym name)."""

    modifiers: tuple[str, ...]
    key: str

    def __str__(self) -> str:
        names = {"Control_L": "Ctrl", "Alt_L": "Alt", "Shift_L": "Shift", "Super_L": "Super"}
        key = self.key.upper() if len(self.key) == 1 else self.key
        return "+".join([*(names[m] for m in self.modifiers), key])


def parse_chord(text: str) -> KeyChord:
    """Parse "ctrl+alt+1" / "Ctrl+Alt+M" / "F9" (case-insensitive, '+' separated)."""
    if not isinstance(text, str) or not text.strip():
        raise KeyChordError(f"empty key chord {text!r}")
    parts = [p.strip() for p in text.split("+")]
    if any(not p for p in parts):
        # "ctrl++" means the plus key; keep that case simple: ask for the word.
        raise KeyChordError(f"key chord {text!r} has an empty part (write 'plus' for '+')")
    *mods, key = parts
    mod_syms: set[str] = set()
    for m in mods:
        sym = MODIFIERS.get(m.lower())
        if sym is None:
            raise KeyChordError(f"unknown modifier {m!r} in key chord {text!r} "
                                f"(known: {', '.join(sorted(MODIFIERS))})")
        mod_syms.add(sym)
    return KeyChord(tuple(s for s in _MOD_ORDER if s in mod_syms), _keysym_name(key, text))


def _keysym_name(key: str, chord: str) -> str:
    low = key.lower()
    if low in _ALIASES:
        return _ALIASES[low]
    if len(key) == 1:
        name = key.lower() if key.isalpha() else key
        if XK.string_to_keysym(name) or name.isdigit():
            return name
    if low[:1] == "f" and low[1:].isdigit() and 1 <= int(low[1:]) <= 35:
        return f"F{int(low[1:])}"
    if XK.string_to_keysym(key):
        return key
    raise KeyChordError(f"unknown key {key!r} in key chord {chord!r}")


def keysym(name: str) -> int:
    """The numeric keysym for a keysym name (digits map to their XK_0..XK_9 codes)."""
    code = XK.string_to_keysym(name)
    if not code:
        raise KeyChordError(f"no X keysym named {name!r}")
    return int(code)
