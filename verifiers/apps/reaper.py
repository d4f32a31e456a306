"""REAPER project (.RPP) reader: the chunk tree, then tracks, items and envelopes.

An .RPP is plain text: `<NAME args...` opens a chunk, `>` closes it, other lines are
`KEY value...` with tokens separated by spaces. REAPER quotes a token that holds a space or a quote
with whichever of " ' ` it does not contain (no escapes; a backslash is a plain character, as in
Windows paths), and writes the project's version token unquoted since 7.x in some saves.
Proven on projects REAPER 4.32-7.51 saved (tests/formats/test_real_reaper.py).
This reader keeps the tree and exposes what the sound tasks check: track names, items (position,
length, source offset, fades, source file) and automation envelopes (PT time value shape).

Item VOLPAN is `volume pan volume2 pan-law` (index 0 is the item volume; real files write
`VOLPAN 1 0 1 -1`); track VOLPAN is `volume pan pan-law ...`.
Volume envelopes with `VOLTYPE 1` (REAPER 6+ default, "fader scaling") store fader positions, not
linear amplitude: :attr:`Envelope.fader_scaled` says which.
Pan sign: track pan in VOLPAN is -1 = full left … +1 = full right. Points of a pan envelope
(`<PANENV2`, `<PANENV`) are stored inverted (+1 = full left), as REAPER draws left at the top;
:meth:`Envelope.pan_points` returns them in the track-pan sign.
Also writes small projects for synthetic fixtures (:func:`write_rpp`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from verifiers.apps._files import parse_text


class RPPError(ValueError):
    """Not an RPP, or one whose chunks do not nest."""


@dataclass
class Chunk:
    name: str
    args: list[str]
    lines: list[list[str]] = field(default_factory=list)
    children: list[Chunk] = field(default_factory=list)

    def first(self, key: str) -> list[str] | None:
        for ln in self.lines:
            if ln and ln[0] == key:
                return ln[1:]
        return None

    def all(self, key: str) -> list[list[str]]:
        return [ln[1:] for ln in self.lines if ln and ln[0] == key]

    def chunks(self, name: str) -> list[Chunk]:
        return [c for c in self.children if c.name == name]


_QUOTES = "\"'`"


def _tokens(line: str) -> list[str]:
    """REAPER's tokenizer: a token starting with " ' or ` runs to the same quote character (an
    unclosed one to the end of the line); any other token runs to the next space. No escapes."""
    s, out, i, n = line.strip(), [], 0, len(line.strip())
    while i < n:
        while i < n and s[i] in " \t":
            i += 1
        if i >= n:
            break
        if s[i] in _QUOTES:
            j = s.find(s[i], i + 1)
            j = n if j < 0 else j
            out.append(s[i + 1:j])
            i = j + 1
        else:
            j = i
            while j < n and s[j] not in " \t":
                j += 1
            out.append(s[i:j])
            i = j
    return out


def parse_rpp(text: str) -> Chunk:
    """The root chunk (REAPER_PROJECT). Raises RPPError on a file that is not a well-nested RPP."""
    stack: list[Chunk] = []
    root: Chunk | None = None
    for n, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if not s:
            continue
        if s.startswith("<"):
            toks = _tokens(s[1:])
            if not toks:
                raise RPPError(f"line {n}: chunk with no name")
            c = Chunk(toks[0], toks[1:])
            if stack:
                stack[-1].children.append(c)
            elif root is None:
                root = c
            else:
                raise RPPError(f"line {n}: second top-level chunk")
            stack.append(c)
        elif s == ">":
            if not stack:
                raise RPPError(f"line {n}: '>' closes nothing")
            stack.pop()
        elif stack:
            stack[-1].lines.append(_tokens(s))
        else:
            raise RPPError(f"line {n}: text outside any chunk")
    if root is None or root.name != "REAPER_PROJECT":
        raise RPPError("not a REAPER project (no <REAPER_PROJECT chunk)")
    if stack:
        raise RPPError(f"unterminated chunk <{stack[-1].name}")
    return root


@dataclass
class EnvPoint:
    time_s: float
    value: float
    shape: int = 0


@dataclass
class Envelope:
    name: str  # chunk name: VOLENV2, PANENV2, ...
    points: list[EnvPoint]
    active: bool = True
    voltype: int = 0  # VOLTYPE line: 1 = points are fader positions ("fader scaling"), 0 = amplitude

    @property
    def fader_scaled(self) -> bool:
        return self.voltype == 1

    def pan_points(self) -> list[EnvPoint]:
        """Points in track-pan sign (-1 left, +1 right); pan envelopes store the opposite sign."""
        sign = -1.0 if self.name.startswith("PANENV") else 1.0
        return [EnvPoint(p.time_s, sign * p.value, p.shape) for p in self.points]


@dataclass
class Item:
    position_s: float
    length_s: float
    source_offset_s: float = 0.0
    name: str = ""
    source_file: str | None = None
    fade_in_s: float = 0.0
    fade_out_s: float = 0.0
    volume: float = 1.0


@dataclass
class Track:
    name: str
    volume: float = 1.0
    pan: float = 0.0
    items: list[Item] = field(default_factory=list)
    envelopes: dict[str, Envelope] = field(default_factory=dict)


def _f(vals: list[str] | None, i: int = 0, default: float = 0.0) -> float:
    try:
        return float(vals[i]) if vals is not None and len(vals) > i else default
    except ValueError:
        return default


def _item(c: Chunk) -> Item:
    src_file = None
    for s in c.children:
        if s.name == "SOURCE":
            f = s.first("FILE")
            if f:
                src_file = f[0]
            for inner in s.chunks("SOURCE"):  # SECTION sources nest the real one
                g = inner.first("FILE")
                if g:
                    src_file = g[0]
    name = c.first("NAME")
    return Item(position_s=_f(c.first("POSITION")), length_s=_f(c.first("LENGTH")),
                source_offset_s=_f(c.first("SOFFS")), name=name[0] if name else "", source_file=src_file,
                fade_in_s=_f(c.first("FADEIN"), 1), fade_out_s=_f(c.first("FADEOUT"), 1),
                volume=_f(c.first("VOLPAN"), 0, 1.0))


def tracks(root: Chunk) -> list[Track]:
    out = []
    for c in root.chunks("TRACK"):
        name = c.first("NAME")
        vp = c.first("VOLPAN")
        t = Track(name=name[0] if name else "", volume=_f(vp, 0, 1.0), pan=_f(vp, 1, 0.0))
        t.items = [_item(i) for i in c.chunks("ITEM")]
        for e in c.children:
            if e.name.endswith(("ENV", "ENV2", "ENV3")):
                pts = [EnvPoint(_f(p, 0), _f(p, 1), int(_f(p, 2))) for p in e.all("PT")]
                act = e.first("ACT")
                t.envelopes[e.name] = Envelope(e.name, pts, active=(act is None or act[0] != "0"),
                                               voltype=int(_f(e.first("VOLTYPE"), 0, 0.0)))
        out.append(t)
    return out


def read_rpp(path: str | Path) -> list[Track]:
    """Tracks of an .RPP file; RPPError (with the file name) when it is not one."""
    return parse_text(path, lambda text: tracks(parse_rpp(text)), RPPError)


def track_named(all_tracks: list[Track], name: str) -> Track | None:
    return next((t for t in all_tracks if t.name.strip().lower() == name.strip().lower()), None)


def _q(s: str, *, always: bool = False) -> str:
    """Quote as REAPER does: bare when it can be (names), else with a quote character the text lacks
    (", then ', then `; with all three, backquotes become ')."""
    if s and not always and not any(c in s for c in " \t") and s[0] not in _QUOTES:
        return s
    for q in _QUOTES:
        if q not in s:
            return q + s + q
    return "`" + s.replace("`", "'") + "`"


def write_rpp(path: Path, track_list: list[Track], *, sample_rate_hz: int = 48_000, extra: list[str] = ()) -> Path:
    """A minimal project REAPER opens (fixtures for synthetic instances).

    Every key written is one REAPER itself writes in that chunk (tests/formats/test_real_reaper.py
    checks it against REAPER 4-7 saves); view/UI state REAPER also writes is left to its defaults."""
    out = ['<REAPER_PROJECT 0.1 "7.0/linux-x86_64" 1700000000', "  RIPPLE 0", "  TEMPO 120 4 4",
           f"  SAMPLERATE {sample_rate_hz} 0 0", *[f"  {x}" for x in extra]]
    for t in track_list:
        out += ["  <TRACK", f"    NAME {_q(t.name)}", f"    VOLPAN {t.volume:g} {t.pan:g} -1 -1 1",
                "    MUTESOLO 0 0 0", "    SEL 0", "    NCHAN 2", "    MAINSEND 1 0"]
        for env in t.envelopes.values():
            out += [f"    <{env.name}", f"      ACT {int(env.active)} -1", "      VIS 1 1 1", "      ARM 0",
                    "      DEFSHAPE 0 -1 -1"]
            out += [f"      PT {p.time_s:.6f} {p.value:.6f} {p.shape}" for p in env.points]
            out.append("    >")
        for it in t.items:
            out += ["    <ITEM", f"      POSITION {it.position_s:.6f}", "      SNAPOFFS 0",
                    f"      LENGTH {it.length_s:.6f}", "      LOOP 1", "      ALLTAKES 0",
                    f"      FADEIN 1 {it.fade_in_s:.6f} 0 1 0 0 0", f"      FADEOUT 1 {it.fade_out_s:.6f} 0 1 0 0 0",
                    "      MUTE 0 0", "      SEL 0",
                    f"      VOLPAN {it.volume:g} 0 1 -1", f"      SOFFS {it.source_offset_s:.6f}",
                    f"      NAME {_q(it.name)}", "      <SOURCE WAVE",
                    f"        FILE {_q(it.source_file or '', always=True)}",
                    "      >", "    >"]
        out.append("  >")
    out.append(">")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path
