"""Self-test cases beyond oracle / do-nothing / mutants: realistic exports and gaming baselines.

Why: an oracle written by the same code that scores it proves little. These cases are made by
independent tools (ffmpeg, the real one) at self-test time from the instance's own files:

- export: the oracle's artifact re-exported the way a real app delivers it (H.264 yuv420p at a
  CRF, ProRes 422 10-bit), BT.709-tagged. It must still score ≥ its bound (95 by default).
- baseline: a gaming attempt built from the instance (the unedited input exported, black of the
  right length and header, the input's first frame repeated, another task's oracle). It must
  score ≤ its bound (5 by default).

A verifier's synth registers cases through `InstanceWriter.export_case` / `baseline_case`; each
is a list of (artifact path, recipe) steps. Recipes (all generic, any family with video files):

    copy:<instance-relative path>        the file as it is (e.g. gt/source.mov)
    export:<profile>:<path>              ffmpeg re-export of a file, profile in EXPORT_PROFILES
    black:<path>                         black frames, same size, rate and frame count, H.264
    still:<path>                         the file's first frame repeated for its length, H.264
    other_oracle:<task id>:<artifact>    that task's oracle artifact (synthesised once per process)

Recipes for app project/config files (JSON, XML), any family:

    json_variant:<path>     the JSON as another app version saves it: every object's keys in reverse
                            order, an unknown key in every object that has an id/name/type, every
                            integer version field (schemaVersion, version) one higher, other indentation
    json_garbage:<path>     the same structure with every value replaced by a random one of its type
    xml_variant:<path>      the XML with attributes in reverse order, an unknown attribute on every
                            element, an unknown child of the root, <Version> one higher, other indentation
    xml_garbage:<path>      the same elements with every attribute value and text replaced by random ones
    wav_float32:<path>      a WAV's samples as 32-bit float
    export_av:<path>        picture and sound as OBS records them: H.264 CRF 20 + AAC 160 kbps
    wav_silence:<path>      digital silence with a WAV's rate, channels, length and sample format

Audio recipes (the sound family; WAVs in, ffmpeg or numpy out, header facts kept from the source):

    audio_export:<profile>:<path>        ffmpeg re-export, profile in AUDIO_EXPORT_PROFILES (44.1 kHz
                                         16-bit TPDF 2 ms late; 48 kHz 24-bit 2 ms late; 32-bit float)
    audio_silence:<path>                 digital silence, same rate, channels, bit depth and length
    audio_noise:<path>                   white noise at -20 dBFS RMS, same header and length
    audio_envelope_noise:<path>          white noise carrying the file's own per-channel 10 ms RMS
                                         envelope (panned noise for a pan, the right swell, not the input)
    audio_mp3_named:<path>               the file encoded as MP3 (libmp3lame 192k) under the WAV's name
    audio_dual_mono:<path>               a mono file copied to L and R, 16-bit with TPDF dither

Video with its sound (short-form exports; profiles in AV_EXPORT_PROFILES):

    avexport:<profile>:<path>   re-export keeping the sound (H.264 + AAC in MP4)
    avblack:<path>              black frames and digital silence, same size, rate and frame count
    avstill:<path>              the first frame held for the file's length, its sound kept

Every recipe is one entry of RECIPES with one signature: (instance, argument, destination, seed).

Cases are built once per instance (under `<instance>/cases/<name>/`) and scored like mutants.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

CASES_FILE = "cases.json"
EXPORT_MIN = 95.0
BASELINE_MAX = 5.0

_BT709 = ["-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv"]


def _vf(pix_fmt: str) -> str:
    # setparams: ffmpeg 5.1's prores_ks ignores -colorspace and writes what the frames carry
    return (f"scale=out_color_matrix=bt709:out_range=tv:flags=accurate_rnd+full_chroma_int,format={pix_fmt},"
            "setparams=colorspace=bt709:color_primaries=bt709:color_trc=bt709:range=tv")


#: profile → ffmpeg output arguments (video only; audio is dropped: these are picture checks)
EXPORT_PROFILES: dict[str, list[str]] = {
    "h264_crf18": ["-vf", _vf("yuv420p"), "-c:v", "libx264", "-preset", "medium", "-crf", "18", *_BT709],
    "h264_crf23": ["-vf", _vf("yuv420p"), "-c:v", "libx264", "-preset", "medium", "-crf", "23", *_BT709],
    "prores422": ["-vf", _vf("yuv422p10le"), "-c:v", "prores_ks", "-profile:v", "2", *_BT709],
}


def _ffmpeg(args: list[str]) -> None:
    if shutil.which("ffmpeg") is None:
        raise RuntimeError("ffmpeg is not installed: export/baseline self-test cases need it")
    done = subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", *args],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"ffmpeg failed: {done.stderr.strip()[-400:]}")


def _probe(path: Path) -> tuple[int, int, str, int]:
    """(width, height, rate as a fraction string, frame count) of a video's first stream."""
    import av

    with av.open(str(path)) as c:
        vs = c.streams.video[0]
        n = vs.frames or sum(1 for _ in c.decode(vs))
        rate = vs.average_rate or vs.guessed_rate or 25
        return vs.codec_context.width, vs.codec_context.height, f"{rate.numerator}/{rate.denominator}", int(n)


_OTHER: dict[tuple[str, int], Path] = {}
_OTHER_ROOT: Path | None = None
#: (task, seed) whose entry in _OTHER is a whole synthesised instance (not only a copied oracle)
_WHOLE: set[tuple[str, int]] = set()


def other_oracle(task_id: str, seed: int) -> Path:
    """That task's synthetic instance (oracle included), synthesised once per process."""
    global _OTHER_ROOT
    key = (task_id, seed)
    if key not in _OTHER:
        from verifiers.synth import synth_instance

        if _OTHER_ROOT is None:
            _OTHER_ROOT = Path(tempfile.mkdtemp(prefix="tally-other-oracles-"))
        _OTHER[key] = synth_instance(task_id, _OTHER_ROOT / f"{task_id}-{seed}", seed)
        _WHOLE.add(key)
    return _OTHER[key]


def reuse_instance(task_id: str, seed: int, dest: Path) -> bool:
    """Copy the whole instance `other_oracle` already synthesised for (task, seed) to `dest`.

    Why: a self-test's "another task's oracle" baseline synthesises the next task's whole instance
    (a synth cannot write its oracle alone); when that task's own self-test runs later in the same
    process, the synth (deterministic for a seed) would write the very same files again. False when
    there is none to copy (the caller synthesises)."""
    key = (task_id, seed)
    if key not in _WHOLE:
        return False
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(_OTHER[key], dest, symlinks=True)
    return True


def remember_instance(task_id: str, seed: int, inst: Path) -> None:
    """Offer an instance already synthesised (its oracle) as 'another task's oracle' (copied)."""
    global _OTHER_ROOT
    if (task_id, seed) in _OTHER:
        return
    if _OTHER_ROOT is None:
        _OTHER_ROOT = Path(tempfile.mkdtemp(prefix="tally-other-oracles-"))
    dest = _OTHER_ROOT / f"{task_id}-{seed}"
    if not dest.exists():
        shutil.copytree(inst / "oracle", dest / "oracle")
    _OTHER[(task_id, seed)] = dest


def _held_first_frame(n: int, rate: str) -> str:
    """The -vf chain that holds a clip's first frame for `n` frames at `rate` (the `still` baselines).

    The frame is converted (`_vf`) once, before it is repeated: the conversion is a pure function of
    the frame, so the encoder gets the same pixels and tags as when each copy was converted (the bytes
    are equal: tests/foundation/test_synthcases_filters.py), for 1/n of the scaler's time."""
    return f"select=eq(n\\,0),{_vf('yuv420p')},loop=loop={n - 1}:size=1:start=0,setpts=N/({rate})/TB"


#: black needs no colour conversion: (Y, Cb, Cr) = (16, 128, 128) in every matrix at TV range, so the
#: black baselines skip `_vf`'s scaler (~80 % of their encode) and only tag the frames; the bytes are
#: those the scaler gives (tests/foundation/test_synthcases_filters.py)
_BLACK_VF = "format=yuv420p,setparams=colorspace=bt709:color_primaries=bt709:color_trc=bt709:range=tv"


def _black_profile(args: list[str]) -> list[str]:
    """An H.264 profile's arguments with `_BLACK_VF` for its -vf (the profile's first two arguments).

    A profile that does not start with its -vf would get `_BLACK_VF` in place of other arguments:
    refused (ValueError, not `assert`, which `python -O` drops)."""
    if len(args) < 2 or args[0] != "-vf":
        raise ValueError(f"an export profile must start with -vf <filters> to be used for black frames: {args!r}")
    return ["-vf", _BLACK_VF, *args[2:]]


def make_file(inst: Path, recipe: str, dest: Path, seed: int) -> None:
    """Write `dest` by one recipe (see the module doc)."""
    kind, _, arg = recipe.partition(":")
    if kind not in RECIPES:
        raise ValueError(f"unknown case recipe {recipe!r}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    RECIPES[kind](inst, arg, dest, seed)


def _copy(inst: Path, arg: str, dest: Path, seed: int) -> None:
    shutil.copy2(inst / arg, dest)


def _export(inst: Path, arg: str, dest: Path, seed: int) -> None:
    profile, _, rel = arg.partition(":")
    _ffmpeg(["-i", str(inst / rel), "-an", *EXPORT_PROFILES[profile], str(dest)])


def _black(inst: Path, arg: str, dest: Path, seed: int) -> None:
    w, h, rate, n = _probe(inst / arg)
    _ffmpeg(["-f", "lavfi", "-i", f"color=c=black:s={w}x{h}:r={rate}", "-frames:v", str(n),
             *_black_profile(EXPORT_PROFILES["h264_crf18"]), str(dest)])


def _still(inst: Path, arg: str, dest: Path, seed: int) -> None:
    _w, _h, rate, n = _probe(inst / arg)
    _ffmpeg(["-i", str(inst / arg), "-vf", _held_first_frame(n, rate), "-frames:v", str(n), "-r", rate, "-an",
             "-c:v", "libx264", "-preset", "medium", "-crf", "18", *_BT709, str(dest)])


def _other_oracle(inst: Path, arg: str, dest: Path, seed: int) -> None:
    task_id, _, rel = arg.partition(":")
    shutil.copy2(other_oracle(task_id, seed) / "oracle" / rel, dest)


def load_cases(inst: Path) -> list[dict[str, Any]]:
    path = inst / CASES_FILE
    return json.loads(path.read_text()) if path.exists() else []


def build_case(inst: Path, case: dict[str, Any], seed: int) -> Path:
    """The case's solution folder (built once: reused when it exists)."""
    folder = inst / "cases" / case["name"]
    done = folder / ".built"
    if done.exists():
        return folder
    if folder.exists():
        shutil.rmtree(folder)
    if case["kind"] == "export" and case.get("with_oracle", True):
        shutil.copytree(inst / "oracle", folder, dirs_exist_ok=True)  # project files etc. of the oracle
    folder.mkdir(parents=True, exist_ok=True)
    for rel, recipe in case["files"]:
        make_file(inst, recipe, folder / rel, seed)
    done.write_text("")
    return folder


# ---- project/config files (JSON, XML): honest variants and garbage of the right type ---------------

#: keys that mark a JSON object as an app's object (not a map keyed by names, e.g. OBS's hotkeys)
_OBJECT_KEYS = ("id", "name", "type", "nodeType", "uuid", "sourceId")
#: integer fields that carry a format version in the apps' files (Streamlabs nodes, OBS/plugin configs)
_VERSION_KEYS = ("schemaVersion", "version")


def _json_variant(obj: Any) -> Any:
    if isinstance(obj, list):
        return [_json_variant(v) for v in obj]
    if not isinstance(obj, dict):
        return obj
    out = {k: (v + 1 if k in _VERSION_KEYS and isinstance(v, int) and not isinstance(v, bool) else _json_variant(v))
           for k, v in reversed(list(obj.items()))}
    if any(k in obj for k in _OBJECT_KEYS):
        out["unknownKeyOfANewerVersion"] = {"enabled": False, "items": []}
    return out


def json_variant(inst: Path, arg: str, dest: Path, seed: int) -> None:
    """The file as another version of the app saves it: same meaning, other bytes."""
    src = inst / arg
    dest.write_text(json.dumps(_json_variant(json.loads(src.read_text(encoding="utf-8"))), indent=4), encoding="utf-8")


def _json_garbage(obj: Any, rng: Any) -> Any:
    if isinstance(obj, list):
        return [_json_garbage(v, rng) for v in obj]
    if isinstance(obj, dict):
        return {k: _json_garbage(v, rng) for k, v in obj.items()}
    if isinstance(obj, bool):
        return bool(rng.integers(2))
    if isinstance(obj, int):
        return int(rng.integers(-5000, 5000))
    if isinstance(obj, float):
        return float(rng.uniform(-5000, 5000))
    if isinstance(obj, str):
        return "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz0123456789 /._-"), size=max(1, len(obj))))
    return obj


def json_garbage(inst: Path, arg: str, dest: Path, seed: int) -> None:
    """Noise of the right type: the file's structure (keys kept) with random values."""
    import numpy as np

    src = inst / arg
    rng = np.random.default_rng(seed)
    dest.write_text(json.dumps(_json_garbage(json.loads(src.read_text(encoding="utf-8")), rng), indent=2),
                    encoding="utf-8")


def xml_variant(inst: Path, arg: str, dest: Path, seed: int) -> None:
    """The XML as another version of the app saves it: same elements and values, other bytes."""
    import xml.etree.ElementTree as ET

    src = inst / arg
    root = ET.fromstring(src.read_bytes())
    for el in root.iter():
        attrs = list(el.attrib.items())
        el.attrib.clear()
        el.attrib.update(dict(reversed(attrs)))
        el.set("UnknownAttributeOfANewerVersion", "0")
    for el in root.iter("Version"):   # a format version as text (vMix presets): one higher
        if el.text and el.text.strip().isdigit():
            el.text = str(int(el.text) + 1)
    ET.SubElement(root, "UnknownElementOfANewerVersion", {"Enabled": "False"}).text = "x"
    ET.indent(root, space="\t")
    dest.write_bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True))


def xml_garbage(inst: Path, arg: str, dest: Path, seed: int) -> None:
    """Noise of the right type: the same elements, every attribute value and text random
    (digits stay digits, other text becomes random letters)."""
    import xml.etree.ElementTree as ET

    import numpy as np

    src = inst / arg
    rng = np.random.default_rng(seed)

    def noise(v: str) -> str:
        if v.strip().lstrip("-").isdigit():
            return str(int(rng.integers(0, 100)))
        return "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz ()"), size=max(1, len(v))))

    root = ET.fromstring(src.read_bytes())
    for el in root.iter():
        for k, v in el.attrib.items():
            el.set(k, noise(v))
        if el.text and el.text.strip():
            el.text = noise(el.text)
    dest.write_bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True))


# ---- recordings an app leaves as WAV (streaming: OBS's audio recordings) -----------------------------

def wav_float32(inst: Path, arg: str, dest: Path, seed: int) -> None:
    """The same samples as a 32-bit float WAV (what OBS writes with a float audio format)."""
    import soundfile as sf

    src = inst / arg
    x, rate = sf.read(str(src), dtype="float64", always_2d=True)
    sf.write(str(dest), x.astype("float32"), rate, subtype="FLOAT")


def wav_silence(inst: Path, arg: str, dest: Path, seed: int) -> None:
    """Digital silence with the file's rate, channels, length and sample format."""
    import numpy as np
    import soundfile as sf

    src = inst / arg
    info = sf.info(str(src))
    sf.write(str(dest), np.zeros((info.frames, info.channels)), info.samplerate, subtype=info.subtype)


def export_av(inst: Path, arg: str, dest: Path, seed: int) -> None:
    """Picture and sound re-exported as OBS records them: H.264 yuv420p CRF 20 (BT.709) and AAC 160 kbps,
    in the container `dest` names (MKV shifts the video by AAC's 1024-sample priming, MP4 an edit list)."""
    src = inst / arg
    _ffmpeg(["-i", str(src), "-vf", _vf("yuv420p"), "-c:v", "libx264", "-preset", "medium", "-crf", "20", *_BT709,
             "-c:a", "aac", "-b:a", "160k", "-ar", "48000", str(dest)])



# --- audio cases (sound family) -------------------------------------------------------------------

#: profile → ffmpeg output arguments for a WAV re-export of a WAV render
#: (a plugin's reported-but-uncompensated latency delays the whole render 2 ms; the length is kept)
AUDIO_EXPORT_PROFILES: dict[str, list[str]] = {
    # 44.1 kHz (soxr), 2 ms late, TPDF-dithered to 16 bit: the harshest ordinary delivery in one file
    "daw_44k1": ["-af", "adelay=delays=2:all=1,apad,aresample=44100:resampler=soxr:dither_method=triangular",
                 "-c:a", "pcm_s16le"],
    # the seed's own rate (48 kHz), 24-bit, 2 ms late: for tasks whose seed fixes the format
    "daw_48k": ["-af", "adelay=delays=2:all=1,apad", "-c:a", "pcm_s24le"],
    "float32": ["-c:a", "pcm_f32le"],
    # 44.1 kHz 16-bit TPDF on time: where the seed's own line forbids a latency (T15: onsets ±1 ms)
    "tpdf_44k1": ["-af", "aresample=44100:resampler=soxr:dither_method=triangular", "-c:a", "pcm_s16le"],
}
#: one export per task by default: each costs a full scoring (the suite's time budget); the harshest
#: ordinary delivery covers the others (T02 runs all three)
DEFAULT_AUDIO_EXPORTS = ("daw_44k1",)


def _audio_export(inst: Path, arg: str, dest: Path, seed: int) -> None:
    profile, _, rel = arg.partition(":")
    src = inst / rel
    _ffmpeg(["-i", str(src), *AUDIO_EXPORT_PROFILES[profile], "-t", f"{_wav_facts(src)[3]:.6f}", str(dest)])


def _wav_facts(path: Path) -> tuple[int, int, str, float]:
    """(rate, channels, libsndfile subtype, seconds) of a WAV."""
    import soundfile as sf

    info = sf.info(str(path))
    return int(info.samplerate), int(info.channels), str(info.subtype), info.frames / float(info.samplerate)


def _write_like(src: Path, dest: Path, data: Any) -> None:
    import soundfile as sf

    rate, _ch, subtype, _s = _wav_facts(src)
    sf.write(str(dest), data, rate, subtype=subtype)


def _audio_silence(inst: Path, arg: str, dest: Path, seed: int) -> None:
    import numpy as np

    src = inst / arg
    rate, ch, _sub, secs = _wav_facts(src)
    _write_like(src, dest, np.zeros((round(secs * rate), ch)))


def _audio_noise(inst: Path, arg: str, dest: Path, seed: int) -> None:
    import numpy as np

    src = inst / arg
    rate, ch, _sub, secs = _wav_facts(src)
    _write_like(src, dest, np.clip(0.1 * np.random.default_rng(seed).standard_normal((round(secs * rate), ch)), -1, 1))


def _audio_envelope_noise(inst: Path, arg: str, dest: Path, seed: int) -> None:
    import numpy as np
    import soundfile as sf

    src = inst / arg
    x, rate = sf.read(str(src), always_2d=True)
    hop = max(1, rate // 100)
    n_blk = -(-len(x) // hop)
    pad = np.zeros((n_blk * hop, x.shape[1]))
    pad[: len(x)] = x
    env = np.sqrt((pad.reshape(n_blk, hop, -1) ** 2).mean(axis=1))  # (blocks, channels) RMS
    t_blk = (np.arange(n_blk) + 0.5) * hop
    env_s = np.stack([np.interp(np.arange(len(x)), t_blk, env[:, c]) for c in range(x.shape[1])], axis=1)
    noise = np.random.default_rng(seed).standard_normal(x.shape)
    _write_like(src, dest, np.clip(noise * env_s, -1, 1))


def _audio_dual_mono(inst: Path, arg: str, dest: Path, seed: int) -> None:
    src = inst / arg
    _ffmpeg(["-i", str(src), "-af", "pan=stereo|c0=c0|c1=c0,aresample=dither_method=triangular", "-c:a", "pcm_s16le",
             str(dest)])


def _audio_mp3_named(inst: Path, arg: str, dest: Path, seed: int) -> None:
    src = inst / arg
    tmp = dest.with_suffix(".tmp.mp3")
    _ffmpeg(["-i", str(src), "-c:a", "libmp3lame", "-b:a", "192k", str(tmp)])
    tmp.replace(dest)




def audio_cases(inst: Any, artifact: str, *, exports: tuple[str, ...] = DEFAULT_AUDIO_EXPORTS,
                unedited: str | None = None, other: tuple[str, str] | None = None, envelope: bool = True) -> None:
    """Register the generic audio cases of one WAV artifact on an InstanceWriter: the oracle's
    exports (≥ 95), silence / white noise / envelope noise with its header and an MP3 under its
    name (≤ 5), the unedited input (`unedited`, instance-relative) and another task's oracle
    (`other` = (task id, its artifact)) when given."""
    src = f"oracle/{artifact}"
    for profile in exports:
        inst.export_case(f"wav_{profile}", [(artifact, f"audio_export:{profile}:{src}")],
                         why=f"the oracle re-exported by ffmpeg ({profile})")
    inst.baseline_case("silence", [(artifact, f"audio_silence:{src}")], why="digital silence, the oracle's header")
    inst.baseline_case("white_noise", [(artifact, f"audio_noise:{src}")], why="white noise, the oracle's header")
    if envelope:
        inst.baseline_case("envelope_noise", [(artifact, f"audio_envelope_noise:{src}")],
                           why="white noise with the oracle's per-channel envelope (right shape, not the input)")
    inst.baseline_case("mp3_named_wav", [(artifact, f"audio_mp3_named:{src}")],
                       why="the oracle as MP3 under the WAV's name: the seed asks for a WAV")
    if unedited:
        inst.baseline_case("unedited_input", [(artifact, f"copy:{unedited}")], why="the given input, unedited")
    if other:
        inst.baseline_case("other_task_oracle", [(artifact, f"other_oracle:{other[0]}:{other[1]}")],
                           why=f"{other[0]}'s oracle render under this task's name")


# ---- video with its sound (short-form exports): phones and CapCut deliver H.264 + AAC in MP4 ----

#: profile → ffmpeg output arguments, audio kept as AAC (adds priming and an edit list in MP4)
AV_EXPORT_PROFILES: dict[str, list[str]] = {
    "h264_crf18_aac": [*EXPORT_PROFILES["h264_crf18"], "-c:a", "aac", "-b:a", "128k"],
    "h264_crf23_aac": [*EXPORT_PROFILES["h264_crf23"], "-c:a", "aac", "-b:a", "128k"],
    # constant bitrate at a platform's upload rate (TikTok/Reels ~ 6 Mb/s at 1080x1920), scaled to
    # the miniature's pixel count (1/36 at 1/6 scale: 170 kb/s), nal-hrd CBR as phone encoders write
    "h264_cbr_aac": ["-vf", _vf("yuv420p"), "-c:v", "libx264", "-preset", "medium", "-b:v", "170k",
                     "-minrate", "170k", "-maxrate", "170k", "-bufsize", "340k", "-x264-params", "nal-hrd=cbr",
                     *_BT709, "-c:a", "aac", "-b:a", "128k"],
    # 29.97 fps NTSC-rate delivery (frames resampled by ffmpeg's fps filter)
    "h264_2997_aac": ["-vf", "fps=30000/1001," + _vf("yuv420p"), "-c:v", "libx264", "-preset", "medium",
                      "-crf", "20", *_BT709, "-c:a", "aac", "-b:a", "128k"],
}


def _av_export(inst: Path, arg: str, dest: Path, seed: int) -> None:
    profile, _, rel = arg.partition(":")
    _ffmpeg(["-i", str(inst / rel), *AV_EXPORT_PROFILES[profile], "-movflags", "+faststart", str(dest)])


def _av_black(inst: Path, arg: str, dest: Path, seed: int) -> None:
    """Black frames and digital silence, same size, rate and frame count as the file (H.264 + AAC)."""
    w, h, rate, n = _probe(inst / arg)
    _ffmpeg(["-f", "lavfi", "-i", f"color=c=black:s={w}x{h}:r={rate}", "-f", "lavfi", "-i",
             "anullsrc=r=48000:cl=stereo", "-frames:v", str(n), "-shortest",
             *_black_profile(AV_EXPORT_PROFILES["h264_crf18_aac"]), str(dest)])


def _av_still(inst: Path, arg: str, dest: Path, seed: int) -> None:
    """The file's first frame held for its length, its own sound kept (H.264 + AAC)."""
    _w, _h, rate, n = _probe(inst / arg)
    _ffmpeg(["-i", str(inst / arg), "-vf", _held_first_frame(n, rate), "-frames:v", str(n), "-r", rate, "-c:v", "libx264",
             "-preset", "medium", "-crf", "18", *_BT709, "-c:a", "aac", "-b:a", "128k", str(dest)])


#: recipe kind -> writer(instance, the recipe's argument after "kind:", destination, seed); the module
#: doc lists what each writes
Recipe = Callable[[Path, str, Path, int], None]
RECIPES: dict[str, Recipe] = {
    "copy": _copy, "export": _export, "black": _black, "still": _still, "other_oracle": _other_oracle,
    "json_variant": json_variant, "json_garbage": json_garbage, "xml_variant": xml_variant, "xml_garbage": xml_garbage,
    "wav_float32": wav_float32, "wav_silence": wav_silence, "export_av": export_av,
    "audio_export": _audio_export, "audio_silence": _audio_silence, "audio_noise": _audio_noise,
    "audio_envelope_noise": _audio_envelope_noise, "audio_mp3_named": _audio_mp3_named,
    "audio_dual_mono": _audio_dual_mono,
    "avexport": _av_export, "avblack": _av_black, "avstill": _av_still,
}
