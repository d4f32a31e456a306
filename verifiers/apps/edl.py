"""CMX3600 edit decision lists: events with reel, channels, transition and four timecodes.

    TITLE: REEL4 V2
    FCM: NON-DROP FRAME
    001  AX       V     C        01:00:02:00 01:00:04:00 01:00:00:00 01:00:02:00
    * FROM CLIP NAME: SHOT_02

Source in/out is where the material comes from (here: the v1 reel's timeline), record in/out where
it lands in the new cut. Timecodes are HH:MM:SS:FF (";" before frames = drop frame, accepted for
29.97/59.94). Comment lines (`*`) attach to the event above; `M2` motion lines are kept as text.

Proven on EDLs Avid Media Composer, Premiere, Resolve and Nucoda wrote (tests/formats/test_real_edl.py),
which also carry: `AUD  3    4` (audio channels beyond A2, attached to the event above),
`EFFECTS NAME IS ...`, `REM ...`, `SPLIT: ...` and star-less `FROM CLIP NAME:` notes (kept as the
event's comments), and Avid's trailing `>>> SOURCE ...` table (kept in `EDL.notes`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from verifiers.apps._files import parse_text


class EDLError(ValueError):
    """Not a CMX3600 EDL, or an event line that does not parse."""


_TC = re.compile(r"^(\d{1,2}):(\d{2}):(\d{2})([:;.,])(\d{2,3})$")
_EVENT = re.compile(r"^(\d{1,6})\s+(\S+)\s+(\S+)\s+(C|D|W\d{3}|K[BO]?)\s+(\d{1,4}\s+)?"
                    r"(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$")


def tc_to_frames(tc: str, fps: float) -> int:
    """Timecode to a frame count (non-drop; drop-frame counting for ';' at 29.97/59.94)."""
    m = _TC.match(tc.strip())
    if not m:
        raise EDLError(f"bad timecode {tc!r}")
    h, mi, s, sep, f = int(m[1]), int(m[2]), int(m[3]), m[4], int(m[5])
    nominal = round(fps)
    if f >= nominal or mi >= 60 or s >= 60:
        raise EDLError(f"timecode {tc!r} out of range at {fps:g} fps")
    frames = ((h * 60 + mi) * 60 + s) * nominal + f
    if sep == ";" and nominal in (30, 60):
        drop = 2 * nominal // 30
        total_min = h * 60 + mi
        frames -= drop * (total_min - total_min // 10)
    return frames


def frames_to_tc(frames: int, fps: float) -> str:
    nominal = round(fps)
    f = frames % nominal
    s = frames // nominal
    return f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}:{f:02d}"


@dataclass
class EDLEvent:
    number: int
    reel: str
    channels: str
    transition: str
    src_in: int
    src_out: int
    rec_in: int
    rec_out: int
    comments: list[str] = field(default_factory=list)
    transition_frames: int | None = None  # the duration column of a D/W/K event ("D    070")

    @property
    def clip_name(self) -> str | None:
        for c in self.comments:
            m = re.match(r"\*?\s*FROM CLIP NAME:\s*(.+)$", c, re.I)
            if m:
                return m[1].strip()
        return None


    @property
    def extra_audio_channels(self) -> list[int]:
        """Audio channels named on `AUD` lines under the event (A3, A4 ... as 3, 4)."""
        out = []
        for c in self.comments:
            if c.upper().startswith("AUD"):
                out += [int(x) for x in c.split()[1:] if x.isdigit()]
        return out


@dataclass
class EDL:
    title: str
    drop_frame: bool
    events: list[EDLEvent]
    notes: list[str] = field(default_factory=list)  # lines before the first event, Avid's >>> SOURCE table

#: Statement lines that are not events: kept as text on the event above (or in EDL.notes).
_NOTE_PREFIXES = ("*", "M2", "AUD", "REM", "EFFECTS NAME IS", "SPLIT:", "FROM CLIP NAME:", "FROM FILE:",
                  "SOURCE FILE:")


def parse_edl(text: str, fps: float) -> EDL:
    title, drop, events, notes = "", False, [], []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        up = line.upper()
        if up.startswith("TITLE:"):
            title = line[6:].strip()
        elif up.startswith("FCM:"):
            drop = "NON" not in up and "DROP" in up
        elif up.startswith(">>>"):
            notes.append(line)
        elif up.startswith(_NOTE_PREFIXES):
            (events[-1].comments if events else notes).append(line)
        else:
            m = _EVENT.match(line)
            if not m:
                raise EDLError(f"line {n}: not a CMX3600 event: {line[:60]!r}")
            try:
                tcs = [tc_to_frames(m[i], fps) for i in (6, 7, 8, 9)]
            except EDLError as exc:
                raise EDLError(f"line {n}: {exc}") from None
            events.append(EDLEvent(int(m[1]), m[2], m[3], m[4], *tcs,
                                   transition_frames=int(m[5]) if m[5] else None))
    if not events:
        raise EDLError("no events: not a CMX3600 EDL")
    return EDL(title, drop, events, notes)


def read_edl(path: str | Path, fps: float) -> EDL:
    return parse_text(path, lambda text: parse_edl(text, fps), EDLError)


def write_edl(path: Path, title: str, events: list[EDLEvent], fps: float) -> Path:
    """A CMX3600 EDL (non-drop) for synthetic fixtures, in the columns Premiere and Avid write
    (`001  AX       V     C        01:00:00:00 ...`; a dissolve's frames as `D    070`)."""
    lines = [f"TITLE: {title}", "FCM: NON-DROP FRAME", ""]
    for e in events:
        tcs = " ".join(frames_to_tc(v, fps) for v in (e.src_in, e.src_out, e.rec_in, e.rec_out))
        tr = f"{e.transition:<8}" if e.transition_frames is None else f"{e.transition:<5}{e.transition_frames:03d}"
        lines.append(f"{e.number:03d}  {e.reel:<8} {e.channels:<5} {tr} {tcs}")
        lines += e.comments
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
