"""OBS hotkey bindings ({"key": "OBS_KEY_1", "control": true, "alt": true}) as "Ctrl+Alt+1".

Tasks state hotkeys the way people say them; comparing decoded strings keeps the scorers short.
Modifier order is fixed (Ctrl, Alt, Shift, Cmd) so equal bindings give equal strings.
"""

from __future__ import annotations

from typing import Any

_MODIFIERS = (("control", "Ctrl"), ("alt", "Alt"), ("shift", "Shift"), ("command", "Cmd"))

_KEY_NAMES = {
    "SPACE": "Space", "RETURN": "Return", "ENTER": "Enter", "ESCAPE": "Esc", "TAB": "Tab",
    "BACKSPACE": "Backspace", "DELETE": "Del", "INSERT": "Ins", "HOME": "Home", "END": "End",
    "PAGEUP": "PgUp", "PAGEDOWN": "PgDown", "LEFT": "Left", "RIGHT": "Right", "UP": "Up",
    "DOWN": "Down", "MINUS": "-", "EQUAL": "=", "PLUS": "+", "COMMA": ",", "PERIOD": ".",
    "SLASH": "/", "BACKSLASH": "\\", "SEMICOLON": ";", "APOSTROPHE": "'", "BRACKETLEFT": "[",
    "BRACKETRIGHT": "]", "QUOTELEFT": "`", "PAUSE": "Pause", "PRINT": "Print",
}


def key_name(obs_key: str) -> str:
    """OBS_KEY_1 -> "1", OBS_KEY_F9 -> "F9", OBS_KEY_NUM1 -> "Num1", OBS_KEY_SPACE -> "Space"."""
    k = obs_key.removeprefix("OBS_KEY_")
    if k.startswith("NUM") and len(k) > 3:
        rest = k[3:]
        return "Num" + (rest if len(rest) == 1 else rest.capitalize())
    if k in _KEY_NAMES:
        return _KEY_NAMES[k]
    if len(k) == 1 or (k[0] == "F" and k[1:].isdigit()):
        return k
    if k.startswith("MOUSE"):
        return "Mouse" + k[5:]
    return k.capitalize()


def decode_binding(binding: dict[str, Any]) -> str:
    """One binding dict -> "Ctrl+Alt+1". A binding without a key decodes to ""."""
    key = binding.get("key")
    if not isinstance(key, str) or not key or key == "OBS_KEY_NONE":
        return ""
    mods = [label for flag, label in _MODIFIERS if binding.get(flag)]
    return "+".join([*mods, key_name(key)])


def decode_bindings(bindings: Any) -> tuple[str, ...]:
    """A list of binding dicts (or {"bindings": [...]}, the basic.ini form) -> decoded strings."""
    if isinstance(bindings, dict):
        bindings = bindings.get("bindings", [])
    if not isinstance(bindings, list):
        return ()
    out = [decode_binding(b) for b in bindings if isinstance(b, dict)]
    return tuple(s for s in out if s)


def normalize(combo: str) -> str:
    """"alt+ctrl+1" / "Control + Alt + 1" -> "Ctrl+Alt+1" so task text compares with decoded bindings."""
    parts = [p.strip() for p in combo.replace(" ", "").split("+") if p.strip()]
    aliases = {"ctrl": "Ctrl", "control": "Ctrl", "alt": "Alt", "option": "Alt", "shift": "Shift",
               "cmd": "Cmd", "command": "Cmd", "meta": "Cmd", "super": "Cmd", "win": "Cmd"}
    mods = {aliases[p.lower()] for p in parts[:-1] if p.lower() in aliases}
    key = parts[-1] if parts else ""
    key = key_name("OBS_KEY_" + key.upper()) if key else ""
    order = [label for _flag, label in _MODIFIERS if label in mods]
    return "+".join([*order, key])
