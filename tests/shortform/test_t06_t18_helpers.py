"""Unit tests of the T06/T18 measurements: fuzzy copy search, caption fill colour, logo search,
per-stem loudness by projection, OCR of frames read in a row, and the GT time scale."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from verifiers.base import GTError, ScoreContext
from verifiers.catalog import load_catalog
from verifiers.measure.colour import delta_e2000
from verifiers.measure.loudness import measure_loudness
from verifiers.measure.ocr import TextBox, normalise
from verifiers.synthkit import shortform_ad_explainer as A
from verifiers.tasks.shortform._shared.ad_measure import (
    find_logo,
    fuzzy_cer,
    hex_lab,
    read_text_tiled,
    stem_levels,
    text_fill_lab,
    time_scale,
    window_mask,
)

RATE = 24_000


def test_fuzzy_cer_finds_a_line_inside_other_text():
    hay = normalise("SALE ends soon Brews in 60s tap below")
    assert fuzzy_cer(hay, normalise("Brews in 60s")) == 0.0
    assert fuzzy_cer(hay, normalise("Brews in 70s")) == pytest.approx(1 / 10)  # "brewsin70s": one substitution in 10
    assert fuzzy_cer(hay, normalise("Fits any bag")) > 0.4


def test_text_fill_is_the_drawn_colour_not_the_plate_or_the_edges():
    rng = np.random.default_rng(1)
    frame = rng.integers(0, 255, size=(200, 300, 3), dtype=np.uint8)  # busy video behind the plate
    colour = "#3FA9F5"
    out = A.draw_text(frame, "Brews in 60s", x_px=20, y_px=80, size_px=28, colour=A.hex_rgb(colour))
    w, h = A.text_size("Brews in 60s", 28)
    lab = text_fill_lab(out, TextBox("x", 19, 79, 21 + w, 81 + h, 1.0))
    assert lab is not None
    assert float(delta_e2000(lab, hex_lab(colour))) < 1.0
    wrong = "#3794D7"  # 0.88 x the brand blue: ΔE2000 ≈ 6.7
    assert float(delta_e2000(lab, hex_lab(wrong))) > 5.0


def test_logo_found_at_an_unknown_scale_and_not_in_footage():
    logo = A.logo_image(96, [(63, 169, 245), (255, 194, 26)])
    rng = np.random.default_rng(2)
    frame = np.full((480, 270, 3), 240, np.uint8)
    side = 121  # 45 % of the frame width, not one of the search steps exactly
    import cv2

    frame[150:150 + side, 70:70 + side] = cv2.resize(logo, (side, side), interpolation=cv2.INTER_AREA)
    m = find_logo(frame, logo)
    assert m.score > 0.9 and abs(m.width_frac - side / 270) < 0.02 and m.delta_e2000 < 3
    assert abs(m.box_px[0] - 70) <= 2 and abs(m.box_px[1] - 150) <= 2
    footage = rng.integers(0, 255, size=(480, 270, 3), dtype=np.uint8)
    assert find_logo(footage, logo).score < 0.5
    # a transparent logo composited on a coloured card: only its own pixels (alpha) are compared
    alpha = np.where((logo < 250).any(axis=2), 255, 0).astype(np.uint8)
    card = np.full((480, 270, 3), (40, 90, 60), np.uint8)
    a = cv2.resize(alpha, (side, side), interpolation=cv2.INTER_AREA)[..., None] / 255.0
    region = card[200:200 + side, 60:60 + side].astype(np.float64)
    card[200:200 + side, 60:60 + side] = (cv2.resize(logo, (side, side)) * a + region * (1 - a)).astype(np.uint8)
    on_card = find_logo(card, logo, mask=alpha)
    assert on_card.score > 0.9 and on_card.delta_e2000 < 3
    assert find_logo(card, logo).score < 0.7  # without the alpha the dark card spoils the match
    # a grey look-alike: the logo's shapes in the wrong colours correlates in grey, not in colour
    fake = card.copy()
    fake[200:200 + side, 60:60 + side] = 255 - fake[200:200 + side, 60:60 + side][..., ::-1]
    assert find_logo(fake, logo, mask=alpha).delta_e2000 > 10


def test_stem_levels_measure_each_stem_like_a_loudness_meter():
    rng = np.random.default_rng(3)
    speech = [[1.0, 3.0], [4.0, 6.0]]
    vo = A.voice_over(rng, 7.0, speech, RATE)
    music = A.music_bed(rng, 9.0, RATE) * 0.05
    lag_s, duck_db = 0.35, -14.0
    n = round(8.0 * RATE)
    lag = round(lag_s * RATE)
    vo_placed = np.zeros(n)
    vo_placed[lag:lag + len(vo)] = vo[: n - lag]
    m = music[:n] * A.gain_curve(n, speech, duck_db, RATE, offset_s=lag_s)
    mix = np.stack([vo_placed + m, vo_placed + m], axis=1)  # identical stereo channels: +3 dB vs mono
    lv = stem_levels(mix, [vo, music], RATE)
    assert lv.lags_s[0] == pytest.approx(lag_s, abs=1e-3) and lv.lags_s[1] == pytest.approx(0, abs=1e-3)
    spans = [(a + lag_s, b + lag_s) for a, b in speech]
    gaps = ~window_mask(lv.t_s, [(a - 0.2, b + 0.2) for a, b in spans])
    under = window_mask(lv.t_s, spans, 0.2)
    # the gap level equals a BS.1770 meter's reading of the music alone over those windows (stereo)
    w = round(lv.window_s * RATE)
    idx = np.concatenate([np.arange(i * w, (i + 1) * w) for i in np.nonzero(gaps)[0]])
    ref_lufs = measure_loudness(np.stack([m[idx], m[idx]], axis=1), RATE).integrated_lufs
    assert lv.lufs(1, gaps) == pytest.approx(ref_lufs, abs=0.3)
    assert lv.lufs(1, gaps) - lv.lufs(1, under) == pytest.approx(-duck_db, abs=0.5)
    assert lv.lufs(0, gaps) < lv.lufs(0, under) - 30  # no voice in the gaps


def test_ocr_in_a_row_reports_frame_coordinates():
    texts = ["Coffee to go", "Only $29.99"]
    frames, glyphs = [], []
    for i, text in enumerate(texts):
        f = np.full((480, 270, 3), 90 + 30 * i, np.uint8)
        y = 100 + 60 * i
        frames.append(A.draw_text(f, text, x_px=30, y_px=y, size_px=24, colour=(255, 194, 26)))
        w, h = A.text_size(text, 24)
        glyphs.append((30, y, 30 + w, y + h))
    tiled = read_text_tiled(frames)
    for text, (gx0, gy0, gx1, gy1), boxes in zip(texts, glyphs, tiled, strict=True):
        assert normalise(" ".join(b.text for b in boxes)) == normalise(text)
        x0, y0 = min(b.x0 for b in boxes), min(b.y0 for b in boxes)
        x1, y1 = max(b.x1 for b in boxes), max(b.y1 for b in boxes)
        # the box holds the drawn glyphs, in this frame's coordinates, with a few px of padding
        assert gx0 - 8 <= x0 <= gx0 + 1 and gy0 - 8 <= y0 <= gy0 + 1
        assert gx1 - 1 <= x1 <= gx1 + 8 and gy1 - 1 <= y1 <= gy1 + 8


def test_time_scale_from_gt(tmp_path: Path):
    task = load_catalog().get("R06.04.01.04-T18")
    ctx = ScoreContext(task, tmp_path, tmp_path)
    assert time_scale(ctx) == 1.0  # a real task's GT: durations as the catalog says
    (tmp_path / "render.json").write_text(json.dumps({"scale": 0.25, "time_scale": 0.25}))
    assert time_scale(ctx) == 0.25
    (tmp_path / "render.json").write_text(json.dumps({"time_scale": 4}))
    with pytest.raises(GTError):
        time_scale(ctx)


def test_stock_found_when_filled_or_fitted_onto_a_vertical_canvas(tmp_path: Path):
    from verifiers.synthkit.shortform_video import clip_frames, write_video
    from verifiers.tasks.shortform._shared.stock_footage import StockMatcher, placements

    fps = 12.0
    clips = {name: clip_frames(seed, 24, 320, 180, fps) for seed, name in ((11, "solar"), (12, "wind"))}
    for name, frames in clips.items():
        write_video(tmp_path / "stock" / f"{name}.mp4", frames, fps)
    p = placements(clips["solar"][0], 90, 160)
    assert set(p) == {"fill", "fit"} and p["fill"].shape == p["fit"].shape == (160, 90, 3)
    assert p["fit"][:40].max() == 0  # bars above and below the fitted 16:9 picture
    # export: solar filled (with a caption over its lower half), then wind fitted
    out = [A.draw_text(placements(f, 180, 320)["fill"], "Solar panels", x_px=None, y_px=220, size_px=18,
                       colour=(255, 255, 255)) for f in clips["solar"][:12]]
    out += [placements(f, 180, 320)["fit"] for f in clips["wind"][12:]]
    write_video(tmp_path / "export.mp4", out, fps)
    m = StockMatcher({n: tmp_path / "stock" / f"{n}.mp4" for n in clips}, 180, 320)
    lab = m.label_video(tmp_path / "export.mp4")
    assert [x.label for x in lab] == ["solar"] * 12 + ["wind"] * 12
    assert {m.placement[x.src_index] for x in lab[:12]} == {"fill"}
    assert {m.placement[x.src_index] for x in lab[12:]} == {"fit"}
    assert all(abs(x.src_t_s - x.t_s) < 0.01 for x in lab)  # and the moment in the clip
