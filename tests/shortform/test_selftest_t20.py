"""T20 (Douyin kettle video): the verifier proves itself on its miniature, the instance is
byte-reproducible, and the pieces it is built from measure what they claim."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from verifiers.base import GTError, ScoreContext
from verifiers.catalog import load_catalog
from verifiers.measure.frames import iter_frames
from verifiers.scoring import score_task
from verifiers.synth import INSTANCE_CACHE_ENV, selftest_task, synth_instance
from verifiers.synthkit.shortform_video import write_video
from verifiers.synthkit.t20_douyin import at_loudness, draw_arrow, draw_sticker, kettle_shot, voice_and_music
from verifiers.tasks.shortform._shared.export import instance_duration_s
from verifiers.tasks.shortform._shared.srt import parse_srt
from verifiers.tasks.shortform.t20_douyin_product import OUTPUT, find_arrows, judge_loudness, sticker_reads

TASK = "R06.04.01.04-T20"


def _digests(root):
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*"))
            # cases/ holds the export and baseline folders the self-test builds from the instance
            # (verifiers.synthcases.build_case); synthesis itself writes only cases.json
            if p.is_file() and p.relative_to(root).parts[0] != "cases"}


@pytest.mark.slow
def test_selftest_and_same_seed_same_bytes(tmp_path, monkeypatch):
    monkeypatch.delenv(INSTANCE_CACHE_ENV, raising=False)  # both instances really synthesised, never copied
    res = selftest_task(TASK, keep=tmp_path / "a")
    assert res.ok, res.problems
    assert res.oracle >= 99 and res.nothing <= 5
    assert set(res.mutants) == {"exported_30fps", "subtitle_typo", "sticker_10_frames_late", "arrow_80px_off",
                                "mix_at_minus_10", "true_peak_over", "near_miss_cer_inside", "near_miss_cer_outside"}
    again = synth_instance(TASK, tmp_path / "b" / TASK, seed=0)
    first = _digests(tmp_path / "a" / TASK)
    assert len(first) > 10 and first == _digests(again)

    # a truncated or garbage export is the agent's failure, reported per check, never a crash
    inst = tmp_path / "a" / TASK
    good = (inst / "oracle" / OUTPUT).read_bytes()
    out = inst / "workdir" / OUTPUT
    out.parent.mkdir(parents=True, exist_ok=True)
    for bad in (good[: len(good) // 3], b"\x00\x00\x00\x18ftypmp42" + b"junk" * 900):
        out.write_bytes(bad)
        rep = score_task(TASK, inst / "workdir", inst / "gt").to_dict()
        assert not any("crashed" in c["message"] for c in rep["checks"]), rep["checks"]
        assert rep["score"] < 60 and all(c["message"] for c in rep["checks"] if c["score"] < 1)
    write_video(out, [f.rgb for f in iter_frames(inst / "oracle" / OUTPUT, max_frames=150)], 60.0)  # 2.5 s, silent
    rep = {c["name"]: c for c in score_task(TASK, inst / "workdir", inst / "gt").to_dict()["checks"]}
    assert rep["loudness"]["score"] == 0 and "no audio" in rep["loudness"]["message"]
    assert rep["price_sticker"]["score"] == 0 and "not read" in rep["price_sticker"]["message"]
    assert rep["format_subtitles"]["evidence"]["format"] == {"size": True, "fps": True, "duration": False}


def test_parse_srt_reads_cues_and_rejects_garbage():
    text = "\ufeff1\r\n00:00:00,100 --> 00:00:01,200\r\n这款电热水壶\r\n\r\n2\n00:00:01.2 --> 00:00:02,400\n弯嘴\n设计\n"
    cues = parse_srt(text)
    assert [(c.start_s, c.end_s, c.text) for c in cues] == [(0.1, 1.2, "这款电热水壶"), (1.2, 2.4, "弯嘴 设计")]
    with pytest.raises(GTError, match=r"vo_zh\.srt"):
        parse_srt("1\n00:00:01,000 -> 00:00:02,000\nhi\n", "input/vo_zh.srt")
    with pytest.raises(GTError, match="ends before"):
        parse_srt("1\n00:00:03,000 --> 00:00:02,000\nhi\n")
    with pytest.raises(GTError, match="no cues"):
        parse_srt("\n\n")


def test_instance_duration_comes_from_render_json_only_when_given(tmp_path):
    ctx = ScoreContext(load_catalog().get(TASK), tmp_path, tmp_path / "gt")
    assert instance_duration_s(ctx, 30) == 30.0
    (tmp_path / "gt").mkdir()
    (tmp_path / "gt/render.json").write_text('{"scale": 0.25}')
    assert instance_duration_s(ctx, 30) == 30.0
    (tmp_path / "gt/render.json").write_text('{"scale": 0.25, "duration_s": 6.0}')
    assert instance_duration_s(ctx, 30) == 6.0
    (tmp_path / "gt/render.json").write_text('{"duration_s": "long"}')
    with pytest.raises(GTError, match="duration_s"):
        instance_duration_s(ctx, 30)


@pytest.mark.parametrize("tail, tip", [((150, 120), (60, 200)), ((40, 300), (140, 300)), ((200, 380), (200, 300))])
def test_arrow_tip_is_found_in_any_direction_and_a_sticker_is_no_arrow(tail, tip):
    src, _ = kettle_shot(7, 270, 480, "spout")
    out = draw_sticker(draw_arrow(src, tail, tip), "限时 ¥129", (190, 60), 16)
    arrows = find_arrows(out, src, 0.25)
    assert len(arrows) == 1  # the sticker (a rounded box) has no head
    x, y = arrows[0]["tip_px"]
    assert np.hypot(x - tip[0], y - tip[1]) <= 2.0
    assert find_arrows(src, src, 0.25) == []


def test_sticker_text_allows_only_a_misread_currency_sign():
    assert sticker_reads("限时 ¥129", "限时 ¥129")
    assert sticker_reads("限时￥129", "限时 ¥129")  # fullwidth sign
    assert sticker_reads("限时?129", "限时 ¥129")
    assert not sticker_reads("限时 ¥139", "限时 ¥129")
    assert not sticker_reads("¥129", "限时 ¥129")


def test_loudness_half_credit_when_only_the_true_peak_is_over(tmp_path):
    sr = 48_000
    mix = at_loudness(voice_and_music(3.0, [0.1 + 0.08 * i for i in range(30)], seed=3, sample_rate_hz=sr), -14.0, sr)
    t = np.arange(int(0.003 * sr)) / sr
    hot = mix.copy()
    hot[sr: sr + len(t)] = 0.977 * np.sin(2 * np.pi * 2000 * t)  # a 3-ms blip at −0.2 dBFS
    frames = [np.zeros((32, 32, 3), np.uint8)] * 3
    scores = {}
    for name, audio in {"ok": mix, "hot": hot}.items():
        path = write_video(tmp_path / f"{name}.mp4", frames, 1.0, audio=audio, sample_rate_hz=sr)
        spec = load_catalog().get(TASK).check("loudness")
        scores[name] = judge_loudness(path, spec.typed, spec.curve)
    assert scores["ok"].score == 1.0, scores["ok"].message
    assert scores["hot"].score == 0.5 and scores["hot"].evidence["true_peak_dbtp"] > -1
    assert abs(scores["hot"].evidence["integrated_lufs"] + 14) <= 1
