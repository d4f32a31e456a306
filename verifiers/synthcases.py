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

Cases are built once per instance (under `<instance>/cases/<name>/`) and scored like mutants.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
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


def other_oracle(task_id: str, seed: int) -> Path:
    """That task's synthetic instance (oracle included), synthesised once per process."""
    global _OTHER_ROOT
    key = (task_id, seed)
    if key not in _OTHER:
        from verifiers.synth import synth_instance

        if _OTHER_ROOT is None:
            _OTHER_ROOT = Path(tempfile.mkdtemp(prefix="tally-other-oracles-"))
        _OTHER[key] = synth_instance(task_id, _OTHER_ROOT / f"{task_id}-{seed}", seed)
    return _OTHER[key]


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


def make_file(inst: Path, recipe: str, dest: Path, seed: int) -> None:
    """Write `dest` by one recipe (see the module doc)."""
    kind, _, arg = recipe.partition(":")
    dest.parent.mkdir(parents=True, exist_ok=True)
    if kind == "copy":
        shutil.copy2(inst / arg, dest)
    elif kind == "export":
        profile, _, rel = arg.partition(":")
        _ffmpeg(["-i", str(inst / rel), "-an", *EXPORT_PROFILES[profile], str(dest)])
    elif kind in ("black", "still"):
        src = inst / arg
        w, h, rate, n = _probe(src)
        if kind == "black":
            _ffmpeg(["-f", "lavfi", "-i", f"color=c=black:s={w}x{h}:r={rate}", "-frames:v", str(n),
                     *EXPORT_PROFILES["h264_crf18"], str(dest)])
        else:
            _ffmpeg(["-i", str(src), "-vf", f"select=eq(n\\,0),loop=loop={n - 1}:size=1:start=0,setpts=N/({rate})/TB,"
                     + _vf("yuv420p"), "-frames:v", str(n), "-r", rate, "-an", "-c:v", "libx264", "-preset", "medium",
                     "-crf", "18", *_BT709, str(dest)])
    elif kind in AV_RECIPES:
        AV_RECIPES[kind](inst, arg, dest)
    elif kind == "other_oracle":
        task_id, _, rel = arg.partition(":")
        shutil.copy2(other_oracle(task_id, seed) / "oracle" / rel, dest)
    else:
        raise ValueError(f"unknown case recipe {recipe!r}")


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


def _av_export(inst: Path, arg: str, dest: Path) -> None:
    profile, _, rel = arg.partition(":")
    _ffmpeg(["-i", str(inst / rel), *AV_EXPORT_PROFILES[profile], "-movflags", "+faststart", str(dest)])


def _av_black(inst: Path, arg: str, dest: Path) -> None:
    """Black frames and digital silence, same size, rate and frame count as the file (H.264 + AAC)."""
    w, h, rate, n = _probe(inst / arg)
    _ffmpeg(["-f", "lavfi", "-i", f"color=c=black:s={w}x{h}:r={rate}", "-f", "lavfi", "-i",
             "anullsrc=r=48000:cl=stereo", "-frames:v", str(n), "-shortest",
             *AV_EXPORT_PROFILES["h264_crf18_aac"], str(dest)])


def _av_still(inst: Path, arg: str, dest: Path) -> None:
    """The file's first frame held for its length, its own sound kept (H.264 + AAC)."""
    _w, _h, rate, n = _probe(inst / arg)
    _ffmpeg(["-i", str(inst / arg), "-vf", f"select=eq(n\\,0),loop=loop={n - 1}:size=1:start=0,"
             f"setpts=N/({rate})/TB," + _vf("yuv420p"), "-frames:v", str(n), "-r", rate, "-c:v", "libx264",
             "-preset", "medium", "-crf", "18", *_BT709, "-c:a", "aac", "-b:a", "128k", str(dest)])


#: recipe kind → writer (inst, argument, destination); see AV_EXPORT_PROFILES
#:   avexport:<profile>:<path>   re-export keeping the sound;  avblack:<path>  black + silence;
#:   avstill:<path>              first frame held, sound kept
AV_RECIPES = {"avexport": _av_export, "avblack": _av_black, "avstill": _av_still}
