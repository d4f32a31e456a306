"""Reading an app's project or config file into its parser, with the app's own error naming the file.

Every app reader (Streamlabs, vertical canvas, EDL, REAPER) turns "cannot read" and "not this format"
into one ValueError subclass of its own, so a scorer reports the agent's file in one line instead of
a traceback; the messages are the readers' (unchanged when they moved here)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def load_json(path: str | Path, error: type[ValueError]) -> Any:
    """The JSON value in `path`; `error("<path>: ...")` when it cannot be read or is not JSON."""
    p = Path(path)
    try:
        return json.loads(p.read_bytes())
    except OSError as exc:
        raise error(f"{p}: cannot read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise error(f"{p}: not valid JSON: {exc}") from None


def parse_text(path: str | Path, parse: Callable[[str], T], error: type[ValueError]) -> T:
    """`parse` of a text file's content (undecodable bytes replaced); its `error`s and an unreadable
    file as `error("<file name>: ...")`."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise error(f"{p.name}: unreadable ({exc.strerror})") from None
    try:
        return parse(text)
    except error as exc:
        raise error(f"{p.name}: {exc}") from None
