"""OCR cost and accuracy per frame size: one pass at native size (old) vs the two-pass reader (new).

New: text is located on a copy whose short side is DET_MAX_SHORT_SIDE_PX, then each located region
is detected and recognised at native size (verifiers/measure/ocr.py); frames at or under the cap
take the old path.

Renders caption frames with known text (Latin in DejaVu Sans Bold, Chinese and Japanese in Droid
Sans Fallback) over a textured background at 1080x1920, 720x1280 and 180x320, reads each with both
settings in the same run (interleaved, so load from other processes hits both alike) and prints
s/frame, the ratio new/old and the character error rate (CER, punctuation and spaces dropped) of
each against the drawn text (Japanese: the share of its readable characters missed, kanji recall
being what T13 judges: the recogniser has almost no kana). No assertions: the accuracy guarantees live in
tests/measure/test_ocr_sizes.py.

    .venv/bin/python bench/ocr_speed.py [--repeat N]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from verifiers.measure.ocr import DET_MAX_SHORT_SIDE_PX, error_rate, normalise, read_text
from verifiers.synthkit.captions import CJK_FONT, LATIN_FONT, draw_caption
from verifiers.synthkit.shortform_video import busy_background
from verifiers.tasks.shortform._shared.caption_track import lcs_len, readable, text_key

# (language, font, two caption lines). Short-form captions: one or two lines near the bottom.
SAMPLES = [
    ("latin", LATIN_FONT, ["Stir it gently until", "the sauce turns glossy"]),
    ("latin", LATIN_FONT, ["Summit day starts at", "four in the morning"]),
    ("zh", CJK_FONT, ["今天我们去西湖散步", "顺便尝尝龙井虾仁"]),
    ("zh", CJK_FONT, ["这款保温杯能保温十二小时", "现在下单立减二十元"]),
    ("ja", CJK_FONT, ["この鍋ひとつで作れます", "弱火で十分ほど煮込みます"]),
    ("ja", CJK_FONT, ["朝ごはんは五分で完成", "忙しい日にもぴったりです"]),
]

# (width, height, caption font px): 46 px is the smallest full-size caption of the short-form
# tasks (T03 zh; T13 48, T20 labels 52); smaller frames scale it down, the miniature keeps a
# readable 14 px. 1080x1920 at 32 px is below any task's size: where the cap starts to cost.
SIZES = [(1080, 1920, 46), (1080, 1920, 32), (720, 1280, 31), (180, 320, 14)]


def caption_frame(width_px: int, height_px: int, font_px: int, font, lines: list[str], seed: int) -> np.ndarray:
    return draw_caption(busy_background(width_px, height_px, seed), lines, font_px=font_px,
                        baseline_y_px=0.8 * height_px, font=font, stroke_px=max(1, font_px // 16))


def read(rgb: np.ndarray, det_max_short_px: int | None) -> tuple[str, float]:
    t0 = time.perf_counter()
    boxes = read_text(rgb, det_max_short_px=det_max_short_px)
    return "".join(b.text for b in boxes), time.perf_counter() - t0


def char_error(lang: str, hyp: str, lines: list[str]) -> float:
    """CER (letters and digits); Japanese: 1 - recall of its readable characters in order (T13)."""
    if lang == "ja":
        ref = readable("".join(lines))
        return 1 - lcs_len(ref, text_key(hyp)) / max(1, len(ref))
    return error_rate(normalise(hyp), normalise("".join(lines)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=1, help="reads of each frame per setting")
    args = ap.parse_args()
    warm = busy_background(180, 320, 0)
    for cap in (None, DET_MAX_SHORT_SIDE_PX):  # engine load (~0.5 s each) is not per-frame cost
        read(warm, cap)
    print(f"old = one pass, detector at native size; new = located at {DET_MAX_SHORT_SIDE_PX}-px short side, "
          "regions read at native size")
    print(f"{'size':>10} {'font':>5} {'lang':>6} {'old s/fr':>9} {'new s/fr':>9} {'new/old':>8} "
          f"{'old err%':>9} {'new err%':>9}")
    for w, h, font_px in SIZES:
        per_lang: dict[str, list[list[float]]] = {}
        for i, (lang, font, lines) in enumerate(SAMPLES):
            rgb = caption_frame(w, h, font_px, font, lines, seed=i)
            row = per_lang.setdefault(lang, [[], [], [], []])
            for _ in range(args.repeat):
                for k, cap in enumerate((None, DET_MAX_SHORT_SIDE_PX)):
                    text, dt_s = read(rgb, cap)
                    row[k].append(dt_s)
                    row[2 + k].append(char_error(lang, text, lines))
        all_rows = [[], [], [], []]
        for lang, row in per_lang.items():
            for k in range(4):
                all_rows[k] += row[k]
            _print_row(f"{w}x{h}", font_px, lang, row)
        _print_row(f"{w}x{h}", font_px, "all", all_rows)


def _print_row(size: str, font_px: int, lang: str, row: list[list[float]]) -> None:
    old_s, new_s = float(np.mean(row[0])), float(np.mean(row[1]))
    print(f"{size:>10} {font_px:>5} {lang:>6} {old_s:>9.3f} {new_s:>9.3f} {new_s / old_s:>8.2f} "
          f"{100 * np.mean(row[2]):>9.2f} {100 * np.mean(row[3]):>9.2f}", flush=True)


if __name__ == "__main__":
    main()
