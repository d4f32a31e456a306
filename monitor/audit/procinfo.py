"""What /proc says about a process, read as early as possible (short-lived writers exit fast)."""

from __future__ import annotations

import os
import re
from typing import Any

_VERSIONED = re.compile(r"^(?P<base>[A-Za-z_+-]+?)[0-9.]*$")


def process_info(pid: int) -> dict[str, Any]:
    """pid, exe, cmdline, comm, ppid and cwd; fields the process took with it when it exited are None."""
    info: dict[str, Any] = {"pid": pid, "exe": None, "cmdline": None, "comm": None, "ppid": None, "cwd": None}
    base = f"/proc/{pid}"
    try:
        info["cwd"] = os.readlink(f"{base}/cwd")
    except OSError:
        pass
    try:
        info["exe"] = os.readlink(f"{base}/exe")
    except OSError:
        pass
    try:
        with open(f"{base}/cmdline", "rb") as fh:
            raw = fh.read(8192)
        if raw:
            info["cmdline"] = [a.decode("utf-8", "replace") for a in raw.rstrip(b"\0").split(b"\0")]
    except OSError:
        pass
    try:
        with open(f"{base}/stat", "rb") as fh:
            stat = fh.read(1024).decode("utf-8", "replace")
        # comm is in parentheses and may itself contain ') '; the last ')' ends it.
        lpar, rpar = stat.index("("), stat.rindex(")")
        info["comm"] = stat[lpar + 1:rpar]
        info["ppid"] = int(stat[rpar + 2:].split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return info


def program_name(info: dict[str, Any]) -> str | None:
    """The short name of the program: basename of exe, else comm (what a zombie still has)."""
    if info.get("exe"):
        return os.path.basename(str(info["exe"]).removesuffix(" (deleted)"))
    return info.get("comm")


def matches_forbidden(name: str | None, forbidden: tuple[str, ...]) -> str | None:
    """The forbidden entry `name` matches: exact, or the same program with a version (python3.11)."""
    if not name:
        return None
    for entry in forbidden:
        if name == entry:
            return entry
        m = _VERSIONED.match(name)
        if m and m.group("base") == entry:
            return entry
    return None
