"""Issue 21 acceptance, rebuilt independently of synth's writers: a correct T13 grade made here with
numpy/scikit-image on the decoded GT source and delivered by ffmpeg as H.264 yuv420p scores ≥ 95;
the untouched source handed back (as it is and exported by ffmpeg) scores ≈ 0."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy.ndimage import binary_dilation
from skimage.color import lab2rgb, rgb2lab

from verifiers.scoring import score_task
from verifiers.synth import synth_instance

T13 = "R06.04.02.02-T13"
pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")


def _ffmpeg_frames(path: Path) -> tuple[np.ndarray, str]:
    """The source's frames as rgb24 by ffmpeg itself (accurate flags), and its frame rate."""
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                            "stream=width,height,r_frame_rate", "-of", "csv=p=0", str(path)],
                           capture_output=True, text=True, check=True).stdout.strip().split(",")
    w, h, rate = int(probe[0]), int(probe[1]), probe[2]
    raw = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", str(path), "-f", "rawvideo",
                          "-pix_fmt", "rgb24", "-sws_flags", "accurate_rnd+full_chroma_int", "-"],
                         capture_output=True, check=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3), rate


def _h264(frames: np.ndarray, rate: str, dest: Path, crf: int = 18) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    _n, h, w, _ = frames.shape
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24",
                    "-s", f"{w}x{h}", "-r", rate, "-i", "-", "-vf",
                    "scale=out_color_matrix=bt709:out_range=tv:flags=accurate_rnd+full_chroma_int,format=yuv420p",
                    "-c:v", "libx264", "-crf", str(crf), "-colorspace", "bt709", "-color_primaries", "bt709",
                    "-color_trc", "bt709", "-color_range", "tv", str(dest)],
                   input=np.ascontiguousarray(frames).tobytes(), check=True)
    return dest


@pytest.fixture(scope="module")
def t13(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synth_instance(T13, tmp_path_factory.mktemp("t13") / "inst", seed=11)


def _score(inst: Path, tmp: Path, render: Path) -> dict:
    work = tmp / "work"
    shutil.copytree(inst / "workdir", work)
    shutil.copy2(render, work / "out" / "diner_sign.mov")
    return score_task(T13, work, inst / "gt").to_dict()


def test_t13_correct_grade_built_here_and_exported_h264_scores_95(t13: Path, tmp_path: Path) -> None:
    frames, rate = _ffmpeg_frames(t13 / "gt" / "source.mov")
    with np.load(t13 / "gt" / "masks.npz") as z:
        sign, actors = z["sign"], z["actors"]
    window = np.stack([binary_dilation(m, iterations=2) for m in sign]) & ~actors
    lab = rgb2lab(frames / 255.0)
    # the seed's note: sign luminance −20…−40 %, chroma −30…−50 %: L* × 0.88, a*/b* × 0.62 inside the window
    lab[..., 0] = np.where(window, lab[..., 0] * 0.88, lab[..., 0])
    lab[..., 1:] = np.where(window[..., None], lab[..., 1:] * 0.62, lab[..., 1:])
    graded = np.clip(np.round(lab2rgb(lab) * 255), 0, 255).astype(np.uint8)
    graded = np.where(window[..., None], graded, frames)
    rep = _score(t13, tmp_path, _h264(graded, rate, tmp_path / "graded.mov"))
    assert rep["score"] >= 95, [(c["name"], c["score"], c["message"]) for c in rep["checks"]]


def test_t13_unedited_source_exported_h264_scores_about_0(t13: Path, tmp_path: Path) -> None:
    frames, rate = _ffmpeg_frames(t13 / "gt" / "source.mov")
    rep = _score(t13, tmp_path, _h264(frames, rate, tmp_path / "plain.mov"))
    assert rep["score"] <= 5, [(c["name"], c["score"], c["message"]) for c in rep["checks"]]
    assert "actors_untouched" in {c["name"] for c in rep["checks"] if c["score"] == 0}


def test_t13_still_frame_is_not_derived_from_the_shot(t13: Path, tmp_path: Path) -> None:
    frames, rate = _ffmpeg_frames(t13 / "gt" / "source.mov")
    rep = _score(t13, tmp_path, _h264(np.repeat(frames[:1], len(frames), axis=0), rate, tmp_path / "still.mov"))
    assert rep["score"] == 0
    assert all("not derived from the given shot" in c["message"] for c in rep["checks"])
