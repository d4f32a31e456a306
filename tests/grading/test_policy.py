"""The grading family's scoring policy on small arrays: content identity (frame by frame, a still
frame and black fail), chroma-aware guards (4:2:0 vs 4:2:2 vs exact RGB; thin regions judged on
luma), and reading an x264 render's own rate control for the export floor."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.ndimage import gaussian_filter

from verifiers.base import AgentOutputError
from verifiers.measure.export_floor import RenderProfile, x264_rate_control
from verifiers.tasks.grading._shared.identity import identity_corr, require_identity
from verifiers.tasks.grading._shared.shot import Shot, guarded


def _panning_shot(n: int = 12, h: int = 48, w: int = 64) -> np.ndarray:
    rng = np.random.default_rng(3)
    base = gaussian_filter(rng.standard_normal((h, w + 3 * n)), 1.5)
    base = (base - base.min()) / (base.max() - base.min())
    frames = np.stack([base[:, 3 * i: 3 * i + w] for i in range(n)])
    return np.clip(np.round(np.stack([frames * 200 + 20] * 3, axis=-1)), 0, 255).astype(np.uint8)


def _profile(pix_fmt: str, codec: str = "h264") -> RenderProfile:
    return RenderProfile(codec=codec, pix_fmt=pix_fmt, profile="", bit_rate=1_000_000, colorspace=1,
                         color_range=1, height=48)


def test_identity_passes_a_grade_and_fails_still_black_and_shuffled() -> None:
    src = _panning_shot()
    graded = np.clip(src.astype(int) * [1.1, 0.9, 0.8], 0, 255).astype(np.uint8)  # a colour grade
    assert require_identity(Shot(src, graded, {}), "out.mov")["frames_derived_pct"] == 100.0
    for bad in (np.repeat(src[:1], len(src), axis=0), np.zeros_like(src), src[::-1].copy()):
        with pytest.raises(AgentOutputError, match="not derived from the given shot"):
            require_identity(Shot(src, bad, {}), "out.mov")
    assert identity_corr(Shot(src, np.zeros_like(src), {})).max() == 0.0


def test_guard_follows_chroma_subsampling_and_thin_regions_go_luma_only() -> None:
    src = _panning_shot(2)
    mask = np.zeros(src.shape[:3], dtype=bool)
    mask[:, 10:30, 10:40] = True  # 20 × 30 region
    thin = np.zeros_like(mask)
    thin[:, 20:23, 5:60] = True  # 3 px tall strip
    exact = Shot(src, src, {}, profile=_profile("rgb24", "png"))
    s420 = Shot(src, src, {}, profile=_profile("yuv420p"))
    s422 = Shot(src, src, {}, profile=_profile("yuv422p10le", "prores"))
    assert exact.guard_px() == (0, 0) and s420.guard_px() == (3, 3) and s422.guard_px() == (1, 3)
    region, flags = guarded(s420, mask)
    assert region[0].sum() == (20 - 6) * (30 - 6) and not flags.any()
    region, flags = guarded(s422, mask)
    assert region[0].sum() == (20 - 2) * (30 - 6)
    region, flags = guarded(s420, thin)
    assert flags.all() and np.array_equal(region, thin)  # kept whole, judged on L* only
    assert guarded(exact, thin)[1].sum() == 0


def test_x264_rate_control_from_its_settings_string() -> None:
    assert x264_rate_control("cabac=1 ref=3 rc=crf mbtree=1 crf=23.0 qcomp=0.60") == ["-crf", "23.0"]
    assert x264_rate_control("rc=abr mbtree=1 bitrate=2500 ratetol=1.0") == ["-b:v", "2500k"]
    assert x264_rate_control("") == []


def _audit_ctx(tmp_path, writes: list[dict]):
    from verifiers.base import ScoreContext
    from verifiers.catalog import load_catalog

    events = [{"source": "audit", "kind": "write", "payload": w} for w in writes]
    return ScoreContext(load_catalog().get("R06.04.02.02-T01"), tmp_path, tmp_path, events)


def test_grade_files_written_outside_the_grading_app_are_named(tmp_path) -> None:
    """The allow-list rule (catalog app_files/app_writers, verifiers/provenance.py): a LUT written by
    python is named; Resolve (any platform's program name) and non-grade files are not."""
    from verifiers.provenance import outside_app_writes

    ctx = _audit_ctx(tmp_path, [{"path": "luts/look.cube", "process": "python3"},
                                {"path": "state/grade.drx", "exe": "/opt/resolve/bin/resolve"},
                                {"path": "state/grade.drx", "process": "DaVinci Resolve.exe"},
                                {"path": "out/umbrella.mov", "process": "ffmpeg"}])
    assert outside_app_writes(ctx) == ["luts/look.cube by python3"]
    assert outside_app_writes(_audit_ctx(tmp_path, [])) == []
