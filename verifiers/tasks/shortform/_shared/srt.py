"""SRT subtitle files (task inputs): cues with start/end seconds and their text."""

from __future__ import annotations

import re
from dataclasses import dataclass

from verifiers.base import GTError


@dataclass(frozen=True)
class Cue:
    start_s: float
    end_s: float
    text: str  # lines joined with a space


_SRT_TIME = re.compile(r"(\d+):(\d\d):(\d\d)[,.](\d{1,3})\s*-->\s*(\d+):(\d\d):(\d\d)[,.](\d{1,3})")


def parse_srt(text: str, name: str = "subtitles") -> list[Cue]:
    """Cues of an SRT file (a task input, so a malformed one is a GT error naming `name`)."""
    def secs(h: str, m: str, s: str, ms: str) -> float:
        return int(h) * 3600 + int(m) * 60 + int(s) + int(ms.ljust(3, "0")) / 1000

    cues = []
    for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n").lstrip("\ufeff").strip()):
        lines = [ln.strip() for ln in block.split("\n") if ln.strip()]
        if not lines:
            continue
        timing = next((i for i, ln in enumerate(lines) if "-->" in ln), None)
        m = _SRT_TIME.search(lines[timing]) if timing is not None else None
        if m is None:
            raise GTError(f"{name}: cue without a valid 'hh:mm:ss,mmm --> hh:mm:ss,mmm' line: {block[:60]!r}")
        start, end = secs(*m.groups()[:4]), secs(*m.groups()[4:])
        if end <= start:
            raise GTError(f"{name}: cue ends before it starts: {lines[timing]!r}")
        cues.append(Cue(start, end, " ".join(lines[timing + 1:])))
    if not cues:
        raise GTError(f"{name}: no cues")
    return cues
