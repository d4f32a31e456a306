"""Control messages on `tally/<node>/cmd`: parsed and validated before anything acts on them.

A control message is a JSON object with `cmd` one of start / done / abort. A message that does
not parse or does not fit is answered with an error (published as an Event line on
`tally/<node>/control/error`) and changes nothing.

Anyone who can publish on the broker can send one, so nothing in it is trusted: the payload is
size-capped and depth-checked before `json.loads` sees it (a 100 k-deep array would otherwise be a
RecursionError, not a reply), NaN/Infinity are refused, every echoed text is clipped, and a
`start`'s work dir and GT dir must be real, distinct, non-overlapping directories allowed by the
daemon's `PathPolicy` (a GT inside the work dir is readable by the agent; a work dir of `/`
would make the audit mark every directory on the machine).
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COMMANDS = ("start", "done", "abort")
_START_KEYS = {"cmd", "task", "workdir", "gt", "run", "timeout_s", "id"}
_OTHER_KEYS = {"cmd", "run", "id"}
#: A control message is a few hundred bytes; anything past this is not one.
MAX_PAYLOAD_BYTES = 64 << 10
#: Nesting a control message never needs (it is one flat object).
MAX_DEPTH = 8
#: Longest text echoed back in a rejection (key names, values).
MAX_ECHO_CHARS = 80
#: Longest string accepted for task / run / id / a path.
MAX_FIELD_CHARS = 4096
#: A week: longer is a typo (and a float that big is no timeout).
MAX_TIMEOUT_S = 7 * 24 * 3600.0
#: Directories a run may never use (nor anything under them) unless an allow-root says so.
SYSTEM_DIRS = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run",
               "/sbin", "/snap", "/srv", "/sys", "/usr", "/var")
#: Under /var only these are work areas.
_VAR_WORK = ("/var/tmp",)
_OPENERS = re.compile(rb"[\[{]")


class ControlError(ValueError):
    """Why a control message was rejected (one line, safe to publish, short)."""


@dataclass(frozen=True)
class ControlMessage:
    cmd: str
    task: str | None = None
    workdir: Path | None = None
    gt: Path | None = None
    run: str | None = None
    timeout_s: float | None = None
    request_id: str | None = None


def clip(text: str, limit: int = MAX_ECHO_CHARS) -> str:
    """One line of at most `limit` characters (plus a note of how much was cut)."""
    text = text.replace("\n", " ").replace("\r", " ")
    return text if len(text) <= limit else f"{text[:limit]}…(+{len(text) - limit} chars)"


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


@dataclass(frozen=True)
class PathPolicy:
    """Which directories a `start` may name. Empty `allow_roots`: anything but `/`, the system
    directories and bare top-level directories (/tmp, /home, ...); otherwise only paths inside one
    of the roots (`tally serve --allow-root DIR`), and never `/` itself."""

    allow_roots: tuple[Path, ...] = ()

    @classmethod
    def of(cls, roots: list[Path] | tuple[Path, ...] | None) -> PathPolicy:
        return cls(tuple(Path(os.path.realpath(r)) for r in roots or ()))

    def refusal(self, path: Path) -> str | None:
        """Why `path` (already resolved) may not be used, or None."""
        if path == Path("/"):
            return "is / (the whole machine)"
        if self.allow_roots:
            if not any(_inside(path, root) for root in self.allow_roots):
                return "is outside every --allow-root (" + ", ".join(str(r) for r in self.allow_roots) + ")"
            return None
        text = str(path)
        for system in SYSTEM_DIRS:
            if text == system or text.startswith(system + "/"):
                if any(text == w or text.startswith(w + "/") for w in _VAR_WORK):
                    break
                return f"is a system directory (under {system})"
        if len(path.parts) <= 2:
            return "is a top-level directory (give a folder of its own)"
        return None


def _max_depth(raw: bytes, limit: int) -> int:
    """Bracket nesting of a JSON text, strings skipped; stops counting past `limit` (cheap, no parse)."""
    depth = deepest = 0
    in_string = escaped = False
    for pos in range(len(raw)):
        ch = raw[pos]
        if in_string:
            if escaped:
                escaped = False
            elif ch == 0x5C:  # backslash
                escaped = True
            elif ch == 0x22:
                in_string = False
        elif ch == 0x22:
            in_string = True
        elif ch in (0x5B, 0x7B):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif ch in (0x5D, 0x7D):
            depth -= 1
    return deepest


def _no_constants(name: str) -> Any:
    raise ControlError(f"malformed JSON: {name} is not a number a control message may hold")


def _decode(payload: bytes) -> Any:
    if len(payload) > MAX_PAYLOAD_BYTES:
        raise ControlError(f"control message of {len(payload)} bytes is over the {MAX_PAYLOAD_BYTES} byte limit")
    # Only a text with more openers than the limit can be too deep: skip the scan for the usual case.
    if len(_OPENERS.findall(payload, 0, len(payload))) > MAX_DEPTH and _max_depth(payload, MAX_DEPTH) > MAX_DEPTH:
        raise ControlError(f"malformed JSON: nested deeper than {MAX_DEPTH} levels")
    try:
        text = payload.decode("utf-8")
        return json.loads(text, parse_constant=_no_constants)
    except UnicodeDecodeError as exc:
        raise ControlError(f"malformed JSON: not UTF-8 ({clip(exc.reason)} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ControlError(f"malformed JSON: {clip(exc.msg)} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:  # not reachable after the depth scan; kept so no input can escape as one
        raise ControlError("malformed JSON: nested too deeply") from None


def _string(obj: dict[str, Any], key: str, cmd: str, required: bool = False) -> str | None:
    value = obj.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise ControlError(f"{cmd}: {key} must be a non-empty string")
    if len(value) > MAX_FIELD_CHARS or "\x00" in value:
        raise ControlError(f"{cmd}: {key} is over {MAX_FIELD_CHARS} characters or holds a NUL")
    return value


def _timeout(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ControlError("start: timeout_s must be a positive number")
    try:
        seconds = float(value)
    except OverflowError:  # a 400-digit integer (found by the fuzzer)
        seconds = math.inf
    if not math.isfinite(seconds) or not 0 < seconds <= MAX_TIMEOUT_S:
        raise ControlError(f"start: timeout_s must be a finite positive number of seconds, at most {MAX_TIMEOUT_S:g}")
    return seconds


def check_dirs(workdir: Path, gt: Path, policy: PathPolicy) -> tuple[Path, Path]:
    """Both as resolved paths, or ControlError: absolute, existing, allowed, distinct, not nested."""
    resolved: dict[str, Path] = {}
    for key, path in (("workdir", workdir), ("gt", gt)):
        if not path.is_absolute():
            raise ControlError(f"start: {key} must be an absolute path")
        try:
            is_dir = path.is_dir()
            real = Path(os.path.realpath(path))
        except (OSError, ValueError) as exc:  # ENAMETOOLONG, ELOOP...: found by the fuzzer
            raise ControlError(f"start: {key} {clip(str(path))} is not a usable path "
                               f"({clip(getattr(exc, 'strerror', None) or type(exc).__name__, 40)})") from None
        if not is_dir:
            raise ControlError(f"start: {key} {clip(str(path))} is not a directory")
        why = policy.refusal(real)
        if why is not None:
            raise ControlError(f"start: {key} {clip(str(path))} {why}")
        resolved[key] = real
    work, truth = resolved["workdir"], resolved["gt"]
    if work == truth:
        raise ControlError("start: gt is the work dir (the agent could read the ground truth)")
    if _inside(truth, work):
        raise ControlError("start: gt is inside the work dir (the agent could read the ground truth)")
    if _inside(work, truth):
        raise ControlError("start: the work dir is inside gt (the agent could read the ground truth)")
    return work, truth


def parse_control(payload: bytes, policy: PathPolicy | None = None) -> ControlMessage:
    obj = _decode(payload)
    if not isinstance(obj, dict):
        raise ControlError("a control message must be a JSON object")
    cmd = obj.get("cmd")
    if cmd not in COMMANDS:
        shown = clip(repr(cmd)) if isinstance(cmd, str) else type(cmd).__name__
        raise ControlError(f"unknown cmd {shown} (expected one of {', '.join(COMMANDS)})")
    allowed = _START_KEYS if cmd == "start" else _OTHER_KEYS
    unknown = sorted(set(obj) - allowed)
    if unknown:
        shown = clip(", ".join(clip(k, 24) for k in unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""))
        raise ControlError(f"{cmd}: unknown key(s) {shown}")
    if obj.get("run") is not None and not isinstance(obj.get("run"), str):
        raise ControlError("run must be a string")
    run = _string(obj, "run", cmd)
    rid_raw = obj.get("id")
    if rid_raw is not None and (isinstance(rid_raw, bool) or not isinstance(rid_raw, (str, int))):
        raise ControlError(f"{cmd}: id must be a string or an integer")
    rid = clip(str(rid_raw), 200) if rid_raw is not None else None
    if cmd != "start":
        return ControlMessage(cmd, run=run, request_id=rid)
    task = _string(obj, "task", cmd, required=True)
    for key in ("workdir", "gt"):
        _string(obj, key, cmd, required=True)
    timeout = _timeout(obj.get("timeout_s"))
    workdir, gt = check_dirs(Path(obj["workdir"]), Path(obj["gt"]), policy or PathPolicy())
    return ControlMessage("start", task=task, workdir=workdir, gt=gt, run=run, timeout_s=timeout, request_id=rid)
