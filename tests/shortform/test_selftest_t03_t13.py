"""T03 (Chinese captions) and T13 (caption versions): the caption-measuring helpers on known
drawings, bad exports, and each verifier's selftest on its seed-fixed miniature instance."""

from __future__ import annotations

import numpy as np
import pytest

from verifiers.base import GTError
from verifiers.measure.errors import MediaError
from verifiers.scoring import score_task
from verifiers.synth import selftest_task, synth_instance
from verifiers.synthkit.captions import CJK_FONT, LATIN_FONT, draw_caption, srt_text
from verifiers.synthkit.shortform_video import write_video
from verifiers.tasks.shortform._shared.caption_track import (
    frames_at,
    hollow_boxes,
    is_white,
    lcs_len,
    measure_look,
    readable,
    reference_hollow_boxes,
    text_key,
    track_captions,
)
from verifiers.tasks.shortform._shared.srt import parse_srt


def _footage(h=360, w=640, n=1, seed=0):
    """Mid-grey textured frames (a caption must differ from them)."""
    rng = np.random.default_rng(seed)
    base = rng.integers(60, 140, size=(h // 20, w // 20, 3)).astype(np.uint8)
    f = np.kron(base, np.ones((20, 20, 1), np.uint8))
    return [f.copy() for _ in range(n)]


def test_srt_round_trip_and_garbage():
    cues = parse_srt(srt_text([(0.5, 2.25, "Hola\nmundo"), (3.0, 4.125, "Adiós")]))
    assert [(c.start_s, c.end_s) for c in cues] == [(0.5, 2.25), (3.0, 4.125)]
    assert cues[0].text == "Hola mundo"
    with pytest.raises(GTError):
        parse_srt("1\nnot a time line\nhello\n")
    with pytest.raises(GTError):
        parse_srt("1\n00:00:02,000 --> 00:00:01,000\nbackwards\n")


def test_text_keys_what_ocr_can_judge():
    assert text_key("¿Mantén el horizonte?", strip_accents=True) == "mantenelhorizonte"
    assert text_key("ＡＢ１，２") == "ab12"  # full width folded, punctuation dropped
    # kana are not judged (the model knows 5 of them), kanji are
    assert readable("夕方の光で人物を写す") == "夕方光人物写"
    assert lcs_len("夕方光人物写", "夕方光x人物写寸") == 6
    assert lcs_len("夕方光人物写", "夕方人物写") == 5


def test_look_tells_white_stroked_from_yellow_and_unstroked():
    f = _footage()[0]
    ok = measure_look(draw_caption(f, ["今天我们去西湖散步"], font_px=30, baseline_y_px=306), f)
    yellow = measure_look(draw_caption(f, ["今天我们去西湖散步"], font_px=30, baseline_y_px=306,
                                       fill=(255, 220, 0)), f)
    bare = measure_look(draw_caption(f, ["今天我们去西湖散步"], font_px=30, baseline_y_px=306, stroke_px=0), f)
    assert is_white(ok.fill_rgb) and not is_white(yellow.fill_rgb)
    assert ok.stroke_ratio > 0.25 and ok.stroke_luma < 80
    assert bare.stroke_ratio < 0.05
    # one line of ~0.9 em ink whose bottom sits within 2 px of the 306-px baseline, centred
    (line,) = ok.lines
    assert 24 <= line.height_px <= 31
    assert abs(line.y1 - 306) <= 3
    assert abs((line.x0 + line.x1) / 2 - 320) <= 3


def test_two_lines_are_two_lines():
    f = _footage()[0]
    look = measure_look(draw_caption(f, ["湖边的柳树已经发芽了", "远处的山也慢慢变绿了"], font_px=24,
                                     baseline_y_px=306), f)
    assert len(look.lines) == 2
    assert look.lines[0].y1 < look.lines[1].y0


def test_a_codec_speck_far_from_the_caption_does_not_stretch_its_box():
    """T13 seed 5, CRF 23: a speck of a few changed pixels at the top put a bottom caption outside
    the safe area when the box was that of every changed pixel."""
    f = _footage(h=480, w=270)[0]
    clean = draw_caption(f, ["目に焦点を合わせる"], font_px=24, baseline_y_px=400)
    specked = clean.copy()
    specked[40:42, 100:104] = 255  # 8 px, kept by caption_mask (>= 3 px), far from the text
    a, b = measure_look(clean, f), measure_look(specked, f)
    assert b.mask[40:42, 100:104].all()  # the speck is in the mask...
    assert b.bbox == a.bbox and a.bbox[1] > 300  # ...but not in the caption's box


def test_tofu_boxes_are_counted_and_real_glyphs_are_not():
    f = _footage(640, 360)[0]
    text = "水平線を真っ直ぐ保つ"
    tofu = measure_look(draw_caption(f, [text], font_px=30, baseline_y_px=500, font=LATIN_FONT), f)
    real = measure_look(draw_caption(f, [text], font_px=30, baseline_y_px=500, font=CJK_FONT), f)
    h = max(ln.height_px for ln in tofu.lines)
    assert hollow_boxes(tofu.fill, 0.6 * h) == len(text)
    assert hollow_boxes(real.fill, 0.6 * max(ln.height_px for ln in real.lines)) == 0
    # 口 is a hollow box in any font: the reference rendering expects it
    assert reference_hollow_boxes(["入口"], 40, 24) == 1


def test_track_finds_back_to_back_captions_to_the_frame(tmp_path):
    fps = 24.0
    frames = _footage(180, 320, n=48)
    src = write_video(tmp_path / "src.mp4", frames, fps)
    cues = [(6, 20, "Light from the side"), (20, 34, "Focus on the eyes")]  # frames, back to back
    out = []
    for i, f in enumerate(frames):
        cue = next((c for c in cues if c[0] <= i < c[1]), None)
        out.append(f if cue is None else draw_caption(f, [cue[2]], font_px=16, baseline_y_px=150, font=LATIN_FONT))
    exp = write_video(tmp_path / "exp.mp4", out, fps)
    track = track_captions(exp, src)
    assert [(round(s.start_s * fps), round(s.end_s * fps)) for s in track.spans] == [(6, 20), (20, 34)]
    got = list(frames_at(exp, [s.mid_s for s in track.spans]))
    assert [round(t * fps) for t, _rgb in got] == [13, 27]
    with pytest.raises(MediaError):
        list(frames_at(exp, [99.0]))


def test_t03_garbage_export_fails_cleanly(tmp_path):
    inst = synth_instance("R06.04.01.04-T03", tmp_path / "t03", seed=3)
    out = inst / "workdir/out/vlog_zh_sub.mp4"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 8)
    rep = score_task("R06.04.01.04-T03", inst / "workdir", inst / "gt").to_dict()
    assert rep["score"] == 0
    assert all(c["status"] == "fail" and "vlog_zh_sub.mp4" in c["message"] for c in rep["checks"])


@pytest.mark.slow
@pytest.mark.parametrize("task_id", ["R06.04.01.04-T03", "R06.04.01.04-T13"])
def test_selftest_passes(task_id):
    res = selftest_task(task_id)
    assert res.ok, res.problems
    assert res.oracle >= 99 and res.nothing <= 5
    assert len(res.mutants) >= 5 and all(m["ok"] for m in res.mutants.values())


def test_t13_a_broken_japanese_export_costs_only_its_checks(tmp_path):
    import shutil

    inst = synth_instance("R06.04.01.04-T13", tmp_path / "t13", seed=4)
    shutil.copytree(inst / "oracle/out", inst / "workdir/out")
    (inst / "workdir/out/tips_ja.mp4").write_bytes(b"not a video at all")
    rep = score_task("R06.04.01.04-T13", inst / "workdir", inst / "gt").to_dict()
    by = {c["name"]: c for c in rep["checks"]}
    assert by["english_unchanged"]["score"] == 1 and by["spanish"]["score"] == 1
    assert by["japanese"]["status"] == "fail" and "tips_ja.mp4" in by["japanese"]["message"]
    assert by["timing_identical"]["score"] == 0.5  # Spanish keeps the timing, Japanese cannot be judged
