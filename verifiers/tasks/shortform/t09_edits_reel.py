"""R06.04.01.04-T09: a 20-s music-timed reel from the 'Hike' album in Instagram Edits, saved not posted.

Work dir: fixtures/hike_track.m4a, input/beats.txt (one beat time in seconds per line), the album's
clips pulled from the phone as device/Photos/Hike/clip1..5.mp4 (album order = file order).
Outputs: device/Photos/hike_reel.mp4; state/activity_feed.json is exported by the harness (the
test account's feed: {"posts": [...]}) — without it saved_not_posted is an error, never a pass.
GT: gt/render.json = instance scale (synthetic only).

Issue 21, rule 3: the reel's length and "saved, not posted" reward what an idle account already
has (a 20-s black file saved, a feed without posts), so both pay in proportion to the edit present:
the share of the five album clips that play as segments of the reel (a run whose clip advances
≥ 25 % of the run's length: a held frame is no segment). Measured (seed 0): black + silence
25 → 0, the first frame held 25 → 0, clip 1 handed back 15 → 3 (1/5 of saved_not_posted).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from verifiers.base import GTError
from verifiers.checks import Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.measure.ocr import OCRUnavailable, frame_text, normalise
from verifiers.params import NoParams
from verifiers.paramtypes.shortform import LengthClips, SyncFrames, TextTiming
from verifiers.synth import InstanceWriter
from verifiers.synthkit.shortform_video import burn_text, clip_frames, write_video
from verifiers.tasks.shortform._shared.cases import AT_2997, CHEAP_BASELINES, ONE_EXPORT, register_video_cases
from verifiers.tasks.shortform._shared.clips import ClipMatcher, Labelled, Run, segments, sources_in
from verifiers.tasks.shortform._shared.export import ExportTask

TASK = "R06.04.01.04-T09"
N = check_names(TASK)
OUTPUT = "device/Photos/hike_reel.mp4"
FEED = "state/activity_feed.json"
FPS = 24.0
MIN_ADVANCE = 0.25  # a segment plays when its clip advances at least this share of the segment's length


def read_beats(text: str) -> np.ndarray:
    try:
        return np.array(sorted(float(x) for x in text.split() if x.strip()))
    except ValueError as exc:
        raise GTError(f"input/beats.txt: not a list of seconds ({exc})") from None


def read_feed_posts(path: Path) -> list | str:
    """The activity feed's posts, or why it cannot be judged (the harness exports it, never the agent)."""
    if not path.exists():
        return f"{FEED} not available: the harness did not export the activity feed"
    try:
        posts = json.loads(path.read_text(encoding="utf-8")).get("posts")
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError) as exc:
        return f"{FEED} unreadable: {exc}"
    if not isinstance(posts, list):
        return f"{FEED} has no 'posts' list"
    return posts


class EditsReel(ExportTask, output=OUTPUT):
    task_id = TASK

    @provides
    def matcher(self) -> ClipMatcher:
        return ClipMatcher(sources_in(self.ctx.input("device/Photos/Hike")))

    @provides
    def edit(self) -> tuple[list[Labelled], list[Run]]:
        """Every output frame labelled, and the edit's segments."""
        return segments(self.matcher, self.export.path, self.fps)

    @property
    def album(self) -> list[str]:
        return sorted(set(self.matcher.labels), key=lambda s: (len(s), s))

    @provides
    def edit_present(self) -> float:
        """Rule 3: share of the reel's album clips (the first segment_count) playing as segments."""
        want = self.album[: self.task.check(N.length_clips).typed.segment_count]
        playing = {s.label for s in self.edit[1]
                   if s.label in want and s.src_end_s - s.src_start_s >= MIN_ADVANCE * (s.end_s - s.start_s)}
        return len(playing) / len(want) if want else 0.0

    @property
    def fps(self) -> float:
        return self.export.facts["fps"] or FPS

    @check(N.length_clips)
    def length_clips(self, p: LengthClips, curve: Curve) -> Result:
        facts, segs = self.export.facts, self.edit[1]
        order_ok = [s.label for s in segs] == self.album[: p.segment_count]
        dur_ok = abs(facts["duration_s"] - p.duration_s) <= 2 * (1.0 / self.fps)
        present = self.edit_present  # rule 3: the length pays with the album's clips playing in it
        return Result(curve.count([order_ok, dur_ok * present]),
                      {"segments": [s.label for s in segs], "duration_s": facts["duration_s"], "clips_playing": present},
                      f"segments {[s.label for s in segs]}, {facts['duration_s']:.2f} s"
                      + ("" if present >= 1 else f"; {present:.0%} of the album's clips play in it"))

    @check(N.cuts_on_beats)
    def cuts_on_beats(self, p: SyncFrames, curve: Curve) -> Result:
        beats = read_beats(self.ctx.input("input/beats.txt").read_text(encoding="utf-8"))
        segs = self.edit[1]
        tol_s = p.tolerance_frames * (1.0 / self.fps) + 1e-6
        cuts = [s.start_s for s in segs[1:]]
        errs = [float(np.min(np.abs(beats - c))) for c in cuts]
        on = sum(e <= tol_s for e in errs)
        return Result(curve.count(on, len(cuts)), {"cuts_s": cuts, "nearest_beat_error_s": errs},
                      f"{on}/{len(cuts)} cuts within {tol_s * self.fps:.0f} frames of a beat")

    @check(N.text_timing)
    def text_timing(self, p: TextTiming, curve: Curve) -> Result:
        labelled = self.edit[0]
        probes = [0.5, p.start_s + 0.25, (p.start_s + p.end_s) / 2, p.end_s - 0.25,
                  p.end_s + 0.5, self.export.facts["duration_s"] / 2 + 3]
        want = normalise(p.text)
        seen = {}
        try:
            for t in probes:
                fr = min(labelled, key=lambda x, t=t: abs(x.t_s - t))
                seen[round(t, 2)] = want in normalise(frame_text(fr.rgb))
        except OCRUnavailable as exc:
            return Result.cannot_judge(str(exc))
        expect = {round(t, 2): p.start_s <= t < p.end_s for t in probes}
        right = sum(seen[t] == expect[t] for t in expect)
        return Result(curve.passes(right == len(expect)), {"visible": seen, "expected": expect},
                      f"{right}/{len(expect)} probes as expected")

    @check(N.saved_not_posted)
    def saved_not_posted(self, p: NoParams, curve: Curve) -> Result:
        self.export  # noqa: B018 - "saved": without the saved reel this fails with the reel's reason
        posts = read_feed_posts(self.ctx.workdir / FEED)
        if isinstance(posts, str):
            return Result.cannot_judge(posts)
        present = self.edit_present  # rule 3: an idle account has no posts; it pays with the reel made
        return Result(curve.passes(not posts) * present, {"posts": len(posts), "clips_playing": present},
                      "; ".join(m for m in (f"{len(posts)} post(s) made" if posts else "",
                                            f"the saved reel plays {present:.0%} of the album's clips"
                                            if present < 1 else "") if m))

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        w, h = 180, 320
        clips = {f"clip{k}": clip_frames(int(rng.integers(1 << 30)), int(7 * FPS), w, h, FPS) for k in range(1, 6)}
        for name, frames in clips.items():
            write_video(inst.workdir / "device/Photos/Hike" / f"{name}.mp4", frames, FPS)
        (inst.workdir / "fixtures").mkdir(parents=True, exist_ok=True)
        sr = 48_000
        beat_s = 0.5  # 120 BPM
        beats = np.arange(0, 24, beat_s) + 0.25
        track = np.zeros(int(24 * sr), dtype=np.float32)
        for b in beats:
            i = int(b * sr)
            track[i:i + 2400] += 0.5 * np.exp(-np.arange(2400) / 300) * np.sin(2 * np.pi * 80 * np.arange(2400) / sr)
        write_video(inst.workdir / "fixtures/_track_tmp.mp4", [np.zeros((16, 16, 3), np.uint8)], 1, audio=track)
        (inst.workdir / "fixtures/_track_tmp.mp4").rename(inst.workdir / "fixtures/hike_track.m4a")
        (inst.workdir / "input").mkdir(parents=True, exist_ok=True)
        (inst.workdir / "input/beats.txt").write_text("".join(f"{b:.3f}\n" for b in beats))
        cut_beats = [3.25, 7.25, 11.75, 15.75]  # four cuts, five segments, 20 s
        edges = [0.0, *cut_beats, 20.0]

        def render(order=(1, 2, 3, 4, 5), cut_shift_frames=0, text_span=(1.0, 4.0)):
            out = []
            e = list(edges)
            e[2] += cut_shift_frames / FPS
            for seg, k in enumerate(order):
                n = round((e[seg + 1] - e[seg]) * FPS)
                for f in clips[f"clip{k}"][:n]:
                    t = len(out) / FPS
                    if text_span[0] <= t < text_span[1]:
                        f = burn_text(f, "Summit day", y_px=120, scale=0.55, thickness=1)
                    out.append(f)
            return out

        def solve(folder, feed=(), **kw):
            write_video(folder / OUTPUT, render(**kw), FPS)
            inst.write_json(folder / FEED, {"posts": list(feed)})

        solve(inst.oracle)
        # the harness exports the account's feed whatever the agent did: every baseline has it, empty
        register_video_cases(inst, OUTPUT, "device/Photos/Hike/clip1.mp4", profiles=ONE_EXPORT + AT_2997,
                             baselines=CHEAP_BASELINES, extra=((FEED, f"copy:oracle/{FEED}"),))
        solve(inst.mutant("cut_off_beat", [N.cuts_on_beats], "second cut lands 3 frames after its beat"),
              cut_shift_frames=3)
        solve(inst.mutant("album_order", [N.length_clips], "clips 4 and 5 swapped"), order=(1, 2, 3, 5, 4))
        solve(inst.mutant("text_too_long", [N.text_timing], "'Summit day' stays until 5 s"), text_span=(1.0, 5.0))
        solve(inst.mutant("posted", [N.saved_not_posted], "reel also posted to the feed"),
              feed=[{"id": "p1", "kind": "reel"}])
