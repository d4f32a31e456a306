"""Which source clip (and which moment of it) an output frame shows: a fingerprint index over the
sources, labelled frames, and the runs (segments) of an edit."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from verifiers.base import AgentOutputError, GTError
from verifiers.measure.errors import MediaError
from verifiers.measure.fingerprint import FrameIndex, FrameMatch, match_frame, thumbnail
from verifiers.measure.frames import iter_frames

MATCH_WIDTH_PX = 160  # frames are matched as 160-px-wide thumbnails: enough for 64x36 NCC
MIN_NCC = 0.6  # below this an output frame shows none of the sources
#: an overlay (a title's box, a sticker, a PIP) may hide at most this share of a frame's thumbnail
#: pixels, and of its detail (variance), for the rest to still identify the source moment
MAX_HIDDEN_SHARE = 0.5
#: a thumbnail pixel is hidden when its residual (after the gain and offset fitted on the whole
#: frame) lies further than this many robust sigmas (1.4826 MAD) from the median residual
HIDDEN_SIGMAS = 3.0
#: a frame below MIN_NCC re-scored by `visible_ncc` counts as its winner only at or above this:
#: what an overlay leaves visible is the source itself, so it matches nearly as the same picture does.
#: Measured (vncc22, docs/shortform.md): the right moment under an overlay re-scores to 0.80-1.00
#: (self-tests T10 seed 5 0.97-0.98, T12 seed 13 0.97-1.00, T08 seed 7's 40 % PIP 0.80-0.93, the
#: lowest; made-up boxes 1.00); frames of unrelated look-alike synthetic clips that trimming lifts
#: over MIN_NCC re-score to 0.60-0.98 (shortmend22's 0.64 and 0.65; 54 of 150 lifts below 0.75).
#: MIN_NCC would let all of those count as the source (content identity, docs/catalog.md rule 2);
#: a higher line would drop T08's PIP. Look-alikes above it are not told apart from an overlay.
VISIBLE_MIN_NCC = 0.75


def _to_width(rgb: np.ndarray, width_px: int) -> np.ndarray:
    import cv2

    h = max(2, round(rgb.shape[0] * width_px / rgb.shape[1]))
    return cv2.resize(rgb, (width_px, h), interpolation=cv2.INTER_AREA)


def fill_crop(rgb: np.ndarray, aspect: float | None) -> np.ndarray:
    """The centre of `rgb` cut to width/height `aspect` (what a slot that fills with a source of
    another shape shows); None or the frame's own aspect (within 2 %): the frame unchanged."""
    if aspect is None:
        return rgb
    h, w = rgb.shape[:2]
    if abs(w / h / aspect - 1) <= 0.02:
        return rgb
    if w / h > aspect:
        cw = max(2, round(h * aspect))
        x0 = (w - cw) // 2
        return rgb[:, x0:x0 + cw]
    ch = max(2, round(w / aspect))
    y0 = (h - ch) // 2
    return rgb[y0:y0 + ch]


def visible_ncc(query: np.ndarray, source: np.ndarray) -> float:
    """NCC of two thumbnails over the pixels an overlay leaves visible (issue 21: a title's dark
    box over a bright clip drops the whole-frame NCC to 0.47 on the right moment).

    The query is fitted as gain x source + offset; pixels whose residual is an outlier (beyond
    HIDDEN_SIGMAS robust sigmas) are hidden, and the NCC is taken over the rest. 0 when more than
    MAX_HIDDEN_SHARE of the pixels, or of the source's detail, is hidden: what is left is too little
    to tell the moment (a shared flat background is not the picture). An unrelated frame has no
    gain to fit, so its residual is the frame itself and trimming its tails leaves it unrelated."""
    q, s = query.ravel().astype(np.float64), source.ravel().astype(np.float64)
    gain, offset = np.polyfit(s, q, 1) if np.ptp(s) > 0 else (0.0, float(q.mean()))
    resid = q - gain * s - offset
    dev = np.abs(resid - np.median(resid))
    visible = dev <= HIDDEN_SIGMAS * 1.4826 * np.median(dev)
    sc, qc = s[visible] - s[visible].mean(), q[visible] - q[visible].mean()
    detail = float(sc @ sc) / max(float(((s - s.mean()) ** 2).sum()), 1e-12)
    if visible.mean() < 1 - MAX_HIDDEN_SHARE or detail < 1 - MAX_HIDDEN_SHARE:
        return 0.0
    norm = float(np.linalg.norm(sc) * np.linalg.norm(qc))
    return float(sc @ qc) / norm if norm > 0 else 0.0


def identify_frame(rgb: np.ndarray, index: FrameIndex, exhaustive: bool = False) -> FrameMatch:
    """The index frame `rgb` shows (`match_frame`: the pHash shortlist's best, or with `exhaustive`
    every frame's) with its NCC: the whole-frame NCC of the winner or, below MIN_NCC, its NCC over
    the pixels an overlay leaves visible (`visible_ncc`) when that reaches VISIBLE_MIN_NCC (else the
    whole-frame NCC stands: a look-alike's trimmed NCC is no proof of the source). The one path
    every short-form matcher takes (ClipMatcher, StockMatcher, T16's trailer), so a caption or
    sticker over a frame is judged alike in all."""
    m = match_frame(rgb, index, candidates=len(index.times_s)) if exhaustive else match_frame(rgb, index)
    if m.ncc >= MIN_NCC:
        return m
    visible = visible_ncc(thumbnail(rgb), index.thumbs[m.index])
    return replace(m, ncc=visible) if visible >= VISIBLE_MIN_NCC else m


@dataclass(frozen=True)
class Labelled:
    t_s: float  # output time
    label: str | None  # source clip shown (None: no source matches)
    src_t_s: float  # time in that source
    ncc: float
    src_index: int = -1  # into ClipMatcher.index
    rgb: np.ndarray | None = None  # the (160-px) output frame, when asked to keep it


class ClipMatcher:
    """Fingerprint index over several source clips: which clip, which moment an output frame shows."""

    def __init__(self, sources: dict[str, Path], images: dict[str, np.ndarray] | None = None,
                 variants: list[tuple[str, np.ndarray]] | None = None, fill_aspect: float | None = None,
                 exhaustive: bool = False) -> None:
        """`images`: one still per label; `variants`: more stills under a label (e.g. a photo zoomed
        in); `fill_aspect`: source frames centre-cropped to that width/height first (a slot of
        another shape filled by the source); `exhaustive`: every source frame's NCC is taken, not
        only the pHash shortlist's (`match_frame`): an overlay that moves the hash (a caption's
        pill) can push the true moment of a clip whose moments look alike out of the shortlist."""
        self.exhaustive = exhaustive
        frames, times, labels = [], [], []
        for label, rgb in [*(images or {}).items(), *(variants or [])]:
            frames.append(_to_width(rgb, MATCH_WIDTH_PX))
            times.append(0.0)
            labels.append(label)
        for label, path in sources.items():
            try:
                for fr in iter_frames(path, width=MATCH_WIDTH_PX):
                    frames.append(fill_crop(fr.rgb, fill_aspect))
                    times.append(fr.t_s)
                    labels.append(label)
            except MediaError as exc:
                raise GTError(f"source clip {label}: {exc}") from None
        if not frames:
            raise GTError("no source clips to match against")
        self.labels = labels
        self.index = FrameIndex.from_frames(frames, times, keep=True)

    def identify(self, rgb: np.ndarray) -> tuple[str | None, float, float, int]:
        """The source and moment `rgb` shows, and its NCC: the whole-frame NCC of the best candidate,
        or, below MIN_NCC, its NCC over the pixels an overlay leaves visible (`identify_frame`). With
        `exhaustive`, every source frame is a candidate, not only the fingerprint-nearest few."""
        m = identify_frame(rgb, self.index, self.exhaustive)
        if m.ncc < MIN_NCC:
            return None, m.t_s, m.ncc, m.index
        return self.labels[m.index], m.t_s, m.ncc, m.index

    def source_frame(self, idx: int) -> np.ndarray:
        return self.index.frames[idx]

    def label_video(self, path: Path, every_s: float | None = None, start_s: float = 0.0,
                    end_s: float | None = None, keep: bool = False) -> list[Labelled]:
        out = []
        try:
            for fr in iter_frames(path, width=MATCH_WIDTH_PX, every_s=every_s):
                if fr.t_s < start_s - 1e-6:
                    continue
                if end_s is not None and fr.t_s >= end_s - 1e-6:
                    break
                label, src_t, ncc, idx = self.identify(fr.rgb)
                out.append(Labelled(fr.t_s, label, src_t, ncc, idx, fr.rgb if keep else None))
        except MediaError as exc:
            raise AgentOutputError(str(exc)) from None
        return out


@dataclass(frozen=True)
class Run:
    label: str | None
    start_s: float
    end_s: float  # time of the first frame after the run
    frames: int
    src_start_s: float
    src_end_s: float


def _spans(labelled: list[Labelled]) -> list[tuple[int, int]]:
    """(first, last) index of each stretch of consecutive frames with the same label."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(labelled):
        j = i
        while j + 1 < len(labelled) and labelled[j + 1].label == labelled[i].label:
            j += 1
        out.append((i, j))
        i = j + 1
    return out


def runs(labelled: list[Labelled], frame_s: float) -> list[Run]:
    """Consecutive frames showing the same source, in output order."""
    return [Run(labelled[i].label, labelled[i].t_s, labelled[j].t_s + frame_s, j - i + 1,
                labelled[i].src_t_s, labelled[j].src_t_s) for i, j in _spans(labelled)]


def clean_runs(rs: list[Run], min_frames: int = 3) -> list[Run]:
    """Runs without one- or two-frame glitches (e.g. a transition frame), neighbours merged."""
    out: list[Run] = []
    for r in rs:
        if r.frames < min_frames:
            continue
        if out and out[-1].label == r.label:
            p = out[-1]
            out[-1] = Run(p.label, p.start_s, r.end_s, p.frames + r.frames, p.src_start_s, r.src_end_s)
        else:
            out.append(r)
    return out


def segments(matcher: ClipMatcher, path: Path, fps: float) -> tuple[list[Labelled], list[Run]]:
    """Every output frame labelled (160-px frames kept) and its clean runs: the edit's segments, in
    order; the cut times are the starts of all but the first."""
    labelled = matcher.label_video(path, keep=True)
    return labelled, clean_runs(runs(labelled, 1.0 / fps))


#: a run of frames plays its source when the source moment moves forward on at least this share of
#: its consecutive frame pairs (T11's advancing rule): a held frame never does, and one mismatched
#: frame (a caption in another colour matched 10 s away) costs two pairs, not the run
MIN_ADVANCING_PAIRS = 0.5


def playing_share(labelled: list[Labelled]) -> float:
    """Share of labelled frames that play a given source (issue 21, rule 2: content identity).

    Frames are grouped in runs showing the same source; a run plays when its source moment moves
    forward on at least MIN_ADVANCING_PAIRS of its consecutive pairs (a one-frame run has none). A first frame held for the whole length, black, or frames of nothing given play
    nowhere; a picture-in-picture or a caption over the source, whose matched moment may wobble by
    a few frames, still plays because the run as a whole advances (T08's 40 % PIP mutant: frame by
    frame, 4 % of its frames did not step forward)."""
    n = len(labelled)
    return sum(playing_flags(labelled)) / n if n else 0.0


def playing_flags(labelled: list[Labelled], step_s: float | None = None) -> list[bool]:
    """Per labelled frame: does the run it belongs to play its source (see playing_share).

    `step_s`: the sources' frame duration. Each frame is then paired with the first frame of its run
    at least that much later in output time (not with the next frame): an export at a higher rate
    than its sources (29.97 from a 12 fps edit) repeats each source frame 2-3 times, and its moment
    moves forward once per source frame, in seconds. None, or a step no longer than the export's
    frame: consecutive frames (the same pairs when the rates are equal)."""
    out: list[bool] = []
    for i, j in _spans(labelled):
        t = np.array([x.t_s for x in labelled[i:j + 1]])
        src = np.array([x.src_t_s for x in labelled[i:j + 1]])
        ahead = np.arange(1, len(t)) if step_s is None else np.searchsorted(t, t + step_s - 1e-3)
        pairs = [(a, b) for a, b in enumerate(ahead) if b < len(t) and b > a]
        advancing = [src[b] > src[a] for a, b in pairs]
        plays = labelled[i].label is not None and j > i and bool(advancing) and float(np.mean(advancing)) >= MIN_ADVANCING_PAIRS
        out += [plays] * (j - i + 1)
    return out


def sources_in(folder: Path, pattern: str = "*.mp4") -> dict[str, Path]:
    found = {p.stem: p for p in sorted(folder.glob(pattern))}
    if not found:
        raise GTError(f"no source clips in {folder.name}/")
    return found
