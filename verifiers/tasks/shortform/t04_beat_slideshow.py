"""R06.04.01.04-T04: beat-synced photo slideshow (12 photos, a change every 2 beats, slow zoom).

Work dir: fixtures/trip_photos/01.jpg..12.jpg (folder order), fixtures/song.mp3.
Output: out/trip_slideshow.mp4. GT: gt/beats.json = {"beats_s": [...]} (the song's beat times);
gt/render.json = instance scale (synthetic only).
"""

from __future__ import annotations

import cv2
import numpy as np

from verifiers.base import GTError
from verifiers.checks import Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.gtfiles import GTFile, gt_field
from verifiers.measure.audio_io import load_audio
from verifiers.measure.errors import MediaError
from verifiers.measure.zoom import zoom_about_any_centre
from verifiers.paramtypes.shortform import AudioFormat, ChangesOnBeats, PhotosInOrder, Zoom
from verifiers.synth import InstanceWriter
from verifiers.synthkit.shortform_video import clip_frames, encode_audio, write_video
from verifiers.tasks.shortform._shared.audio_match import best_corr
from verifiers.tasks.shortform._shared.cases import AT_2997, ONE_EXPORT, register_video_cases
from verifiers.tasks.shortform._shared.clips import ClipMatcher, Labelled, Run, segments
from verifiers.tasks.shortform._shared.export import ExportTask, instance_scale, size_ok
from verifiers.tasks.shortform._shared.zoom import zoom_variants, zoomed

TASK = "R06.04.01.04-T04"
N = check_names(TASK)


class BeatsFile(GTFile, file="beats.json", task=TASK):
    """gt/beats.json: the song's beat times."""

    beats_s: list[float] = gt_field(doc="every beat, in order")

    def validate(self) -> None:
        self.expect(bool(self.beats_s) and all(a < b for a, b in zip(self.beats_s, self.beats_s[1:], strict=False)),
                    "beats_s", "must be non-empty and increasing")
OUTPUT = "out/trip_slideshow.mp4"
FPS = 24.0
SR_HZ = 48_000
SCALE = 1 / 6
MIN_SONG_CORR = 0.8


def zoom_gains_pct(labelled: list[Labelled], segs: list[Run], photos: dict[str, np.ndarray]) -> list[float]:
    """Per segment of 3+ frames: how much more its last frame is zoomed into its photo than its first."""
    gains = []
    for s in segs:
        if s.label is None:
            continue
        # the run's own frames: its end is its last frame's time plus one frame duration, which is
        # the next photo's first frame's time up to float rounding (the exact rate, export.frame_rate,
        # leaves a 1-ulp tie; the rate rounded to 29.97 took that frame in outright), so the window
        # is read together with the run's label
        inside = [x for x in labelled if s.start_s <= x.t_s < s.end_s and x.label == s.label]
        if len(inside) < 3:
            continue
        photo = cv2.resize(photos[s.label], (inside[0].rgb.shape[1], inside[0].rgb.shape[0]),
                           interpolation=cv2.INTER_AREA)
        # sub-pixel scale (template match seeding an ECC affine alignment): whole-pixel canvas sizes
        # read a 1.08 zoom of a 180-px-wide frame only to about 1 %, an eighth of the gain judged
        first, last = (zoom_about_any_centre(x.rgb, photo)[0] for x in (inside[0], inside[-1]))
        gains.append(100 * (last / first - 1))
    return gains


class BeatSlideshow(ExportTask, output=OUTPUT):
    task_id = TASK

    @provides
    def photos(self) -> dict[str, np.ndarray]:
        photos = {}
        for pth in sorted(self.ctx.input("fixtures/trip_photos").glob("*.jpg")):
            img = cv2.imread(str(pth))
            if img is None:
                raise GTError(f"photo {pth.name} unreadable")
            photos[pth.stem] = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
        return photos

    @provides
    def edit(self) -> tuple[list[Labelled], list[Run]]:
        """Every output frame labelled with its photo, and the slideshow's segments."""
        variants = [(name, v) for name, img in self.photos.items() for v in zoom_variants(img)]
        matcher = ClipMatcher({}, images=self.photos, variants=variants)
        return segments(matcher, self.export.path, self.export.facts["fps"] or FPS)

    @property
    def n_photos(self) -> int:
        return self.task.check(N.photos_in_order).typed.photo_count

    @check(N.photos_in_order)
    def photos_in_order(self, p: PhotosInOrder, curve: Curve) -> Result:
        segs, n = self.edit[1], p.photo_count
        shown = [s.label for s in segs]
        in_place = sum(a == b for a, b in zip(shown, sorted(self.photos), strict=False))
        score = curve.count(in_place, n) if len(segs) == n else 0.5 * curve.count(in_place, n)
        return Result(score, {"segments": shown}, f"{in_place}/{n} photos in folder order, {len(segs)} segments")

    @check(N.changes_on_beats)
    def changes_on_beats(self, p: ChangesOnBeats, curve: Curve) -> Result:
        beats = np.asarray(self.ctx.gt_typed(BeatsFile).beats_s, dtype=float)
        segs = self.edit[1]
        tol_s = p.tolerance_frames * (1.0 / (self.export.facts["fps"] or FPS)) + 1e-6
        want = beats[:: p.beats_per_photo_count][1:self.n_photos]
        changes = [s.start_s for s in segs[1:]]
        errs = [float(abs(c - w)) for c, w in zip(changes, want, strict=False)]
        on = sum(e <= tol_s for e in errs)
        return Result(curve.count(on, len(want)), {"changes_s": changes, "beats_s": want, "errors_s": errs},
                      f"{on}/{len(want)} changes within {p.tolerance_frames} frame(s) of their beat")

    @check(N.zoom)
    def zoom(self, p: Zoom, curve: Curve) -> Result:
        gains = zoom_gains_pct(*self.edit, self.photos)
        ok_z = sum(p.min_scale_gain_pct <= g <= p.max_scale_gain_pct for g in gains)
        return Result(curve.count(ok_z, self.n_photos), {"scale_gain_pct": gains},
                      f"{ok_z}/{self.n_photos} photos zoom in by {p.min_scale_gain_pct}–{p.max_scale_gain_pct} %")

    @check(N.audio_format)
    def audio_format(self, p: AudioFormat, curve: Curve) -> Result:
        song = self.ctx.input("fixtures/song.mp3")
        facts = self.export.facts
        try:
            out = load_audio(self.export.path, sample_rate_hz=SR_HZ).mono
            ref = load_audio(song, sample_rate_hz=SR_HZ).mono[: int(p.audio_s * SR_HZ)]
        except MediaError as exc:
            return Result.fail(f"no usable audio: {exc}")
        corr = best_corr(out, ref, 0.0, SR_HZ)
        audio_s = len(out) / SR_HZ
        ok = corr >= MIN_SONG_CORR and abs(audio_s - p.audio_s) <= 0.1 and \
            size_ok(facts, list(p.size_px), instance_scale(self.ctx))
        return Result(curve.passes(ok), {**facts, "song_corr": corr, "audio_s": audio_s},
                      f"song correlation {corr:.2f}, audio {audio_s:.2f} s, {facts['width_px']}x{facts['height_px']}")

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        w, h = 180, 320
        photos = {f"{k:02d}": clip_frames(int(rng.integers(1 << 30)), 1, w, h)[0] for k in range(1, 13)}
        for name, img in photos.items():
            p = inst.workdir / "fixtures/trip_photos" / f"{name}.jpg"
            p.parent.mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(p), cv2.cvtColor(img, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 95])
        song_s, beat_s = 30.0, 1.0
        beats = np.arange(0, song_s, beat_s)
        t = np.arange(int(song_s * SR_HZ)) / SR_HZ
        song = 0.1 * np.sin(2 * np.pi * 220 * t) * (1 + 0.5 * np.sin(2 * np.pi * 0.13 * t))
        song += 0.05 * np.random.default_rng(int(rng.integers(1 << 30))).standard_normal(len(t))
        for b in beats:
            i = int(b * SR_HZ)
            song[i:i + 2400] += 0.5 * np.exp(-np.arange(2400) / 400) * np.sin(2 * np.pi * 70 * np.arange(2400) / SR_HZ)
        song = (song / np.max(np.abs(song)) * 0.8).astype(np.float32)
        _write_mp3(inst.workdir / "fixtures/song.mp3", song)
        inst.write_json(inst.gt / "beats.json", {"beats_s": beats.tolist()})
        inst.write_json(inst.gt / "render.json", {"scale": SCALE})
        per = int(2 * beat_s * FPS)

        def render(order=None, late=None, gain=0.08, audio_from_s=0.0):
            order = order or list(photos)
            frames = []
            for k, name in enumerate(order):
                n = per + (3 if late == k else -3 if late == k - 1 else 0)
                frames += [zoomed(photos[name], 1.0 + gain * i / (n - 1)) for i in range(n)]
            a = song[int(audio_from_s * SR_HZ): int((audio_from_s + 24.0) * SR_HZ)]
            return frames, a

        def solve(folder, **kw):
            frames, a = render(**kw)
            write_video(folder / OUTPUT, frames, FPS, audio=a, sample_rate_hz=SR_HZ)

        solve(inst.oracle)
        # the work dir holds no video to hand back (photos and a song)
        register_video_cases(inst, OUTPUT, None, profiles=ONE_EXPORT + AT_2997, baselines=("black_silent", "still_with_sound"))
        order = list(photos)
        order[2], order[3] = order[3], order[2]
        solve(inst.mutant("photos_swapped", [N.photos_in_order], "photos 03 and 04 swapped"), order=order)
        solve(inst.mutant("change_3_frames_late", [N.changes_on_beats], "change into photo 6 lands 3 frames late"),
              late=4)
        solve(inst.mutant("no_zoom", [N.zoom], "photos held still"), gain=0.0)
        solve(inst.mutant("song_from_5s", [N.audio_format], "song starts at its 5 s mark"), audio_from_s=5.0)


def _write_mp3(path, mono: np.ndarray) -> None:
    import av

    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w", format="mp3") as out:
        st = out.add_stream("libmp3lame", rate=SR_HZ)
        st.layout = "mono"
        encode_audio(out, st, mono[None, :].astype(np.float32), SR_HZ, 1152)  # an MP3 frame: 1152 samples
