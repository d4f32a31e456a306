"""R06.04.01.04-T09: a 20-s music-timed reel from the 'Hike' album in Instagram Edits, saved not posted.

Work dir: fixtures/hike_track.m4a, input/beats.txt (one beat time in seconds per line), the album's
clips pulled from the phone as device/Photos/Hike/clip1..5.mp4 (album order = file order).
Outputs: device/Photos/hike_reel.mp4; state/activity_feed.json is exported by the harness (the
test account's feed: {"posts": [...]}) — without it saved_not_posted is an error, never a pass.
GT: gt/render.json = instance scale (synthetic only).
"""

from __future__ import annotations

import json

import numpy as np

from verifiers.base import Checks, GTError, ScoreContext, TaskVerifier
from verifiers.measure.ocr import OCRUnavailable, frame_text, normalise
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.synthkit.shortform_video import burn_text, clip_frames, write_video
from verifiers.tasks.shortform._shared.clips import ClipMatcher, segments, sources_in
from verifiers.tasks.shortform._shared.export import open_output

OUTPUT = "device/Photos/hike_reel.mp4"
FEED = "state/activity_feed.json"
FPS = 24.0


def read_beats(text: str) -> np.ndarray:
    try:
        return np.array(sorted(float(x) for x in text.split() if x.strip()))
    except ValueError as exc:
        raise GTError(f"input/beats.txt: not a list of seconds ({exc})") from None


@register
class EditsReel(TaskVerifier):
    task_id = "R06.04.01.04-T09"

    def score(self, ctx: ScoreContext, checks: Checks) -> None:
        beats = read_beats(ctx.input("input/beats.txt").read_text(encoding="utf-8"))
        matcher = ClipMatcher(sources_in(ctx.input("device/Photos/Hike")))
        opened = open_output(ctx, checks, OUTPUT)
        if opened is None:
            return
        path, facts = opened
        fps = facts["fps"] or FPS
        frame_s = 1.0 / fps
        labelled, segs = segments(matcher, path, fps)

        p = checks.params("length_clips")
        album = sorted(set(matcher.labels), key=lambda s: (len(s), s))
        order_ok = [s.label for s in segs] == album[: p["segments"]]
        dur_ok = abs(facts["duration_s"] - p["duration_s"]) <= 2 * frame_s
        checks.set("length_clips", 0.5 * order_ok + 0.5 * dur_ok,
                   {"segments": [s.label for s in segs], "duration_s": facts["duration_s"]},
                   f"segments {[s.label for s in segs]}, {facts['duration_s']:.2f} s")

        tol_s = checks.params("cuts_on_beats")["tolerance_frames"] * frame_s + 1e-6
        cuts = [s.start_s for s in segs[1:]]
        errs = [float(np.min(np.abs(beats - c))) for c in cuts]
        on = sum(e <= tol_s for e in errs)
        checks.set("cuts_on_beats", on / len(cuts) if cuts else 0.0,
                   {"cuts_s": cuts, "nearest_beat_error_s": errs},
                   f"{on}/{len(cuts)} cuts within {tol_s * fps:.0f} frames of a beat")

        tp = checks.params("text_timing")
        probes = [0.5, tp["start_s"] + 0.25, (tp["start_s"] + tp["end_s"]) / 2, tp["end_s"] - 0.25,
                  tp["end_s"] + 0.5, facts["duration_s"] / 2 + 3]
        want = normalise(tp["text"])
        try:
            seen = {}
            for t in probes:
                fr = min(labelled, key=lambda x, t=t: abs(x.t_s - t))
                seen[round(t, 2)] = want in normalise(frame_text(fr.rgb))
        except OCRUnavailable as exc:
            checks.error("text_timing", str(exc))
        else:
            expect = {round(t, 2): tp["start_s"] <= t < tp["end_s"] for t in probes}
            right = sum(seen[t] == expect[t] for t in expect)
            checks.set("text_timing", float(right == len(expect)), {"visible": seen, "expected": expect},
                       f"{right}/{len(expect)} probes as expected")

        feed_path = ctx.workdir / FEED
        if not feed_path.exists():
            checks.error("saved_not_posted", f"{FEED} not available: the harness did not export the activity feed")
            return
        try:
            posts = json.loads(feed_path.read_text(encoding="utf-8")).get("posts")
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError) as exc:
            checks.error("saved_not_posted", f"{FEED} unreadable: {exc}")
            return
        if not isinstance(posts, list):
            checks.error("saved_not_posted", f"{FEED} has no 'posts' list")
            return
        checks.set("saved_not_posted", float(not posts), {"posts": len(posts)},
                   "" if not posts else f"{len(posts)} post(s) made")

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
        solve(inst.mutant("cut_off_beat", ["cuts_on_beats"], "second cut lands 3 frames after its beat"),
              cut_shift_frames=3)
        solve(inst.mutant("album_order", ["length_clips"], "clips 4 and 5 swapped"), order=(1, 2, 3, 5, 4))
        solve(inst.mutant("text_too_long", ["text_timing"], "'Summit day' stays until 5 s"), text_span=(1.0, 5.0))
        solve(inst.mutant("posted", ["saved_not_posted"], "reel also posted to the feed"),
              feed=[{"id": "p1", "kind": "reel"}])
