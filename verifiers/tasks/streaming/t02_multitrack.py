"""R06.12.01.01-T02: multitrack 1080p60 MKV recording at 12 Mbps CBR, remuxed to recordings/test_rec.mp4.

Measured on the files (PyAV packet scan, like ffprobe -show_packets): size, frame rate, video
bitrate (bytes/duration), GOP (median keyframe spacing), audio stream count. Routing: the harness
feeds known signals to Mic and Desktop Audio (gt/mic_ref.wav, gt/desktop_ref.wav); each MP4 audio
track is projected onto both (routing.project, 50 ms least squares): track 1 must hold both,
track 2 only the mic, track 3 only the desktop. The MKV is the newest .mkv in recordings/; the MP4
is a remux when its streams match the MKV's packet for packet in count and bytes (no re-encode).
Profile: basic.ini [Output] Mode, [AdvOut] RecFormat/RecTracks, recordEncoder.json.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from verifiers.base import AgentOutputError, ScoreContext
from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.measure.errors import MediaError
from verifiers.measure.projection import project
from verifiers.paramtypes.streaming import RecordingExists, RecordingVideo, RemuxedMp4, ThreeTracks
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.synthkit import obs_synth as O
from verifiers.synthkit.streaming_media import disk_cached, merge, remux, write_media, yuv_flat
from verifiers.tasks.streaming.common import OBS_DIR, active_profile
from verifiers.tasks.streaming.media import MediaInfo, decode_audio_tracks, probe

TASK = "R06.12.01.01-T02"
N = check_names(TASK)
MP4 = "recordings/test_rec.mp4"
RATE_HZ = 48_000
MIN_SHARE = 0.02   # a reference holding at least 2% of a track's fitted energy is "in" it
LEAK_SHARE = 0.01  # ... and under 1% is "not in" it (AAC and least squares leave a trace)
#: encoded recordings, reused across instances in one process (1080p60 costs seconds to encode)
_CACHE: dict[tuple, bytes] = {}


def _mkv(ctx: ScoreContext) -> Path | None:
    d = ctx.workdir / "recordings"
    mkvs = sorted(d.glob("*.mkv")) if d.is_dir() else []
    return mkvs[-1] if mkvs else None


def _same_streams(a: MediaInfo, b: MediaInfo) -> bool:
    if len(a.video) != len(b.video) or len(a.audio) != len(b.audio):
        return False
    for x, y in zip(a.video, b.video, strict=True):
        if x.codec != y.codec or x.frames != y.frames or x.packet_digest != y.packet_digest:
            return False
    return all(x.codec == y.codec for x, y in zip(a.audio, b.audio, strict=True))


@register
class MultitrackRecording(CheckedTask):
    task_id = TASK

    @provides
    def mkv(self) -> tuple[Path | None, MediaInfo | None]:
        """The MKV recording and its probe (None, None when absent; (path, None) when unreadable)."""
        mkv = _mkv(self.ctx)
        try:
            return mkv, (probe(mkv) if mkv else None)
        except MediaError:
            return mkv, None

    @provides
    def mp4(self) -> MediaInfo:
        try:
            return probe(self.ctx.artifact(MP4))
        except MediaError as exc:
            raise AgentOutputError(str(exc)) from None

    @check(N.recording_exists)
    def recording_exists(self, p: RecordingExists, curve: Curve) -> Result:
        mkv, info = self.mkv
        parts = {"MKV recording": info is not None and "matroska" in info.container,
                 "about 10 s": info is not None and abs(info.duration_s - p.duration_s) <= 1.5}
        return Result(curve.count(sum(parts.values()), 2),
                      {"file": mkv.name if mkv else None, "duration_s": info.duration_s if info else None},
                      "; ".join(f"no {k}" for k, v in parts.items() if not v))

    @check(N.remuxed_mp4)
    def remuxed_mp4(self, p: RemuxedMp4, curve: Curve) -> Result:
        info, mkv_info = self.mp4, self.mkv[1]
        same = bool(mkv_info and _same_streams(mkv_info, info))
        return Result(curve.passes(p.container in info.container and same), {"container": info.container},
                      "" if same else "test_rec.mp4 is not a remux of the MKV")

    @check(N.video_settings)
    def video_settings(self, p: RecordingVideo, curve: Curve) -> Result:
        info = self.mp4
        v = info.video[0] if info.video else None
        parts: dict[str, float] = {}
        if v is None:
            parts["video stream"] = 0.0
        else:
            parts["1920x1080"] = float([v.width_px, v.height_px] == list(p.size_px))
            parts["60 fps"] = float(abs(v.fps - p.fps) < 0.05)
            err_pct = abs(v.bitrate_bps / 1000 - p.bitrate_kbps) / p.bitrate_kbps * 100
            parts["12 Mbps"] = curve.part("bitrate").score(err_pct, p.bitrate_tolerance_pct)
            parts["GOP 120"] = float(v.gop_frames is not None and abs(v.gop_frames - p.gop_frames) <= 1)
        try:
            prof = active_profile(self.ctx)
            enc = prof.record_encoder or {}
            parts["profile Advanced/MKV"] = float(prof.output_mode == "Advanced" and prof.recording.format == "mkv")
            parts["recordEncoder CBR 12000 keyint 2"] = float(
                enc.get("rate_control") == "CBR" and enc.get("bitrate") == p.bitrate_kbps
                and enc.get("keyint_sec") == p.keyframe_interval_s)
        except AgentOutputError:
            parts["profile"] = 0.0
        return Result(curve.count(list(parts.values())),
                      {"measured": {"size": [v.width_px, v.height_px], "fps": v.fps, "bitrate_kbps": v.bitrate_bps / 1000,
                                    "gop_frames": v.gop_frames} if v else None, **parts},
                      "; ".join(f"wrong {k}" for k, s in parts.items() if s < 1))

    @check(N.three_tracks)
    def three_tracks(self, p: ThreeTracks, curve: Curve) -> Result:
        self.mp4  # noqa: B018 - as before the split: an unreadable MP4 fails this check with the probe's reason
        refs = [_ref(self.ctx, "mic_ref.wav"), _ref(self.ctx, "desktop_ref.wav")]
        try:
            tracks, rate = decode_audio_tracks(self.ctx.workdir / MP4)
        except MediaError as exc:
            return Result.fail(str(exc))
        shares = []
        for t in tracks[:3]:
            pj = project(t.astype(np.float64), refs, rate, per_ref_lag=True)
            shares.append((pj.total_share(0), pj.total_share(1)))
        parts = {"3 audio streams": len(tracks) == p.audio_streams,
                 "track 1 = mix": len(shares) > 0 and min(shares[0]) >= MIN_SHARE,
                 "track 2 = mic only": len(shares) > 1 and shares[1][0] >= MIN_SHARE and shares[1][1] < LEAK_SHARE,
                 "track 3 = desktop only": len(shares) > 2 and shares[2][1] >= MIN_SHARE and shares[2][0] < LEAK_SHARE}
        return Result(curve.count(sum(parts.values()), 4),
                      {"shares_mic_desktop": [[round(a, 3), round(b, 3)] for a, b in shares], **parts},
                      "; ".join(f"not {k}" for k, v in parts.items() if not v))

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        mic, desk = reference_signals(rng, 10.0)
        sf.write(str(inst.gt / "mic_ref.wav"), mic, RATE_HZ, subtype="FLOAT")
        sf.write(str(inst.gt / "desktop_ref.wav"), desk, RATE_HZ, subtype="FLOAT")
        (inst.workdir / "recordings").mkdir(parents=True)
        mix = [mic + desk, mic, desk]
        coll = O.collection("Stream", [O.scene("Live", [O.item("Game", 1)])], [
            O.source("Game", "xshm_input", {}),
            O.source("Mic", "pulse_input_capture", {"device_id": "tally_mic.monitor"}, mixers=0b011),
            O.source("Desktop Audio", "pulse_output_capture", {"device_id": "default"}, mixers=0b101)])
        tmp = inst.root / ".tmp"
        tmp.mkdir()

        def cached(key: tuple, make) -> Path:
            path = tmp / ("-".join(map(str, key)) + ".mkv")
            if key not in _CACHE:
                make(path)
                _CACHE[key] = path.read_bytes()
            elif not path.exists():
                path.write_bytes(_CACHE[key])
            return path

        def mkv_bytes(kbps: int, gop: int, audio_key: str, audio: list[np.ndarray], preset: str = "ultrafast") -> bytes:
            looks = [yuv_flat(1920, 1080, 40), yuv_flat(1920, 1080, 80)]  # 600 references to 2 frames
            video = cached(("v", kbps, gop, preset), lambda p: disk_cached(
                f"t02-video-1080p60-600f-{kbps}-{gop}-{preset}", lambda q: write_media(
                    q, [looks[(i // 30) % 2] for i in range(600)], 60,
                    bitrate_bps=kbps * 1000, gop_frames=gop, preset=preset), p))
            sound = cached(("a", inst.seed, audio_key), lambda p: write_media(p, None, audio=audio))
            return cached(("av", inst.seed, kbps, gop, preset, audio_key),
                          lambda p: merge(video, sound, p)).read_bytes()

        def solution(folder: Path, *, kbps: int = 12000, gop: int = 120, keyint_s: int = 2, fmt: str = "mkv",
                     audio_key: str = "ok", audio: list[np.ndarray] = mix, reencode: bool = False,
                     file_kbps: int | None = None, file_gop: int | None = None) -> None:
            """The profile asks for `kbps` / `keyint_s`; the recording is encoded at `file_kbps` /
            `file_gop` when given (what the encoder delivered differs from what was asked)."""
            cfg = folder / OBS_DIR
            O.write_collection(cfg, coll)
            O.write_global(cfg, "Stream", "Stream")
            O.write_profile(cfg, "Stream", {
                "Output": {"Mode": "Advanced"},
                "AdvOut": {"RecType": "Standard", "RecFilePath": "/home/streamer/work/recordings", "RecFormat": fmt,
                           "RecEncoder": "obs_x264", "RecTracks": 7},
                "Video": {"BaseCX": 1920, "BaseCY": 1080, "OutputCX": 1920, "OutputCY": 1080, "FPSType": 0,
                          "FPSCommon": "60"}},
                record_encoder={"rate_control": "CBR", "bitrate": kbps, "keyint_sec": keyint_s, "preset": "veryfast"})
            data = mkv_bytes(file_kbps or kbps, file_gop or gop, audio_key, audio)
            rec = folder / "recordings" / "2026-11-30 21-10-00.mkv"
            rec.parent.mkdir(parents=True, exist_ok=True)
            rec.write_bytes(data)
            if reencode:
                src = folder / "recordings" / ".tmp.mkv"
                src.write_bytes(mkv_bytes(file_kbps or kbps, file_gop or gop, audio_key, audio, preset="superfast"))
                remux(src, folder / MP4)
                src.unlink()
            else:
                remux(rec, folder / MP4)
            if fmt != "mkv":
                rec.unlink()

        solution(inst.oracle)
        solution(inst.mutant("bitrate_10mbps", [N.video_settings], "10 Mbps instead of 12"), kbps=10000)
        solution(inst.mutant("keyframe_auto", [N.video_settings], "keyframe interval 0 (auto): GOP 250"),
                 gop=250, keyint_s=0)
        solution(inst.mutant("tracks_swapped", [N.three_tracks], "Mic on track 3, Desktop on track 2"),
                 audio_key="swapped", audio=[mic + desk, desk, mic])
        solution(inst.mutant("one_track", [N.three_tracks], "only track 1 enabled"), audio_key="one",
                 audio=[mic + desk])
        solution(inst.mutant("recorded_mp4_directly", [N.video_settings, N.recording_exists, N.remuxed_mp4],
                             "recorded straight to MP4, no MKV"), fmt="mp4")
        solution(inst.mutant("reencoded_not_remuxed", [N.remuxed_mp4], "MP4 re-encoded instead of remuxed"),
                 reencode=True)
        # near misses with the profile right and the file off: the measured video bitrate against
        # 12 Mbps +-10 % (the encoder lands ~1 % under its target on these frames: 11000 kbps asked
        # measures 10893 kbps, 9.2 % low; 10700 measures 10596, 11.7 % low) and the GOP against 120 +-1 frame
        for file_kbps, lowers in ((11000, []), (10700, [N.video_settings])):
            side = "outside" if lowers else "inside"
            solution(inst.mutant(f"file_{file_kbps}kbps_{side}", lowers,
                                 f"recording encoded at {file_kbps} kbps: {side} the 12 Mbps +-10 % pass line"),
                     file_kbps=file_kbps)
        for file_gop, lowers in ((121, []), (122, [N.video_settings])):
            side = "outside" if lowers else "inside"
            solution(inst.mutant(f"gop_{file_gop}_{side}", lowers,
                                 f"keyframes every {file_gop} frames: {side} the GOP 120 +-1 pass line"),
                     file_gop=file_gop)
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()


def _ref(ctx: ScoreContext, name: str) -> np.ndarray:
    x, _rate = sf.read(str(ctx.gt_path(name)), dtype="float64", always_2d=True)
    return x.mean(axis=1)


def reference_signals(rng: np.random.Generator, dur_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Mic: speech-like bursts of 300-3000 Hz noise; desktop: continuous 100-8000 Hz noise, 12 dB quieter."""
    from scipy.signal import butter, sosfilt

    n = int(dur_s * RATE_HZ)
    mic = sosfilt(butter(4, [300, 3000], "bandpass", fs=RATE_HZ, output="sos"), rng.normal(0, 1, n))
    env = (np.sin(2 * np.pi * 1.3 * np.arange(n) / RATE_HZ) > -0.3).astype(float)
    mic = 0.25 * mic * env / np.abs(mic).max()
    desk = sosfilt(butter(4, [100, 8000], "bandpass", fs=RATE_HZ, output="sos"), rng.normal(0, 1, n))
    desk = 0.08 * desk / np.abs(desk).max()
    return mic.astype(np.float32), desk.astype(np.float32)
