"""Issue 21's sound cases rebuilt with independent tools: numpy/scipy and the ffmpeg binary, here.

Nothing below uses synth's writers or the scorers' measurement code to make a file: the inputs are read
from a synthesised instance (the task's given files), and every render is made in this test the way
an agent or a gaming script would make it, then scored with score_solution like any agent's work.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy.io import wavfile
from scipy.signal import lfilter, resample_poly

from verifiers.synth import score_solution, synth_instance

T02, T10 = "R06.07.01.03-T02", "R06.07.01.03-T10"
C_M_S = 343.0

pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="needs the ffmpeg binary")


def _ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", *args], check=True, timeout=120)


def _read(path: Path) -> tuple[np.ndarray, int]:
    """Any WAV as float64 (frames, channels), through ffmpeg (the instance's files are 24-bit)."""
    raw = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", str(path), "-f", "f64le", "-c:a",
                          "pcm_f64le", "-"], check=True, capture_output=True, timeout=60).stdout
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries",
                            "stream=sample_rate,channels", "-of", "json", str(path)], check=True, capture_output=True,
                           text=True, timeout=60).stdout
    s = json.loads(probe)["streams"][0]
    return np.frombuffer(raw, dtype="<f8").reshape(-1, int(s["channels"])), int(s["sample_rate"])


def _write(path: Path, x: np.ndarray, rate: int, codec: str = "pcm_s24le") -> Path:
    """float32 WAV by scipy, then ffmpeg to the codec a DAW would write."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".f32.wav")
    wavfile.write(tmp, rate, np.clip(x, -1, 1).astype(np.float32))
    _ffmpeg("-i", str(tmp), "-c:a", codec, str(path))
    tmp.unlink()
    return path


def _score(task: str, inst: Path, sol: Path) -> dict:
    rep = score_solution(task, inst, sol)
    rep["by_name"] = {c["name"]: c for c in rep["checks"]}
    return rep


@pytest.fixture(scope="module")
def t02(tmp_path_factory) -> Path:
    return synth_instance(T02, tmp_path_factory.mktemp("t02") / "inst", 7)


@pytest.fixture(scope="module")
def t10(tmp_path_factory) -> Path:
    return synth_instance(T10, tmp_path_factory.mktemp("t10") / "inst", 7)


def _t02_pan(inst: Path, rate: int, centre_shift_frames: float = 0.0, law_db: float = -3.0) -> np.ndarray:
    """Per-sample pan position -1..+1 following the GT screen track (clamped at the edges)."""
    gt = json.loads((inst / "gt/passby.json").read_text())
    fps, centre = gt["fps"], gt["center_frame"]
    half = (gt["x_track"][-1][0] - gt["x_track"][0][0]) / 2
    frame = np.arange(int(6.0 * rate)) / rate * fps
    return np.clip((frame - centre - centre_shift_frames) / half, -1, 1)


def _pan_render(mono: np.ndarray, p: np.ndarray, law: str) -> np.ndarray:
    if law == "sine":  # -3 dB equal power
        th = (p + 1) * np.pi / 4
        return np.stack([mono * np.cos(th), mono * np.sin(th)], axis=1)
    return np.stack([mono * (1 - p) / 2, mono * (1 + p) / 2], axis=1)  # -6 dB linear law (Pro Tools' "-6")


def test_t02_panned_white_noise_scores_nothing(t02: Path, tmp_path: Path) -> None:
    rate = 48_000
    p = _t02_pan(t02, rate)
    noise = 0.1 * np.random.default_rng(1).standard_normal(len(p))
    _write(tmp_path / "sol/output/passby.wav", _pan_render(noise, p, "sine"), rate)
    rep = _score(T02, t02, tmp_path / "sol")
    assert rep["score"] <= 5, rep["checks"]
    assert "not derived from the CAR track" in rep["by_name"]["trajectory"]["message"]


def test_t02_correct_pan_other_law_44k1_float_scores_full(t02: Path, tmp_path: Path) -> None:
    car, rate = _read(t02 / "workdir/fixtures/media/car_passby_mono.wav")
    st = _pan_render(car[:, 0], _t02_pan(t02, rate)[: len(car)], "linear")
    st = resample_poly(st, 147, 160, axis=0)  # 48 kHz -> 44.1 kHz
    _write(tmp_path / "sol/output/passby.wav", np.concatenate([np.zeros((88, 2)), st]), 44_100, "pcm_f32le")  # 2 ms late
    rep = _score(T02, t02, tmp_path / "sol")
    assert rep["score"] >= 95, rep["checks"]


def test_t02_centre_8_frames_late_loses_the_crossover_share(t02: Path, tmp_path: Path) -> None:
    car, rate = _read(t02 / "workdir/fixtures/media/car_passby_mono.wav")
    _write(tmp_path / "sol/output/passby.wav", _pan_render(car[:, 0], _t02_pan(t02, rate, 8)[: len(car)], "sine"), rate)
    rep = _score(T02, t02, tmp_path / "sol")
    assert rep["by_name"]["crossover_timing"]["score"] == 0
    assert rep["score"] <= 55, rep["checks"]


def test_t02_mp3_named_wav_fails_naming_the_container(t02: Path, tmp_path: Path) -> None:
    car, rate = _read(t02 / "workdir/fixtures/media/car_passby_mono.wav")
    wav = _write(tmp_path / "good.wav", _pan_render(car[:, 0], _t02_pan(t02, rate)[: len(car)], "sine"), rate)
    out = tmp_path / "sol/output/passby.wav"
    out.parent.mkdir(parents=True)
    _ffmpeg("-i", str(wav), "-c:a", "libmp3lame", "-b:a", "320k", "-f", "mp3", str(out))
    rep = _score(T02, t02, tmp_path / "sol")
    assert rep["score"] == 0, rep["checks"]
    assert all("MP3" in c["message"] for c in rep["checks"]), [c["message"] for c in rep["checks"]]


def _t10_geometry(inst: Path, rate: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(emission time of each heard sample, distance at it) for the GT pass-by, solved here."""
    gt = json.loads((inst / "gt/passby.json").read_text())
    tc, v, d = gt["closest_frame"] / gt["fps"], gt["speed_m_s"], gt["distance_m"]
    t = np.arange(n) / rate
    tau = t.copy()
    for _ in range(40):  # t = tau + r(tau)/c, a contraction for v < c
        tau = t - np.hypot(v * (tau - tc), d) / C_M_S
    return tau, np.hypot(v * (tau - tc), d)


def test_t10_swept_sawtooth_scores_nothing(t10: Path, tmp_path: Path) -> None:
    loop, rate = _read(t10 / "workdir/fixtures/engine_loop.wav")
    spec = np.abs(np.fft.rfft(loop[:, 0]))
    f0 = np.argmax(spec[: len(spec) // 4]) * rate / len(loop)  # the loop's strongest partial is its fundamental
    n = 8 * rate
    tau, r = _t10_geometry(t10, rate, n)
    phase = 2 * np.pi * f0 * tau
    saw = sum(np.sin(k * phase) / k for k in range(1, 60) if k * f0 < 12_000) * (2 / r)
    _write(tmp_path / "sol/output/doppler_passby.wav", np.repeat((0.8 * saw / np.abs(saw).max())[:, None], 2, 1), rate)
    rep = _score(T10, t10, tmp_path / "sol")
    assert rep["score"] <= 5, rep["checks"]
    assert "not derived from" in rep["by_name"]["doppler_pitch"]["message"]


def test_t10_correct_doppler_made_here_scores_full(t10: Path, tmp_path: Path) -> None:
    loop, rate = _read(t10 / "workdir/fixtures/engine_loop.wav")
    n = 8 * rate
    tau, r = _t10_geometry(t10, rate, n)
    pos = np.mod(tau * rate, len(loop))
    y = np.interp(pos, np.arange(len(loop) + 1), np.concatenate([loop[:, 0], loop[:1, 0]])) * (2 / r)
    # air absorption: a one-pole low-pass whose cutoff falls with distance, block by block
    out, zi = np.zeros(n), np.zeros(1)
    for a in range(0, n, 480):
        k = 1 - np.exp(-2 * np.pi * np.clip(15000 * (2 / r[a]) ** 0.6, 700, 15000) / rate)
        out[a: a + 480], zi = lfilter([k], [1, k - 1], y[a: a + 480], zi=zi)
    y = resample_poly(0.8 * out / np.abs(out).max(), 147, 160)
    _write(tmp_path / "sol/output/doppler_passby.wav", np.repeat(y[:, None], 2, 1), 44_100)
    rep = _score(T10, t10, tmp_path / "sol")
    assert rep["score"] >= 95, rep["checks"]


T03, T05, T17 = "R06.07.01.03-T03", "R06.07.01.03-T05", "R06.07.01.03-T17"


@pytest.fixture(scope="module")
def t03(tmp_path_factory) -> Path:
    return synth_instance(T03, tmp_path_factory.mktemp("t03") / "inst", 7)


def test_t03_input_copied_with_dither_scores_nothing(t03: Path, tmp_path: Path) -> None:
    out = tmp_path / "sol/output/office_bg.wav"
    out.parent.mkdir(parents=True)
    _ffmpeg("-i", str(t03 / "workdir/fixtures/media/office_fx_track.wav"), "-af",
            "aresample=dither_method=triangular", "-c:a", "pcm_s16le", str(out))
    rep = _score(T03, t03, tmp_path / "sol")
    assert rep["score"] <= 5, rep["checks"]


def test_t03_fills_with_1_5_ms_plugin_latency_score_full(t03: Path, tmp_path: Path) -> None:
    track, rate = _read(t03 / "workdir/fixtures/media/office_fx_track.wav")
    amb, _ = _read(t03 / "workdir/fixtures/amb_office.wav")
    gt = json.loads((t03 / "gt/holes.json").read_text())
    out = track.copy()
    fade_s = 10 / gt["fps"]
    for k, (a, b) in enumerate(gt["holes"]):
        lo, hi = int((a - fade_s) * rate), int((b + fade_s) * rate)
        src = amb[int((0.5 + 1.1 * k) * rate):][: hi - lo]
        t = np.arange(hi - lo) / rate
        u = np.clip(np.minimum(t, t[-1] - t) / fade_s, 0, 1)
        out[lo:hi] = out[lo:hi] * np.cos(np.pi / 2 * u)[:, None] + src * np.sin(np.pi / 2 * u)[:, None]
    late = np.concatenate([np.zeros((72, out.shape[1])), out[:-72]])  # 1.5 ms at 48 kHz
    _write(tmp_path / "sol/output/office_bg.wav", late, rate)
    rep = _score(T03, t03, tmp_path / "sol")
    assert rep["score"] >= 95, rep["checks"]


@pytest.mark.parametrize("source", ["anullsrc=r=48000:cl=stereo", "anoisesrc=r=48000:a=0.3:c=white"])
def test_t05_silence_or_noise_with_the_right_header_scores_nothing(tmp_path: Path, source: str) -> None:
    inst = synth_instance(T05, tmp_path / "inst", 7)
    out = tmp_path / "sol/output/whoosh_transition.wav"
    out.parent.mkdir(parents=True)
    _ffmpeg("-f", "lavfi", "-i", source, "-ac", "2", "-t", "1.2", "-c:a", "pcm_s24le", str(out))
    rep = _score(T05, inst, tmp_path / "sol")
    assert rep["score"] <= 5, rep["checks"]


def test_t17_silent_files_score_nothing(tmp_path: Path) -> None:
    inst = synth_instance(T17, tmp_path / "inst", 7)
    for k in range(1, 9):
        out = tmp_path / f"sol/output/steps/fs_concrete_{k:02d}.wav"
        out.parent.mkdir(parents=True, exist_ok=True)
        _ffmpeg("-f", "lavfi", "-i", "anullsrc=r=48000:cl=mono", "-t", "0.3", "-c:a", "pcm_s24le", str(out))
    rep = _score(T17, inst, tmp_path / "sol")
    assert rep["score"] <= 5, rep["checks"]


# ---- issue 21, second pass: T02 hard switch, T17 varispeed, T06 / T16 / T19 gaming --------------------


def test_t02_hard_switch_at_the_centre_loses_the_trajectory_share(t02: Path, tmp_path: Path) -> None:
    """Full left until the GT centre frame, full right after: crosses on time and reaches both extremes
    (45 + 20), but does not follow the car (issue 21: scored 100, fair 65)."""
    car, rate = _read(t02 / "workdir/fixtures/media/car_passby_mono.wav")
    p = np.sign(_t02_pan(t02, rate)[: len(car)] + 1e-12)  # -1 before the centre, +1 after
    _write(tmp_path / "sol/output/passby.wav", _pan_render(car[:, 0], p, "sine"), rate)
    rep = _score(T02, t02, tmp_path / "sol")
    assert rep["by_name"]["trajectory"]["score"] == 0, rep["by_name"]["trajectory"]
    assert rep["by_name"]["crossover_timing"]["score"] == 1 and rep["by_name"]["extremes"]["score"] == 1
    assert rep["score"] <= 65 + 1e-6, rep["checks"]


def _k_weighted_momentary_max_lufs(x: np.ndarray) -> float:
    """BS.1770-4 loudness of the loudest 400 ms window (10 ms hop, silence after the end) at 48 kHz,
    from the standard's 48 kHz K-filter coefficients (written out here, not the project's meter)."""
    b1, a1 = [1.53512485958697, -2.69169618940638, 1.19839281085285], [1.0, -1.69065929318241, 0.73248077421585]
    b2, a2 = [1.0, -2.0, 1.0], [1.0, -1.99004745483398, 0.99007225036621]
    y = lfilter(b2, a2, lfilter(b1, a1, np.concatenate([x, np.zeros(19_200)])))
    c = np.concatenate([[0.0], np.cumsum(y ** 2)])
    ends = np.arange(19_200, len(c), 480)
    return -0.691 + 10 * np.log10(np.max(c[ends] - c[ends - 19_200]) / 19_200)


def _t17_steps(inst: Path) -> tuple[list[np.ndarray], int]:
    """The take's steps cut here: onsets where the 1 ms energy first rises 40 dB over the room tone,
    1 ms lead, 0.3 s long, 20 ms fade."""
    take, rate = _read(inst / "workdir/fixtures/media/concrete_take.wav")
    x = take[:, 0]
    e = np.convolve(x ** 2, np.ones(48) / 48, mode="same")
    loud = e > 1e4 * np.median(e)
    starts = np.flatnonzero(loud & ~np.concatenate([[False], loud[:-1]]))
    starts = [s for k, s in enumerate(starts) if k == 0 or s - starts[k - 1] > rate // 4]
    out = []
    for s in starts:
        seg = x[s - 48: s - 48 + int(0.3 * rate)].copy()
        seg[-960:] *= np.linspace(1, 0, 960) ** 2
        out.append(seg)
    return out, rate


def _t17_write(sol: Path, files: list[np.ndarray], rate: int) -> None:
    for k, y in enumerate(files, start=1):
        y = y * 10 ** ((-18.0 - _k_weighted_momentary_max_lufs(y)) / 20)
        _write(sol / f"output/steps/fs_concrete_{k:02d}.wav", y[:, None], rate)


@pytest.fixture(scope="module")
def t17(tmp_path_factory) -> Path:
    return synth_instance(T17, tmp_path_factory.mktemp("t17") / "inst", 7)


def test_t17_one_take_varispeeded_eight_ways_loses_the_distinct_half(t17: Path, tmp_path: Path) -> None:
    steps, rate = _t17_steps(t17)
    speeds = (0.9, 0.94, 0.97, 1.0, 1.02, 1.05, 1.09, 1.13)  # scipy polyphase, as a sampler's varispeed
    _t17_write(tmp_path / "sol", [resample_poly(steps[0], 1000, round(1000 * sp)) for sp in speeds], rate)
    rep = _score(T17, t17, tmp_path / "sol")
    for name in ("files_format", "trims", "loudness"):
        assert rep["by_name"][name]["score"] == 1, rep["by_name"][name]
    assert rep["by_name"]["distinct_clean"]["score"] == pytest.approx(0.5), rep["by_name"]["distinct_clean"]
    assert rep["score"] == pytest.approx(90), rep["checks"]


def test_t17_eight_steps_each_varispeeded_score_full(t17: Path, tmp_path: Path) -> None:
    steps, rate = _t17_steps(t17)
    speeds = (0.9, 0.94, 0.97, 1.0, 1.02, 1.05, 1.09, 1.13)
    _t17_write(tmp_path / "sol", [resample_poly(steps[k], 1000, round(1000 * sp)) for k, sp in enumerate(speeds)], rate)
    rep = _score(T17, t17, tmp_path / "sol")
    assert rep["score"] >= 95, rep["checks"]


T06, T16, T19 = "R06.07.01.03-T06", "R06.07.01.03-T16", "R06.07.01.03-T19"


def test_t06_a_described_marker_every_fifth_frame_scores_nothing(tmp_path: Path) -> None:
    """Rows and project markers every 5 frames of the 2 min clip (±2 frames then covers every event),
    the run's audit saying Resolve wrote the project DB: before, descriptions + markers paid 25."""
    import csv

    inst = synth_instance(T06, tmp_path / "inst", 7)
    gt = json.loads((inst / "gt/events.json").read_text())
    fps, start = gt["fps"], 3600 * gt["fps"]
    sol = tmp_path / "sol"
    (sol / "output").mkdir(parents=True)
    (sol / "state").mkdir()
    cats = ["impact", "handling", "movement", "ambience"]
    frames = range(0, 120 * fps, 5)
    with open(sol / "output/spotting_list.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["timecode", "category", "description"])
        for k, f in enumerate(frames):
            g = start + f
            w.writerow([f"{g // (3600 * fps):02d}:{g // (60 * fps) % 60:02d}:{g // fps % 60:02d}:{g % fps:02d}",
                        cats[k % 4], "a sound"])
    (sol / "state/resolve_markers.json").write_text(json.dumps([{"frame": start + f, "name": "m", "note": "n"}
                                                               for f in frames]))
    shutil.copy(inst / "oracle/events.jsonl", sol / "events.jsonl")  # the harness's audit of a Resolve run
    rep = _score(T06, inst, sol)
    assert rep["score"] <= 5, rep["checks"]


def test_t16_noise_vocals_of_the_right_length_in_sync_score_nothing(tmp_path: Path) -> None:
    """Five white-noise bursts, each exactly its mouth-open span, placed at the mouth-open frames in the
    mix (the same samples), the attack loudest: no animal source in any of them."""
    inst = synth_instance(T16, tmp_path / "inst", 7)
    gt = json.loads((inst / "gt/creature.json").read_text())
    rate, fps = 48_000, gt["fps"]
    rng = np.random.default_rng(3)
    mix = np.zeros(int((gt["vocals"][-1]["close_frame"] + 24) / fps * rate))
    for v in gt["vocals"]:
        n = round((v["close_frame"] - v["open_frame"]) / fps * rate)
        burst = rng.standard_normal(n) * (0.3 if v["name"] == "attack" else 0.1)
        burst *= np.minimum(1, np.arange(n) / 960) * np.minimum(1, (n - np.arange(n)) / 3840)
        _write(tmp_path / f"sol/output/creature_vox/{v['name']}.wav", burst[:, None], rate)
        at = round(v["open_frame"] / fps * rate)
        mix[at: at + n] += burst
    _write(tmp_path / "sol/output/creature_vox.wav", np.stack([mix, mix], axis=1), rate)
    rep = _score(T16, inst, tmp_path / "sol")
    assert rep["score"] <= 5, rep["checks"]


@pytest.mark.parametrize("source", ["anullsrc=r=48000:cl=stereo", "anoisesrc=r=48000:a=0.2:c=white"])
def test_t19_silence_or_noise_mix_and_stems_score_nothing(tmp_path: Path, source: str) -> None:
    """Mix and three stems from ffmpeg's generators, 20 s (the instance's length): the true-peak half
    and a chance background 'change' paid 7.5-15 before."""
    inst = synth_instance(T19, tmp_path / "inst", 7)
    sol = tmp_path / "sol/output"
    (sol / "stems").mkdir(parents=True)
    for rel in ("robot_fx.wav", "stems/foley.wav", "stems/fx.wav", "stems/bg.wav"):
        _ffmpeg("-f", "lavfi", "-i", source, "-t", "20", "-c:a", "pcm_s24le", str(sol / rel))
    rep = _score(T19, inst, tmp_path / "sol")
    assert rep["score"] <= 5, rep["checks"]


# ---- issue 21, third pass: T16 time-preserving pitch/formant shifts ---------------------------------

#: T16's reference design (layers as source, semitones, gain), the notes' pitch per vocalization: the GT's
#: f0 ranges sit around the dominant layer at these shifts
_T16_DESIGN = {"idle": [("walrus", 2, 1.0), ("lion", -3, 0.7)], "alert": [("pig", -2, 1.0), ("lion", 4, 0.9)],
               "attack": [("lion", -2, 1.0), ("walrus", 5, 0.8)], "hurt": [("pig", 1, 1.0), ("walrus", 7, 0.9)],
               "death": [("lion", -5, 1.0), ("pig", -9, 0.6)]}
_T16_LOUD = {"idle": 0.35, "alert": 0.45, "attack": 0.8, "hurt": 0.45, "death": 0.4}


def _shift_ffmpeg(src: Path, semitones: int, how: str, dest: Path) -> np.ndarray:
    """A time-preserving pitch shift by ffmpeg: Rubber Band (formants moved or preserved) or a rate
    change undone by atempo (WSOLA)."""
    r = 2 ** (semitones / 12)
    af = {"rubberband": f"rubberband=pitch={r}", "rubberband_formant": f"rubberband=pitch={r}:formant=preserved",
          "wsola": f"asetrate={48_000 * r},aresample=48000,atempo={1 / r}"}[how]
    _ffmpeg("-i", str(src), "-af", af, "-ar", "48000", "-c:a", "pcm_f32le", str(dest))
    return _read(dest)[0][:, 0]


def _t16_shifted_delivery(inst: Path, sol: Path, hows: tuple[str, ...], sources: dict[str, Path]) -> None:
    """The five vocals, vocal k's layers shifted by hows[k % len(hows)], the mix their sum at the GT frames."""
    gt = json.loads((inst / "gt/creature.json").read_text())
    rate, fps = 48_000, gt["fps"]
    mix = np.zeros(int((gt["vocals"][-1]["close_frame"] + 24) / fps * rate))
    (sol / "tmp").mkdir(parents=True, exist_ok=True)
    for i, v in enumerate(gt["vocals"]):
        name, n, how = v["name"], round((v["close_frame"] - v["open_frame"]) / fps * rate), hows[i % len(hows)]
        out = np.zeros(n)
        for j, (s, k, g) in enumerate(_T16_DESIGN[name]):
            x = _shift_ffmpeg(sources[s], k, how, sol / "tmp" / f"{name}_{j}.wav")[round((0.3 + 0.2 * j) * rate):]
            out[: min(n, len(x))] += g * x[:n]
        t = np.arange(n) / rate
        out *= np.minimum(1, t / 0.02) * np.minimum(1, (t[-1] - t) / 0.08)
        out *= _T16_LOUD[name] / np.max(np.abs(out))
        _write(sol / f"output/creature_vox/{name}.wav", out[:, None], rate)
        at = round(v["open_frame"] / fps * rate)
        mix[at: at + n] += out
    _write(sol / "output/creature_vox.wav", np.stack([mix, mix], axis=1), rate)
    shutil.rmtree(sol / "tmp")


@pytest.fixture(scope="module")
def t16(tmp_path_factory) -> Path:
    return synth_instance(T16, tmp_path_factory.mktemp("t16") / "inst", 7)


def test_t16_time_preserving_pitch_shifts_of_the_sources_score_full(t16: Path, tmp_path: Path) -> None:
    """The reference design made with time-preserving shifters instead of varispeed (Rubber Band with
    formants moved and preserved, asetrate + atempo, vocal by vocal; one scoring for the three): the
    sources are found, every share paid (before: no source found in any vocal, 25 = the rubric)."""
    src = {s: t16 / f"workdir/fixtures/animal_sources/{s}.wav" for s in ("lion", "pig", "walrus")}
    _t16_shifted_delivery(t16, tmp_path / "sol", ("rubberband_formant", "wsola", "rubberband"), src)
    shutil.copy(t16 / "oracle/events.jsonl", tmp_path / "sol/events.jsonl")  # the rubric judgment
    rep = _score(T16, t16, tmp_path / "sol")
    assert rep["by_name"]["layering"]["score"] == 1, rep["by_name"]["layering"]
    assert rep["score"] >= 95, rep["checks"]


def test_t16_shifted_foreign_voices_are_not_the_sources(t16: Path, tmp_path: Path) -> None:
    """Three voices that are not the given recordings (numpy: harmonic series with vibrato and breath, at
    the sources' pitches), shifted by Rubber Band as the design shifts its layers: the spectrogram test
    finds none of the given animals in them (measured at the test's level, not through a whole scoring:
    the scorer's varispeed test already refuses such voices, see the noise-vocal test above)."""
    from verifiers.measure.shifted_match import MIN_SHIFTED_MATCH, log_spectrogram, shifted_match

    rng, rate = np.random.default_rng(5), 48_000
    t = np.arange(2 * rate) / rate
    given = {s: _read(t16 / f"workdir/fixtures/animal_sources/{s}.wav")[0][:, 0] for s in ("lion", "pig", "walrus")}
    specs = {s: log_spectrogram(x, rate) for s, x in given.items()}
    for (s, f0), semis in zip((("lion", 110.0), ("pig", 480.0), ("walrus", 70.0)), (-3, 4, 2), strict=True):
        ph = 2 * np.pi * np.cumsum(f0 * (1 + 0.02 * np.sin(2 * np.pi * 5.3 * t + rng.uniform(0, 6)))) / rate
        x = sum(np.sin(k * ph + rng.uniform(0, 6)) / k for k in range(1, 12)) + 0.2 * rng.standard_normal(len(t))
        src = _write(tmp_path / f"foreign_{s}.wav", (0.3 * x / np.max(np.abs(x)))[:, None], rate)
        y = _shift_ffmpeg(src, semis, "rubberband", tmp_path / f"shifted_{s}.wav")[: int(1.2 * rate)]
        for name, spec in specs.items():
            m = shifted_match(y, spec, rate, (0.0, len(y) / rate))
            assert m.score < MIN_SHIFTED_MATCH, (s, name, m)
