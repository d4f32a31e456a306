"""The shared pieces of short-form scorers: opening the output, the 1080p short-side check, and
turning per-frame "which clip" labels into segments (the cut times of an edit)."""

from __future__ import annotations

from verifiers.base import Checks, ScoreContext
from verifiers.catalog import load_catalog
from verifiers.synthkit.shortform_video import clip_frames, write_video
from verifiers.tasks.shortform._shared.clips import ClipMatcher, segments
from verifiers.tasks.shortform._shared.export import check_short_side, open_output

FPS = 24.0


TASK = "R06.04.01.04-T10"


def _checks() -> Checks:
    return Checks(load_catalog().get(TASK))


def test_segments_finds_the_clips_and_the_cut_frame(tmp_path):
    a = clip_frames(11, 20, 160, 90, FPS)
    b = clip_frames(22, 24, 160, 90, FPS)
    src_a = write_video(tmp_path / "a.mp4", a, FPS)
    src_b = write_video(tmp_path / "b.mp4", b, FPS)
    out = write_video(tmp_path / "out.mp4", a[2:12] + b[5:19], FPS)
    labelled, segs = segments(ClipMatcher({"a": src_a, "b": src_b}), out, FPS)
    assert len(labelled) == 24
    assert [s.label for s in segs] == ["a", "b"]
    assert [s.frames for s in segs] == [10, 14]
    assert abs(segs[1].start_s - 10 / FPS) < 1e-3  # the cut, at output frame 10
    assert abs(segs[1].src_start_s - 5 / FPS) < 1.5 / FPS  # b entered at its 6th frame
    assert labelled[3].rgb is not None  # frames kept for later checks (colour, OCR)


def test_short_side_check_takes_either_orientation_and_the_instance_scale():
    checks = _checks()
    facts = {"width_px": 180, "height_px": 320, "fps": 24.0, "duration_s": 16.0}
    assert check_short_side(checks, "export_spec", facts, 1 / 6)  # 1080 * 1/6 = 180
    assert checks.results["export_spec"].score == 1.0
    checks = _checks()
    assert not check_short_side(checks, "export_spec", {**facts, "width_px": 214, "height_px": 120}, 1 / 6)
    res = checks.results["export_spec"]
    assert res.score == 0.0 and "short side 120 px, want 180" in res.message


def test_open_output_fails_every_check_when_the_export_is_missing_or_garbage(tmp_path):
    ctx = ScoreContext(load_catalog().get(TASK), tmp_path, tmp_path / "gt")
    checks = _checks()
    assert open_output(ctx, checks, "device/Downloads/market.mp4") is None
    assert {r.status for r in checks.results.values()} == {"fail"}
    assert len(checks.results) == len(checks.task.checks)

    bad = tmp_path / "device/Downloads/market.mp4"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"garbage" * 300)
    checks = _checks()
    assert open_output(ctx, checks, "device/Downloads/market.mp4") is None
    assert all("market.mp4" in r.message for r in checks.results.values())

    write_video(bad, clip_frames(5, 12, 160, 90, FPS), FPS)
    checks = _checks()
    path, facts = open_output(ctx, checks, "device/Downloads/market.mp4")
    assert path == bad and not checks.results
    assert (facts["width_px"], facts["height_px"], facts["fps"]) == (160, 90, 24.0)
    assert abs(facts["duration_s"] - 0.5) < 0.05
