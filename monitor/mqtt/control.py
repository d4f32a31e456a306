"""Control messages on `tally/<node>/cmd`: parsed and validated before anything acts on them.

A control message is a JSON object with `cmd` one of start / done / abort. A message that does
not parse or does not fit is answered with an error (published as an Event line on
`tally/<node>/control/error`) and changes nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COMMANDS = ("start", "done", "abort")
_START_KEYS = {"cmd", "task", "workdir", "gt", "run", "timeout_s", "id"}
_OTHER_KEYS = {"cmd", "run", "id"}


class ControlError(ValueError):
    """Why a control message was rejected (one line, safe to publish)."""


@dataclass(frozen=True)
class ControlMessage:
    cmd: str
    task: str | None = None
    workdir: Path | None = None
    gt: Path | None = None
    run: str | None = None
    timeout_s: float | None = None
    request_id: str | None = None


def parse_control(payload: bytes) -> ControlMessage:
    try:
        obj: Any = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ControlError(f"malformed JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise ControlError("a control message must be a JSON object")
    cmd = obj.get("cmd")
    if cmd not in COMMANDS:
        raise ControlError(f"unknown cmd {cmd!r} (expected one of {', '.join(COMMANDS)})")
    allowed = _START_KEYS if cmd == "start" else _OTHER_KEYS
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise ControlError(f"{cmd}: unknown key(s) {', '.join(unknown)}")
    run = obj.get("run")
    if run is not None and not isinstance(run, str):
        raise ControlError("run must be a string")
    rid = obj.get("id")
    rid = str(rid) if rid is not None else None
    if cmd != "start":
        return ControlMessage(cmd, run=run, request_id=rid)
    for key in ("task", "workdir", "gt"):
        if not isinstance(obj.get(key), str) or not obj[key]:
            raise ControlError(f"start: {key} must be a non-empty string")
    timeout = obj.get("timeout_s")
    if timeout is not None and (not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0):
        raise ControlError("start: timeout_s must be a positive number")
    workdir, gt = Path(obj["workdir"]), Path(obj["gt"])
    for key, path in (("workdir", workdir), ("gt", gt)):
        if not path.is_absolute():
            raise ControlError(f"start: {key} must be an absolute path")
        if not path.is_dir():
            raise ControlError(f"start: {key} {path} is not a directory")
    return ControlMessage("start", task=obj["task"], workdir=workdir, gt=gt, run=run,
                          timeout_s=float(timeout) if timeout is not None else None, request_id=rid)
